"""The Python API, for notebooks: build a topic map from a config or from a DataFrame of
abstracts, and read a build's tables back as DataFrames.

    import pipeline
    result = pipeline.build("configs/default.yaml", overrides=["render.title=My map"])
    result.topics            # topics.parquet as a DataFrame
    result.report, result.map  # paths of the report and the map

The same stage cores as the command line run in this process, in data order. The process's
environment is left as it was: offline settings hold only while the model loads, and numba
compiles as the user has it set.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import schemas, tables, timings
from pipeline.commands import COMMANDS, FILES, build_steps, run_command
from pipeline.config import Config, load_config, parse_config
from pipeline.errors import PipelineError
from pipeline.labels import with_labels

log = logging.getLogger("pipeline")
PAPERS_FILE = "papers.parquet"  # where build(papers=...) keeps the DataFrame it was given


@dataclass(frozen=True)
class Build:
    """A build's output folder; each table is read from it when asked for."""

    output_dir: Path

    def path(self, name: str) -> Path:
        """The file of a named table or page ("documents", "topics", "report", ...)."""
        return self.output_dir / FILES[name]

    @property
    def documents(self) -> pd.DataFrame:
        return tables.read_table(self.path("documents"), schemas.DOCUMENTS)

    @property
    def rejected(self) -> pd.DataFrame:
        return tables.read_table(self.path("rejected"), schemas.REJECTED)

    @property
    def embeddings(self) -> pd.DataFrame:
        """One row per paper: doc_id and its unit embedding (a float32 array)."""
        doc_ids, vectors = tables.read_embeddings(self.path("embeddings"))
        return pd.DataFrame({"doc_id": doc_ids, "embedding": list(np.asarray(vectors))})

    @property
    def clusters(self) -> pd.DataFrame:
        return tables.read_table(self.path("clusters"), schemas.CLUSTERS)

    @property
    def topics(self) -> pd.DataFrame:
        return tables.read_table(self.path("topics"), schemas.TOPICS)

    @property
    def themes(self) -> pd.DataFrame:
        return tables.read_table(self.path("themes"), schemas.THEMES)

    @property
    def venue_topics(self) -> pd.DataFrame:
        return tables.read_table(self.path("venue_topics"), schemas.VENUE_TOPICS)

    @property
    def venue_years(self) -> pd.DataFrame:
        return tables.read_table(self.path("venue_years"), schemas.VENUE_YEARS)

    @property
    def metrics(self) -> dict:
        return tables.read_json(self.path("metrics"), "metrics")

    @property
    def papers(self) -> pd.DataFrame:
        """Every paper with its topic, theme, labels and map position."""
        merged = tables.join_papers(self.documents, self.clusters)
        return with_labels(merged, self.topics, self.themes)

    @property
    def report(self) -> Path:
        return self.path("report")

    @property
    def map(self) -> Path:
        return self.output_dir / "map.html"


def open_build(output_dir: str | Path) -> Build:
    """An existing build's folder (refused when it holds no documents table)."""
    folder = Path(output_dir)
    if not (folder / FILES["documents"]).exists():
        raise PipelineError(f"{folder}: no build here ({FILES['documents']} is missing)")
    return Build(folder)


def _resolve(
    config: Config | str | Path | None, overrides, papers: pd.DataFrame | None, output_dir
) -> Config:
    if isinstance(config, Config):
        data = config.model_dump()
    elif config is not None:
        data = load_config(config, list(overrides)).model_dump()
        overrides = ()
    elif papers is not None:
        data = {"inputs": ["(the DataFrame given)"]}
    else:
        raise PipelineError("build() needs a config, or papers (a DataFrame of abstracts)")
    if output_dir is not None:
        data["output_dir"] = str(output_dir)
    if papers is not None:
        data["inputs"] = [str(Path(data.get("output_dir", "outputs")) / PAPERS_FILE)]
    from pipeline.config import apply_overrides

    return parse_config(apply_overrides(data, list(overrides), "overrides"), "build()")


def build(
    config: Config | str | Path | None = None,
    *,
    papers: pd.DataFrame | None = None,
    output_dir: str | Path | None = None,
    overrides: list[str] | tuple[str, ...] = (),
) -> Build:
    """Run every stage and return the build.

    `config`: a Config, or the path of a YAML config. `papers`: a DataFrame with an `abstract`
    column (and optional title, venue, year, id, url, track, date), used instead of the config's
    inputs; it is saved as `<output_dir>/papers.parquet` and read like any input table.
    `output_dir` replaces the config's; `overrides` are `section.key=value` settings.
    """
    resolved = _resolve(config, overrides, papers, output_dir)
    out = Path(resolved.output_dir)
    if papers is not None:
        if not isinstance(papers, pd.DataFrame):
            raise PipelineError("papers must be a pandas DataFrame with an 'abstract' column")
        out.mkdir(parents=True, exist_ok=True)
        tables.atomic_write(out / PAPERS_FILE, lambda tmp: papers.to_parquet(tmp, index=False))
    # each stage's figures in out/.timings/ too, as the CLI's (timings.py)
    for name in build_steps(resolved):
        started = timings.begin(out, name)
        # the saved model's registry and snapshots, which csv and render read, where they are
        model = {f: out / FILES[f] for f in ("registry", "snapshots") if (out / FILES[f]).exists()}
        run_command(name, resolved, model)
        engine = resolved.engine.kind if COMMANDS[name].engine else None
        log.info(
            "build: %s done in %.1f s", name, timings.finish(out, name, started, engine)["wall_s"]
        )
    return Build(out)

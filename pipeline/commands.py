"""The table of commands: each stage's name, the config sections it reads, the files it reads
and writes, and the function that runs it. The CLI, the Python API, the parameter stamps and the
Makefile's code prerequisites are all read off this table; `run_command` is the one dispatcher.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import Config, stamp_text

# The file each named table or page has in an output folder.
FILES = {
    "documents": "documents.parquet",
    "rejected": "rejected.parquet",
    "document_shards": "documents.shards/manifest.json",  # the shards' folder, by its manifest
    "embeddings": "embeddings.parquet",
    "clusters": "clusters.parquet",
    "topics": "topics.parquet",
    "themes": "themes.parquet",
    "metrics": "metrics.json",
    "venue_topics": "venue_topics.parquet",
    "venue_years": "venue_years.parquet",
    "stability": "stability.json",
    "baseline": "baseline.json",
    "report": "index.html",
    "model": "model/papers.parquet",  # the saved topic model's folder, named by its papers
    "registry": "model/registry.parquet",  # the saved model's topic registry
    "snapshots": "model/snapshots.parquet",  # the topics' papers at the fit and the last build
    "bertopic": "bertopic/topics.json",  # the BERTopic model's folder, named by one of its files
    "topic_info": "topic_info.csv",
    "document_info": "document_info.csv",
    "rejected_csv": "rejected.csv",
    "figure": "figures/map.png",  # map.svg and map.pdf beside it
}


@dataclass(frozen=True)
class Command:
    """A stage: `pipeline.stages.<stage>.<function>(*sections, **files)`. "inputs" among the
    sections passes the config's input list as `inputs=`; `optional` files are passed only when
    given."""

    name: str
    sections: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    help: str
    function: str = "run"
    optional: tuple[str, ...] = ()
    compiles: bool = False  # runs UMAP/HDBSCAN/BERTopic: use the numba cache
    flags: tuple[tuple[str, str], ...] = ()  # (name, help) of on/off options of the run
    # runs its per-paper work on the configured engine: gets `engine=config.engine`, which is
    # not in its stamp (the engine changes where the work runs, never what it gives)
    engine: bool = False
    # the stage module under pipeline/stages/ (default: the command's name; "ingest.shards": a
    # module of the ingest stage's own)
    stage: str = ""

    @property
    def module(self) -> str:
        return f"pipeline.stages.{self.stage or self.name}"

    @property
    def files(self) -> tuple[str, ...]:
        return self.inputs + self.outputs + self.optional


COMMANDS = {
    c.name: c
    for c in (
        Command("ingest", ("ingest", "inputs"), (), ("documents", "rejected"),
                "input files -> documents + the ledger of rejected records"),
        Command("shards", ("engine",), ("documents",), ("document_shards",),
                "documents -> documents.shards/: the documents as Parquet shards of "
                "engine.shard_papers papers for the Ray workers (make all runs it with engine: "
                "ray)", stage="ingest.shards"),
        Command("embed", ("embed",), ("documents",), ("embeddings",),
                "documents -> embeddings (with engine: ray, read from the documents shards)",
                optional=("document_shards",), engine=True),
        Command("cluster", ("cluster",), ("documents", "embeddings"),
                ("clusters",), "documents + embeddings -> topic and map position per paper, "
                "and the saved model beside (model/)", compiles=True, engine=True,
                flags=(("refit", "fit a new model even where the saved one would do"),)),
        Command("label", ("label", "embed"),
                ("documents", "clusters", "embeddings"), ("topics", "themes"),
                "-> topic and theme labels, terms and representative papers", compiles=True,
                engine=True),
        Command("metrics", (), ("documents", "clusters", "topics", "themes"),
                ("metrics",), "-> metrics.json, the build's quality figures"),
        Command("compare", ("compare",),
                ("documents", "clusters", "topics", "themes"), ("venue_topics", "venue_years"),
                "-> venue_topics.parquet and venue_years.parquet, how the venues differ "
                "(in all and year by year)"),
        Command("csv", (),
                ("documents", "rejected", "clusters", "topics", "themes", "venue_topics"),
                ("topic_info", "document_info", "rejected_csv"),
                "-> topic_info.csv and document_info.csv (BERTopic's get_topic_info and "
                "get_document_info columns) and rejected.csv", optional=("registry",)),
        Command("export", (),
                ("documents", "embeddings", "clusters", "topics", "model"),
                ("bertopic",), "-> bertopic/: the build as a BERTopic model (safetensors)",
                compiles=True),
        Command("render", ("render", "compare"),
                ("documents", "embeddings", "clusters", "topics", "themes", "venue_topics",
                 "venue_years", "metrics"), ("report",),
                "-> index.html (the report) and map.html beside it",
                optional=("stability", "baseline", "registry", "snapshots")),
        Command("figure", ("figures",), ("documents", "clusters", "topics", "themes"),
                ("figure",), "-> figures/map.png, map.svg and map.pdf: the map as a still "
                "image for a paper or a talk (make figures)", stage="figures"),
        Command("stability", ("cluster", "quality"),
                ("documents", "embeddings", "clusters"), ("stability",),
                "-> stability.json: the topics' agreement across quality.seeds",
                function="run_stability", compiles=True, stage="quality"),
        Command("baseline", ("quality",), ("documents", "embeddings"),
                ("baseline",), "-> baseline.json: BERTopic's defaults on the same embeddings",
                function="run_baseline", compiles=True, stage="quality"),
    )
}  # fmt: skip
# The stages `make all` and `topicmap build` run, in data order (`build_steps`: with the
# shards command after ingest when the engine is Ray).
BUILD = ("ingest", "embed", "cluster", "label", "metrics", "compare", "csv", "export", "render")


def build_steps(config: Config) -> tuple[str, ...]:
    """The commands `make all` and `topicmap build` run for `config`, in order."""
    if config.engine.kind != "ray":
        return BUILD
    return BUILD[:1] + ("shards",) + BUILD[1:]


def default_paths(config: Config) -> dict[str, Path]:
    """Every named file in the config's output folder."""
    out = Path(config.output_dir)
    return {name: out / file for name, file in FILES.items()}


def run_command(
    name: str, config: Config, paths: dict[str, Path | None], flags: dict[str, bool] | None = None
) -> None:
    """Run one stage on `config` with the named files in `paths` (missing ones: defaults) and
    its on/off `flags` (by name)."""
    command = COMMANDS[name]
    files = {**default_paths(config), **{k: v for k, v in paths.items() if v is not None}}
    sections = [getattr(config, s) for s in command.sections if s != "inputs"]
    kwargs = {f: Path(files[f]) for f in command.inputs + command.outputs}
    kwargs.update({f: Path(paths[f]) for f in command.optional if paths.get(f) is not None})
    if "inputs" in command.sections:
        kwargs["inputs"] = list(config.inputs)
    kwargs.update({f: True for f, _ in command.flags if (flags or {}).get(f)})
    if command.engine:
        kwargs["engine"] = config.engine
    function = getattr(importlib.import_module(command.module), command.function)
    function(*sections, **kwargs)


def command_stamp(config: Config, command: Command) -> str:
    """A command's stamp: its sections, and for those reading `embed` the precision `auto`
    stands for on this machine, so that a new measurement of the modes (`make bench --sections
    modes`) that changes it reruns what it changes. Here rather than in config.py, which every
    stage imports: the encoder's code is no prerequisite of the stages that do not embed."""
    machine = None
    if "embed" in command.sections:
        from pipeline.encoder import resolve_precision

        machine = {"embed_precision": resolve_precision(config.embed)}
    return stamp_text(config, command.sections, machine)


def write_stamps(config: Config, out_dir: Path) -> list[str]:
    """Write each command's parameter stamp (`out_dir/.params/<command>.json`: the config
    sections it reads) only when its content changed, so Make sees changes; returns those."""
    changed = []
    params_dir = out_dir / ".params"
    params_dir.mkdir(parents=True, exist_ok=True)
    for command in COMMANDS.values():
        if not command.sections:
            continue
        path = params_dir / f"{command.name}.json"
        text = command_stamp(config, command)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(command.name)
    return changed

"""Running a stage, or `make`, the way the bench sections do, and reading back what it recorded.

Each runs in a process of its own, as `make` runs the stages, and its figures are read from
the records the stages write (`pipeline.timings`: `<output_dir>/.timings/<stage>.json`: wall
seconds, peak memory, the engine, and the embed stage's own figures), never from its log.
Developer code (imported by tools/bench*.py): it is not part of the installed package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pipeline import schemas, tables, timings
from pipeline.commands import COMMANDS
from pipeline.config import load_config

ROOT = Path(__file__).resolve().parents[1]


def output_dir(config: Path) -> Path:
    """The config's output folder (where its stages record their figures)."""
    return ROOT / load_config(Path(config)).output_dir  # relative: to the project, as make runs


def run_stage(stage: str, config: Path) -> dict:
    """Run one stage (`python -m pipeline STAGE`) on the config; the figures it recorded."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # Ray's workers import this checkout too
    command = [sys.executable, "-m", "pipeline", stage, "--config", str(Path(config).resolve())]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"bench: {stage} failed:\n{result.stderr[-3000:]}")
    return timings.read(output_dir(config), stage)


def run_make(config: Path, goal: str = "all") -> tuple[float, dict[str, dict]]:
    """`make GOAL CONFIG=config`: its wall seconds, and the figures of the stages it ran (by
    name, in the build's order)."""
    folder = output_dir(config) / timings.TIMINGS_DIR
    shutil.rmtree(folder, ignore_errors=True)  # the stages this make runs, alone
    start = time.perf_counter()
    result = subprocess.run(
        ["make", "--no-print-directory", goal, f"CONFIG={config}"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")},
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"bench: make {goal} failed:\n{result.stderr[-3000:]}")
    found = timings.recorded(output_dir(config))
    order = {name: i for i, name in enumerate(COMMANDS)}  # data order: shards after ingest
    return seconds, dict(sorted(found.items(), key=lambda item: order.get(item[0], len(order))))


def figure(record: dict, name: str, stage: str) -> float:
    """One figure of a stage's record; one line when the stage recorded none by that name."""
    if record.get(name) is None:
        sys.exit(f"bench: the {stage} stage recorded no '{name}' (pipeline/timings.py)")
    return record[name]


def write_config(path: Path, base: dict, inputs: list[str], out: Path, cache: Path) -> Path:
    """A bench's config: `base` with these inputs, output folder and embeddings cache."""
    import yaml

    data = dict(base, inputs=inputs, output_dir=str(out))
    data["embed"] = dict(base.get("embed") or {}, cache_dir=str(cache), progress_bar=False)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def write_tables(folder: Path, documents, source: Path, how: str, vectors=None) -> None:
    """A documents table a bench made from the documents table `source` (`how`: in words), and
    given `vectors` its embeddings, written into `folder` by the pipeline's own writers with a
    lineage as a stage's: the documents' records `how` and `source`'s, the embeddings' the
    documents' (so the stages after accept them as one build)."""
    made = {"grown_from": tables.read_lineage(source, "documents").fingerprint}
    lineage = tables.make_lineage(f"bench: {how}", made)
    tables.write_table(documents, folder / "documents.parquet", schemas.DOCUMENTS, lineage)
    if vectors is not None:
        embedded = tables.stage_lineage(
            f"bench: embeddings for {how}", documents=folder / "documents.parquet"
        )
        doc_ids = documents["doc_id"].tolist()
        tables.write_embeddings(doc_ids, vectors, folder / "embeddings.parquet", embedded)

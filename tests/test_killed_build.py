"""A build killed mid-stage leaves only whole outputs, and a rerun equals an uninterrupted
build."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, page_text, run_make, write_config

from pipeline import schemas, tables
from pipeline.config import ClusterConfig

# ---------------------------------------------------------------- a killed build, rerun

STAGE_FILES = ["documents.parquet", "embeddings.parquet", "clusters.parquet", "topics.parquet"]


def _make_killed_at(stage: str, config: Path, timeout: float = 600) -> None:
    """Start `make all` and SIGKILL its whole process group while `stage` runs: at the stage's
    first output (a progress bar, a log line) or 3 s after Make starts it, whichever is first."""
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "all", f"CONFIG={config}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,  # universal newlines: a progress bar's "\r" ends a line too
        start_new_session=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    seen: list[str] = []
    started = None
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and not (started and time.monotonic() > started + 3):
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                if proc.poll() is not None and lines.empty():
                    pytest.fail(f"make ended before {stage} was killed:\n" + "".join(seen[-20:]))
                continue
            seen.append(line)
            if started:
                break  # the stage's first output: it is mid-way
            if f"-m pipeline {stage} " in line:
                started = time.monotonic()
        assert started, "".join(seen[-20:])
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _assert_only_complete_outputs(out: Path, absent: str) -> None:
    """Every stage file present is a whole Parquet file from this build; `absent` never began."""
    present = {name.split(".")[0]: out / name for name in STAGE_FILES if (out / name).exists()}
    for path in present.values():
        pq.read_table(path)  # a torn file has no footer and fails here
        assert tables.read_lineage(path) is not None
    tables.stage_lineage(ClusterConfig(), **present)  # and they belong together
    assert not (out / absent).exists()


@pytest.mark.slow
def test_build_killed_mid_stage_then_rerun_equals_an_uninterrupted_build(bundled_build, tmp_path):
    out = tmp_path / "out"
    config = write_config(tmp_path / "bundled.yaml", [str(ROOT / "data/raw/*.txt")], out)

    _make_killed_at("embed", config)
    assert (out / "documents.parquet").exists()
    _assert_only_complete_outputs(out, absent="clusters.parquet")

    _make_killed_at("cluster", config)
    assert (out / "embeddings.parquet").exists()
    _assert_only_complete_outputs(out, absent="topics.parquet")
    assert run_make("-q", "all", f"CONFIG={config}").returncode != 0  # known to be incomplete

    result = run_make("all", f"CONFIG={config}")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert not list(out.glob(".*.tmp")), "temporary files left behind"
    for name, schema in [
        ("documents.parquet", schemas.DOCUMENTS),
        ("clusters.parquet", schemas.CLUSTERS),
        ("topics.parquet", schemas.TOPICS),
    ]:
        pd.testing.assert_frame_equal(
            tables.read_table(out / name, schema), tables.read_table(bundled_build / name, schema)
        )
    ids, vectors = tables.read_embeddings(out / "embeddings.parquet")
    ids_0, vectors_0 = tables.read_embeddings(bundled_build / "embeddings.parquet")
    assert ids == ids_0 and np.array_equal(vectors, vectors_0)
    for name in STAGE_FILES:
        assert tables.read_lineage(out / name) == tables.read_lineage(bundled_build / name)
    assert page_text(out / "index.html") == page_text(bundled_build / "index.html")

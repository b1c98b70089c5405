"""A build killed mid-stage leaves only whole outputs, and a rerun equals an uninterrupted
build; a stage killed (SIGKILL) or interrupted (Ctrl-C) half-way through writing an output
leaves the previous output as it was; Ctrl-C exits 130 with one line."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from pipeline import schemas, tables
from pipeline.config import ClusterConfig
from tests.support.paths import ROOT
from tests.support.runs import MAKE_ENV, bundled_config, page_text, run_make

# ---------------------------------------------------------------- a killed build, rerun

STAGE_FILES = ["documents.parquet", "embeddings.parquet", "clusters.parquet", "topics.parquet"]


def _make_killed_at(stage: str, config: Path, timeout: float = 600) -> None:
    """Start `make all` and SIGKILL its whole process group while `stage` runs: at the stage's
    first output (a progress bar, a log line) or 3 s after Make starts it, whichever is first."""
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "all", f"CONFIG={config}"],
        cwd=ROOT,
        env=MAKE_ENV,
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
    config = bundled_config(tmp_path / "bundled.yaml", bundled_build, out)

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


# ---------------------------------------------------------------- killed while writing

HOOKS = ROOT / "tests" / "hooks"  # its sitecustomize pauses a write half-way (see there)


def _pausing_env(tmp_path: Path, name: str) -> tuple[dict, Path]:
    marker = tmp_path / "paused"
    env = dict(MAKE_ENV, PYTHONPATH=f"{HOOKS}{os.pathsep}{ROOT}")
    env.update(TOPICMAP_TEST_PAUSE_AT=name, TOPICMAP_TEST_PAUSED=str(marker))
    return env, marker


def _default_sigint() -> None:
    # a shell that runs the suite in the background ignores SIGINT, and children inherit that:
    # the stage must see Ctrl-C as a terminal would deliver it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_paused(command: list[str], env: dict, marker: Path) -> subprocess.Popen:
    """Start `command` and wait until it is half-way through the paused write."""
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )
    deadline = time.monotonic() + 300
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail("never reached the write:\n" + proc.communicate()[1][-3000:])
        time.sleep(0.1)
    return proc


def _copy_of_build(bundled_build: Path, tmp_path: Path, setting: str) -> tuple[Path, Path]:
    """A copy of the bundled build (mtimes kept) and a config whose `setting` makes it stale."""
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)
    return out, bundled_config(tmp_path / "c.yaml", bundled_build, out, setting)


@pytest.mark.slow
def test_sigkill_mid_write_leaves_the_previous_output_whole(bundled_build, tmp_path):
    """`make all` after a compare setting changed, killed (SIGKILL, the whole process group)
    while venue_topics.parquet is half-written: the previous file is untouched, only a
    temporary file is torn, and the next `make all` finishes the job and sweeps it up."""
    out, config = _copy_of_build(bundled_build, tmp_path, "compare:\n  z_threshold: 2.5")
    before = {name: (out / name).read_bytes() for name in ("venue_topics.parquet", "index.html")}
    env, marker = _pausing_env(tmp_path, "venue_topics.parquet")
    proc = _start_paused(["make", "--no-print-directory", "all", f"CONFIG={config}"], env, marker)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    torn = Path(marker.read_text(encoding="utf-8"))
    assert torn.parent == out and torn.name.endswith(".tmp") and torn.exists()
    with pytest.raises(Exception):  # noqa: B017 - the temporary file is a torn Parquet file
        pq.read_table(torn)
    assert {name: (out / name).read_bytes() for name in before} == before
    assert run_make("-q", "all", f"CONFIG={config}").returncode != 0  # still to be done

    result = run_make("all", f"CONFIG={config}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert not list(out.glob(".*.tmp")), "temporary files left behind"
    venue_topics = tables.read_table(out / "venue_topics.parquet", schemas.VENUE_TOPICS)
    assert set(venue_topics["z_threshold"]) == {2.5}
    assert "|z| ≥ 2.5" in (out / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_ctrl_c_mid_write_exits_130_with_one_line_and_keeps_the_previous_output(
    bundled_build, tmp_path
):
    """Ctrl-C (SIGINT) while a stage writes its output: `error: interrupted`, exit 130, the
    previous output whole and no temporary file left; under Make too."""
    out, config = _copy_of_build(bundled_build, tmp_path, "compare:\n  z_threshold: 2.5")
    previous = (out / "venue_topics.parquet").read_bytes()
    env, marker = _pausing_env(tmp_path, "venue_topics.parquet")
    stage = [sys.executable, "-m", "pipeline", "compare", "--config", str(config)]
    proc = _start_paused(stage, env, marker)
    os.kill(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert errors == ["error: interrupted"] and "Traceback" not in stderr, stderr
    assert (out / "venue_topics.parquet").read_bytes() == previous
    assert not list(out.glob(".*.tmp"))

    marker.unlink()
    proc = _start_paused(["make", "--no-print-directory", "all", f"CONFIG={config}"], env, marker)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal reaches the whole group
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "error: interrupted" in stderr, stderr
    assert (out / "venue_topics.parquet").read_bytes() == previous  # Make deleted nothing
    assert not list(out.glob(".*.tmp"))

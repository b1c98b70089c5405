"""The progress helper: bars on a terminal, nothing when output is piped (a log, CI), and the
stages' output free of bars and of UMAP's n_jobs warning when piped."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
import warnings

import pytest

from pipeline import progress
from tests.support.paths import ROOT

DEMO = (
    "from pipeline import progress\n"
    "for _ in progress.bar(range(40), desc='demo-bar'): pass\n"
    "with progress.task('demo-task'): pass\n"
)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_enabled_only_on_a_terminal():
    assert progress.enabled(Terminal())
    assert not progress.enabled(io.StringIO())
    with open(os.devnull, "w") as closed:
        pass
    assert not progress.enabled(closed)  # isatty raises on a closed file
    assert not progress.enabled(object())  # no isatty at all


def test_bars_write_nothing_when_stderr_is_not_a_terminal(capsys):
    assert list(progress.bar(range(5), desc="quiet")) == list(range(5))
    with progress.task("quiet task"):
        pass
    assert progress.umap_kwds("UMAP 5-D")["disable"] is True
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_bars_show_on_a_terminal(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert list(progress.bar(range(3), desc="shown")) == [0, 1, 2]
    with progress.task("a step"):
        pass
    assert "shown" in terminal.getvalue() and "a step" in terminal.getvalue()
    assert progress.umap_kwds("UMAP 2-D") == {
        "desc": "UMAP 2-D",
        "disable": False,
        "leave": False,
        "dynamic_ncols": True,
    }


def _run_demo(stderr) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", DEMO],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=env,
        timeout=60,
    )


def test_a_real_process_shows_bars_on_a_pty_and_none_when_piped():
    piped = _run_demo(subprocess.PIPE)
    assert piped.returncode == 0 and piped.stderr == b""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    try:
        shown = _run_demo(follower)
        os.close(follower)
        follower = None
        written = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: all read
                break
            if not chunk:
                break
            written += chunk
    finally:
        if follower is not None:
            os.close(follower)
        os.close(leader)
    assert shown.returncode == 0
    assert b"demo-bar" in written and b"demo-task" in written and b"\r" in written


def test_model_loading_puts_transformers_bar_setting_back():
    from transformers.utils import logging as hf_logging

    hf_logging.enable_progress_bar()
    with progress.model_loading():
        assert not hf_logging.is_progress_bar_enabled()  # stderr is captured: not a terminal
    assert hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    with progress.model_loading():
        pass
    assert not hf_logging.is_progress_bar_enabled()
    hf_logging.enable_progress_bar()


def test_logs_above_bars_is_a_no_op_when_piped():
    import logging

    handlers = list(logging.getLogger().handlers)
    with progress.logs_above_bars():
        assert logging.getLogger().handlers == handlers


@pytest.mark.slow
def test_seeded_umap_prints_no_n_jobs_warning():
    import numpy as np

    from pipeline.stages.cluster.fit import _umap

    vectors = np.random.default_rng(0).normal(size=(60, 8)).astype(np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _umap(2, 10, 0.1, 42, len(vectors), 20).fit_transform(vectors)
    assert not [w for w in caught if "n_jobs" in str(w.message)]


@pytest.mark.slow
def test_the_bundled_build_piped_has_no_bars_and_no_n_jobs_warning(bundled_build):
    log = (bundled_build.parent / "make.log").read_text(encoding="utf-8")
    assert "stage cluster:" in log and "stage label:" in log  # the stages ran and logged
    assert "\r" not in log  # no bar redraws
    for bar in ("Epochs completed", "UMAP 5-D", "Batches", "Loading weights", "border rounds"):
        assert bar not in log
    assert "n_jobs value" not in log

"""Configs a test writes, and the ways a test runs the project: Make, the CLI in this process or
in a new one, and a tool of tools/."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

FIT_NOTE = re.compile(r'<p class="note" id="fit-note">.*?</p>', flags=re.S)

# A Make started by a test is a user's own, not a sub-make of `make test`: without the outer
# Make's job-server flags (which it could not use, and would warn about).
MAKE_ENV = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def load_tool(name: str):
    """A module of tools/ (developer code, not the package), imported from its file; tools/ goes
    on sys.path first so that it imports its sibling sections as bench.py does."""
    if str(ROOT / "tools") not in sys.path:
        sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page_text(path: Path) -> str:
    """A page's text without the line saying when the topics were fitted (the one thing two
    builds of the same inputs do not share)."""
    return FIT_NOTE.sub("", path.read_text(encoding="utf-8"))


def write_config(path: Path, inputs: list[str], output_dir: Path, extra: str = "") -> Path:
    lines = ["inputs:"] + [f"  - {p}" for p in inputs] + [f"output_dir: {output_dir}", extra]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def bundled_config(path: Path, bundled: Path, output_dir: Path, extra: str = "") -> Path:
    """A config of the bundled corpus with the settings of the bundled build (folder `bundled`),
    its embeddings cache included, writing to `output_dir`: a copy of that build there is up
    to date, and `extra` settings change only their sections."""
    cache = f"embed:\n  cache_dir: {bundled.parent / 'embeddings-cache'}"
    inputs = [str(ROOT / "data/raw/*.txt")]
    return write_config(path, inputs, output_dir, f"{cache}\n{extra}")


def run_make(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run the project's Makefile as a user does (under `make test` the venv already exists)."""
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        env=MAKE_ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_main(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`python -m pipeline ...` in this process (its `main`, as the console script calls it),
    in `cwd`: the exit code and what it printed, without a new interpreter's start-up."""
    from pipeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["main", *args], code, out.getvalue(), err.getvalue())


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run `python -m pipeline ...` in a subprocess with this interpreter."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )

"""Shared fixtures: the project root, a real build of the bundled corpus, and a browser."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
CHROMIUM = "/usr/bin/chromium"


FIT_NOTE = re.compile(r'<p class="note" id="fit-note">.*?</p>', flags=re.S)


def page_text(path: Path) -> str:
    """A page's text without the line saying when the topics were fitted (the one thing two
    builds of the same inputs do not share)."""
    return FIT_NOTE.sub("", path.read_text(encoding="utf-8"))


def write_config(path: Path, inputs: list[str], output_dir: Path, extra: str = "") -> Path:
    lines = ["inputs:"] + [f"  - {p}" for p in inputs] + [f"output_dir: {output_dir}", extra]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_make(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run the project's Makefile as a user does (under `make test` the venv already exists)."""
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


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


@pytest.fixture(scope="session")
def bundled_build(tmp_path_factory) -> Path:
    """`make all` on the 76 bundled abstracts with the real model, UMAP, HDBSCAN and BERTopic.

    Returns the output folder. Built once per test session; several tests read it.
    """
    work = tmp_path_factory.mktemp("bundled")
    config = write_config(work / "bundled.yaml", [str(ROOT / "data/raw/*.txt")], work / "out")
    result = run_make("all", f"CONFIG={config}")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return work / "out"


@pytest.fixture(scope="session")
def browser():
    """Headless Debian chromium driven by Playwright (not Playwright's own browser download)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
            ],
        )
        yield instance
        instance.close()

"""Shared fixtures: a real build of the bundled corpus, and a browser; and the marks that make
`-m "not slow and not browser"` (`make test-fast`) a fast subset. Helpers are in tests/support/."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from pipeline import numba_cache
from tests.support.paths import ROOT
from tests.support.runs import bundled_config, run_make

CHROMIUM = "/usr/bin/chromium"

# UMAP's numba code compiled once into the project's cache (as the CLI does), not in every test
# session: a warm cache saves 15-40 s of compiling per session on 2 cores.
numba_cache.enable(ROOT / ".cache" / "numba")

# What a test not marked slow may not do: each of these takes seconds (and a build minutes).
HEAVY = {
    ("pipeline.stages.cluster.fit", "_umap"): "fits UMAP",
    ("pipeline.stages.quality", "bertopic_defaults"): "fits BERTopic with UMAP",
    ("pipeline.encoder", "load_encoder"): "loads the embedding model",
}


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(config, items):
    """A test that needs the bundled build must be marked slow, one that drives Chromium
    browser: otherwise `-m "not slow and not browser"` would start a build or a browser."""
    wrong = []
    for item in items:
        marks = {mark.name for mark in item.iter_markers()}
        fixtures = set(getattr(item, "fixturenames", ()))
        if "bundled_build" in fixtures and "slow" not in marks:
            wrong.append(f"{item.nodeid} uses bundled_build (a full build): mark it slow")
        if "browser" in fixtures and "browser" not in marks:
            wrong.append(f"{item.nodeid} drives Chromium: mark it browser")
    if wrong:
        raise pytest.UsageError("\n".join(wrong))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A test not marked slow fails if it (or a fixture it sets up) fits UMAP or loads the
    model: mark it slow."""
    if item.get_closest_marker("slow"):
        return (yield)
    with pytest.MonkeyPatch.context() as patch:
        for (module, name), what in HEAVY.items():

            def refuse(*args, _what=what, **kwargs):
                pytest.fail(f"{item.nodeid} {_what}: mark it slow", pytrace=False)

            patch.setattr(importlib.import_module(module), name, refuse)
        return (yield)


@pytest.fixture(scope="session")
def bundled_build(tmp_path_factory) -> Path:
    """`make all` on the 76 bundled abstracts with the real model, UMAP, HDBSCAN and BERTopic.

    Returns the output folder (what make printed, piped, is `../make.log`). Built once per test
    session; several tests read it. The build
    has an embeddings cache of its own, empty, so the model embeds every paper in every session
    (the project's .cache/embeddings, filled by `make all`, would skip the code under test).
    """
    work = tmp_path_factory.mktemp("bundled")
    config = bundled_config(work / "bundled.yaml", work / "out", work / "out")
    result = run_make("all", f"CONFIG={config}")
    (work / "make.log").write_text(result.stdout + result.stderr, encoding="utf-8")  # piped
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "embedded 76 new papers (0 from the cache)" in result.stderr, result.stderr[-3000:]
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


@pytest.fixture
def open_offline(browser):
    """A function that opens a page from disk in a new page that refuses every request outside
    the page's folder (browser_site.offline_pages)."""
    from tests.support.browser_site import offline_pages

    with offline_pages(browser) as open_page:
        yield open_page

"""The report page in headless Chromium: offline, error-free, all papers drawn, no injection."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import render
from pipeline.config import RenderConfig

pytestmark = pytest.mark.browser

HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1">'
HOSTILE_ABSTRACT = (
    "We study robust parsing of untrusted text. </script><script>window.__pwned=1</script> "
    "The rest of the abstract follows here."
)
PLOT_READY = """() => {
    const gd = document.getElementById('topic-map');
    return !!(gd && gd._fullLayout && gd.querySelectorAll('.scatterlayer .point').length > 0
        && document.querySelector('#venue-chart .barlayer'));
}"""


@dataclass
class OfflinePage:
    page: object
    allowed_prefix: str
    blocked: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture
def open_offline(browser):
    """Open a local HTML file with every request outside its folder aborted and recorded."""
    contexts = []

    def _open(html_path: Path) -> OfflinePage:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        contexts.append(context)
        state = OfflinePage(page=context.new_page(), allowed_prefix=html_path.parent.as_uri() + "/")

        def route(r):
            url = r.request.url
            if url.startswith(state.allowed_prefix):
                r.continue_()
            else:
                state.blocked.append(url)
                r.abort()

        context.route("**/*", route)
        page = state.page
        page.on("request", lambda req: state.requested.append(req.url))
        page.on(
            "console",
            lambda msg: (
                state.errors.append(f"console: {msg.text}") if msg.type == "error" else None
            ),
        )
        page.on("pageerror", lambda exc: state.errors.append(f"pageerror: {exc}"))
        page.goto(html_path.as_uri(), wait_until="load")
        page.wait_for_function(PLOT_READY, timeout=30_000)
        return state

    yield _open
    for context in contexts:
        context.close()


def _outside(state: OfflinePage) -> list[str]:
    return [u for u in state.requested if not u.startswith(state.allowed_prefix)]


def test_bundled_report_is_offline_complete_and_error_free(bundled_build: Path, open_offline):
    index = bundled_build / "index.html"
    assert (bundled_build / "plotly.min.js").is_file()
    state = open_offline(index)
    page = state.page
    page.wait_for_timeout(500)  # let late requests (fonts, maps, mathjax) show themselves

    assert state.blocked == [], f"page tried to leave its folder: {state.blocked}"
    assert _outside(state) == []
    assert state.errors == []
    assert index.as_uri() in state.requested
    assert (bundled_build / "plotly.min.js").as_uri() in state.requested

    points = page.evaluate("document.querySelectorAll('#topic-map .scatterlayer .point').length")
    assert points == 76
    traced = page.evaluate(
        "document.getElementById('topic-map').data.reduce((n, t) => n + t.x.length, 0)"
    )
    assert traced == 76

    summary = page.inner_text("#summary")
    assert summary.startswith("76 papers")
    assert re.search(r"\bICML 57\b", summary), summary
    assert re.search(r"\bICLR 19\b", summary), summary
    assert page.locator("#topics tbody tr").count() >= 2

    shot = bundled_build / "index.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    shutil.copyfile(shot, "/tmp/index_screenshot.png")


def test_bundled_panels_draw_the_same_coordinates_in_the_same_place(
    bundled_build: Path, open_offline
):
    page = open_offline(bundled_build / "index.html").page
    ranges = page.evaluate(
        """() => {
            const layout = document.getElementById('topic-map')._fullLayout;
            return Object.keys(layout).filter(k => /^[xy]axis\\d*$/.test(k)).sort()
                .map(k => [k, layout[k].range]);
        }"""
    )
    by_axis = {"x": [], "y": []}
    for name, axis_range in ranges:
        by_axis[name[0]].append([round(v, 6) for v in axis_range])
    assert len(by_axis["x"]) == 2
    for axis, found in by_axis.items():
        assert all(r == found[0] for r in found), f"{axis} ranges differ across panels: {found}"


def _hostile_frames():
    n = 4
    documents = pd.DataFrame(
        {
            "doc_id": ["h0", "h1", "h2", "h3"],
            "venue": ["ICML", "ICML", "ICLR", "ICLR"],
            "year": [2025] * n,
            "title": pd.Series([HOSTILE_TITLE, None, "A plain title", None], dtype=object),
            "abstract": [
                "Robust parsing of untrusted markup in abstracts.",
                HOSTILE_ABSTRACT,
                "Graph neural networks with message passing.",
                "Message passing on graphs, once more.",
            ],
            "source": ["hostile.txt"] * n,
            "source_id": pd.Series([None] * n, dtype=object),
            "url": pd.Series([None] * n, dtype=object),
        }
    )
    clusters = pd.DataFrame(
        {
            "doc_id": ["h0", "h1", "h2", "h3"],
            "topic": np.array([0, 0, 1, 1], dtype=np.int32),
            "x": np.array([0.0, 6.0, 3.0, 4.0], dtype=np.float32),
            "y": np.array([0.0, 6.0, 3.0, 1.0], dtype=np.float32),
        }
    )
    topics = pd.DataFrame(
        {
            "topic": np.array([0, 1], dtype=np.int32),
            "label": ["parsing, untrusted", "message passing, graph"],
            "terms": [["parsing", "untrusted"], ["message passing", "graph"]],
            "size": np.array([2, 2], dtype=np.int32),
            "count_ICLR": np.array([0, 2], dtype=np.int32),
            "count_ICML": np.array([2, 0], dtype=np.int32),
        }
    )
    return documents, clusters, topics


@pytest.fixture
def hostile_page(tmp_path: Path, open_offline) -> OfflinePage:
    from plotly.offline import get_plotlyjs

    page_html = render.render_page(*_hostile_frames(), RenderConfig())
    (tmp_path / "index.html").write_text(page_html, encoding="utf-8")
    (tmp_path / render.PLOTLY_JS).write_text(get_plotlyjs(), encoding="utf-8")
    return open_offline(tmp_path / "index.html")


def _hover_paper(page, needle: str) -> str:
    """Move the mouse onto the point whose hover text contains `needle`; return the hover text."""
    position = page.evaluate(
        """(needle) => {
            const gd = document.getElementById('topic-map');
            for (const trace of gd._fullData) {
                const i = trace.customdata.findIndex(c => String(c[0]).includes(needle));
                if (i < 0) continue;
                const xa = gd._fullLayout[trace.xaxis.replace('x', 'xaxis')];
                const ya = gd._fullLayout[trace.yaxis.replace('y', 'yaxis')];
                const box = gd.getBoundingClientRect();
                return {x: box.left + xa._offset + xa.l2p(trace.x[i]),
                        y: box.top + ya._offset + ya.l2p(trace.y[i])};
            }
            return null;
        }""",
        needle,
    )
    assert position is not None, f"no point with {needle!r} in its hover text"
    page.mouse.move(position["x"] - 20, position["y"] - 20)
    page.mouse.move(position["x"], position["y"], steps=5)
    page.wait_for_selector("#topic-map .hoverlayer .hovertext", timeout=5_000)
    return page.text_content("#topic-map .hoverlayer")


def test_hostile_text_never_runs(hostile_page: OfflinePage):
    page = hostile_page.page
    hover = _hover_paper(page, "onerror")
    page.wait_for_timeout(300)

    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert hostile_page.errors == []
    assert hostile_page.blocked == []
    # only the page and plotly.min.js were loaded: no injected <img src=x> fetched anything
    folder = hostile_page.allowed_prefix
    assert set(hostile_page.requested) == {folder + "index.html", folder + render.PLOTLY_JS}

    # the title is shown as characters, not parsed as markup
    assert "<img src=x onerror=" in hover
    data = page.evaluate(
        "document.getElementById('topic-map').data.flatMap(t => t.customdata.map(c => c[0]))"
    )
    assert any("&lt;img src=x onerror=" in text for text in data)
    assert any("&lt;/script&gt;&lt;script&gt;window.__pwned=1" in text for text in data)

    hover = _hover_paper(page, "untrusted text.")
    assert "</script><script>window.__pwned=1</script>" in hover
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_hostile_title_is_shown_verbatim_in_hover(hostile_page: OfflinePage):
    hover = _hover_paper(hostile_page.page, "onerror")
    assert HOSTILE_TITLE in hover

"""The report and the map in headless Chromium: offline, error-free, every paper drawn, search,
click-through to similar papers, topic isolation, no injection; screenshots of each page type."""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from synthetic_corpus import corpus

from pipeline import render, tables
from pipeline.config import RenderConfig

pytestmark = pytest.mark.browser

HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1">'
HOSTILE_ABSTRACT = (
    "We study robust parsing of untrusted text. </script><script>window.__pwned=1</script> "
    "The rest of the abstract follows here."
)
REPORT_READY = "() => !!document.querySelector('#venue-chart .scatterlayer .point')"
MAP_READY = "() => document.getElementById('topic-map')?.dataset.ready === 'true'"
# points of the map's paper traces (uid papers-<panel>); context dots and focus rings excluded
PAPER_POINTS = "document.querySelectorAll('#topic-map [class*=\"tracepapers-\"] .point').length"
PAPERS_IN_DATA = """document.getElementById('topic-map').data
    .filter(t => t.uid.startsWith('papers-')).reduce((n, t) => n + t.x.length, 0)"""


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

    def _open(html_path: Path, timeout: int = 30_000) -> OfflinePage:
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
        ready = MAP_READY if html_path.name == render.MAP_PAGE else REPORT_READY
        page.wait_for_function(ready, timeout=timeout)
        return state

    yield _open
    for context in contexts:
        context.close()


def _outside(state: OfflinePage) -> list[str]:
    return [u for u in state.requested if not u.startswith(state.allowed_prefix)]


def _screenshot(page, folder: Path, name: str, full_page: bool = False) -> Path:
    """Save a screenshot into the output folder and a copy to /tmp/issue4_<name>.png."""
    shot = folder / f"{name}.png"
    if full_page:
        page.evaluate("window.scrollTo(0, 0)")  # sticky table headers follow the scroll
    page.screenshot(path=str(shot), full_page=full_page)
    assert shot.stat().st_size > 10_000
    shutil.copyfile(shot, f"/tmp/issue4_{name}.png")
    return shot


def _local_files(state: OfflinePage) -> set[str]:
    assert all(u.startswith(state.allowed_prefix) for u in state.requested), state.requested
    return {u.removeprefix(state.allowed_prefix).split("#")[0] for u in state.requested}


def test_bundled_report_is_offline_complete_and_error_free(bundled_build: Path, open_offline):
    index = bundled_build / "index.html"
    assert (bundled_build / "plotly.min.js").is_file()
    state = open_offline(index)
    page = state.page
    page.wait_for_timeout(500)  # let late requests (fonts, maps, mathjax) show themselves

    assert state.blocked == [], f"page tried to leave its folder: {state.blocked}"
    assert _outside(state) == []
    assert state.errors == []
    assert _local_files(state) == {"index.html", "plotly.min.js", "style.css", "report.js"}

    summary = page.inner_text("#summary")
    assert summary.startswith("76 papers")
    assert re.search(r"\bICML 57\b", summary), summary
    assert re.search(r"\bICLR 19\b", summary), summary
    assert page.locator("#venues tbody tr").count() == 2
    topics = bundled_build / "topics.parquet"
    n_topics = len(tables.read_table(topics, tables.TOPICS))
    assert page.locator("#topics tbody tr").count() == n_topics
    # one chart dot per assigned topic and venue
    dots = page.evaluate(
        "document.querySelectorAll('#venue-chart .scatterlayer .trace .point').length"
    )
    assert dots == 2 * page.locator("#topics tbody tr:not(.pinned)").count()

    # sorting by papers puts the largest topic first and keeps the unassigned row last
    headers = [h.strip(" ↕↑↓") for h in page.locator("#topics thead th").all_inner_texts()]
    column = headers.index("Papers") + 1
    page.click(f"#topics thead th:nth-child({column})")
    cells = page.locator(f"#topics tbody tr:not(.pinned) td:nth-child({column})")
    sizes = [int(s.replace(",", "")) for s in cells.all_inner_texts()]
    assert sizes == sorted(sizes, reverse=True)
    assert page.get_attribute(f"#topics thead th:nth-child({column})", "aria-sort") == "descending"
    if page.locator("#topics tr.unassigned").count():
        assert page.locator("#topics tbody tr").last.get_attribute("class") == "unassigned pinned"
    assert page.get_attribute("#link-venues", "href") == "map.html"
    _screenshot(page, bundled_build, "index", full_page=True)


def _documents(folder: Path) -> pd.DataFrame:
    return tables.read_table(folder / "documents.parquet", tables.DOCUMENTS)


def _point_position(page, index: int) -> dict:
    """Where paper `index` (its position in the page's data) is drawn, in page pixels."""
    return page.evaluate(
        """(index) => {
            const gd = document.getElementById('topic-map');
            for (const trace of gd._fullData) {
                if (!trace.uid.startsWith('papers-')) continue;
                const i = trace.customdata.indexOf(index);
                if (i < 0) continue;
                const xa = gd._fullLayout[trace.xaxis.replace('x', 'xaxis')];
                const ya = gd._fullLayout[trace.yaxis.replace('y', 'yaxis')];
                const box = gd.getBoundingClientRect();
                return {x: box.left + xa._offset + xa.l2p(trace.x[i]),
                        y: box.top + ya._offset + ya.l2p(trace.y[i])};
            }
            return null;
        }""",
        index,
    )


def _paper_index(page, doc_id: str) -> int:
    return page.evaluate("(id) => window.topicMap.indexById.get(id)", doc_id)


def _hover(page, index: int) -> str:
    position = _point_position(page, index)
    assert position is not None, f"paper {index} is not drawn"
    page.mouse.move(position["x"] - 25, position["y"] - 25)
    page.mouse.move(position["x"], position["y"], steps=5)
    page.wait_for_selector("#tooltip:not([hidden])", timeout=5_000)
    return page.text_content("#tooltip")


def _click(page, index: int) -> None:
    _hover(page, index)
    position = _point_position(page, index)
    page.mouse.click(position["x"], position["y"])
    page.wait_for_selector("#paper-detail:not([hidden])", timeout=5_000)


def _search(page, text: str) -> int:
    """Type into the search box; return the match count the page reports."""
    page.fill("#search", text)
    # the box waits 150 ms for typing to pause, then filters and redraws
    page.wait_for_function("(q) => window.topicMap.state.query === q", arg=text.strip().lower())
    page.wait_for_timeout(200)
    return int(page.get_attribute("#match-count", "data-count"))


def test_bundled_map_draws_every_paper_offline_and_searches(bundled_build: Path, open_offline):
    state = open_offline(bundled_build / "map.html")
    page = state.page
    page.wait_for_timeout(500)
    assert state.blocked == [] and _outside(state) == [] and state.errors == []
    assert _local_files(state) == {"map.html", "plotly.min.js", "style.css", "map.js"}

    assert page.evaluate(PAPER_POINTS) == 76
    assert page.evaluate(PAPERS_IN_DATA) == 76
    assert page.inner_text("#match-count") == "76 papers"
    titles = page.evaluate(
        "[...document.querySelectorAll('#topic-map .annotation-text')].map(a => a.textContent)"
    )
    assert "ICLR  19 papers" in titles and "ICML  57 papers" in titles
    _screenshot(page, bundled_build, "map")

    # search: the matching papers stay drawn in colour and are counted, case-insensitively
    documents = _documents(bundled_build)
    text = (documents["title"].fillna("") + "\n" + documents["abstract"]).str.lower()
    for needle in ("Graph", "federated"):
        expected = int(text.str.contains(needle.lower(), regex=False).sum())
        assert 0 < expected < 76, needle
        assert _search(page, needle) == expected
        assert page.evaluate(PAPER_POINTS) == expected
        assert page.inner_text("#match-count") == f"{expected} of 76 papers match"
    _screenshot(page, bundled_build, "map_search")
    assert _search(page, "no paper says this") == 0
    assert page.evaluate(PAPER_POINTS) == 0
    assert _search(page, "") == 76
    assert page.evaluate(PAPER_POINTS) == 76

    # the combined view draws every paper once, in one panel
    page.click("#view-switch button[data-view=combined]")
    page.wait_for_timeout(300)
    assert page.evaluate(PAPER_POINTS) == 76
    assert page.evaluate("document.getElementById('topic-map')._fullLayout.xaxis2") is None
    assert state.errors == []


def test_bundled_map_click_shows_abstract_and_five_similar_papers(
    bundled_build: Path, open_offline
):
    state = open_offline(bundled_build / "map.html")
    page = state.page
    documents = _documents(bundled_build).set_index("doc_id")
    first = documents.index[0]
    index = _paper_index(page, first)
    hover = _hover(page, index)
    assert documents.loc[first, "venue"] in hover
    _click(page, index)

    assert page.get_attribute("#paper-detail", "data-paper") == first
    assert page.text_content("#paper-abstract") == documents.loc[first, "abstract"]
    neighbours = page.locator("#paper-neighbours button")
    assert neighbours.count() == 5
    assert page.evaluate("window.topicMap.state.selected") == index
    _screenshot(page, bundled_build, "map_panel")

    # a neighbour re-focuses the panel on that paper and rings it on the map
    target = int(neighbours.nth(2).get_attribute("data-index"))
    neighbours.nth(2).click()
    page.wait_for_timeout(300)
    target_id = page.evaluate("(i) => window.topicMap.state.selected === i && i", target)
    assert target_id == target
    shown = page.get_attribute("#paper-detail", "data-paper")
    assert shown != first
    assert page.text_content("#paper-abstract") == documents.loc[shown, "abstract"]
    assert page.locator("#paper-neighbours button").count() == 5
    rings = page.evaluate(
        """() => document.getElementById('topic-map').data
            .filter(t => t.uid.startsWith('focus-')).flatMap(t => t.customdata)"""
    )
    assert target in rings and len(rings) == 6  # the paper and its five neighbours
    page.keyboard.press("Escape")
    assert page.is_hidden("#paper-detail")
    assert state.errors == []


def test_bundled_topic_list_shows_one_topic_alone(bundled_build: Path, open_offline):
    state = open_offline(bundled_build / "map.html")
    page = state.page
    topics = tables.read_table(bundled_build / "topics.parquet", tables.TOPICS)
    topic = int(topics["topic"].max())  # the smallest topic
    size = int(topics.loc[topics["topic"] == topic, "size"].iloc[0])
    button = page.locator(f"#topic-list button[data-kind=topic][data-id='{topic}']")
    button.click()
    page.wait_for_timeout(300)
    assert button.get_attribute("aria-pressed") == "true"
    assert page.evaluate(PAPER_POINTS) == size
    assert page.inner_text("#match-count") == f"{size} of 76 papers match"
    button.click()  # again: everything
    page.wait_for_timeout(300)
    assert page.evaluate(PAPER_POINTS) == 76
    # a link from the report opens the map with the topic alone
    page.goto((bundled_build / "map.html").as_uri() + f"#topic={topic}")
    page.wait_for_function(MAP_READY)
    page.wait_for_timeout(300)
    assert page.evaluate(PAPER_POINTS) == size
    assert state.errors == []


def test_bundled_panels_draw_the_same_coordinates_in_the_same_place(
    bundled_build: Path, open_offline
):
    page = open_offline(bundled_build / "map.html").page
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
            "url": pd.Series(
                ["javascript:window.__pwned=1", "https://example.org/h1", None, None], dtype=object
            ),
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
            "label": ["parsing, <i onmouseover=window.__pwned=1>untrusted</i>", "graph"],
            "terms": [["parsing", "untrusted"], ["message passing", "graph"]],
            "size": np.array([2, 2], dtype=np.int32),
            "count_ICLR": np.array([0, 2], dtype=np.int32),
            "count_ICML": np.array([2, 0], dtype=np.int32),
        }
    )
    return documents, clusters, topics


def _write_site(folder: Path, pages: dict[str, str]) -> None:
    """The output folder render.run writes: the pages, plotly.min.js and the assets."""
    from plotly.offline import get_plotlyjs

    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / render.PLOTLY_JS).write_text(get_plotlyjs(), encoding="utf-8")
    for name in render.ASSETS:
        shutil.copyfile(render.ASSETS_DIR / name, folder / name)


@pytest.fixture
def hostile_site(tmp_path: Path) -> Path:
    documents, clusters, topics = _hostile_frames()
    vectors = np.eye(4, 8, dtype=np.float32) + 0.1
    pages = render.render_pages(
        documents, clusters, topics, RenderConfig(), (list(documents["doc_id"]), vectors)
    )
    _write_site(tmp_path, pages)
    return tmp_path


def _pwned(page) -> bool:
    return page.evaluate("typeof window.__pwned") != "undefined"


def test_hostile_text_never_runs_on_the_map(hostile_site: Path, open_offline):
    state = open_offline(hostile_site / "map.html")
    page = state.page
    titled = _paper_index(page, "h0")  # the <img onerror> title
    hover = _hover(page, titled)
    assert HOSTILE_TITLE in hover  # shown verbatim, as characters
    _click(page, titled)
    assert page.text_content("#paper-title") == HOSTILE_TITLE
    assert page.is_hidden("#paper-link")  # a javascript: URL is never a link
    assert page.get_attribute("#paper-link", "href") is None

    # the abstract with </script> inside the embedded JSON arrives whole, as text
    scripted = _paper_index(page, "h1")
    page.locator(f"#paper-neighbours button[data-index='{scripted}']").click()
    page.wait_for_timeout(300)
    assert page.text_content("#paper-abstract") == HOSTILE_ABSTRACT
    assert page.get_attribute("#paper-link", "href") == "https://example.org/h1"
    assert page.get_attribute("#paper-link", "rel") == "noopener noreferrer"
    page.hover("#topic-list button[data-id='0']")
    page.wait_for_timeout(300)

    assert not _pwned(page)
    assert page.evaluate("document.querySelectorAll('img, i').length") == 0
    assert "<i onmouseover" in page.text_content("#topic-list")  # the label, as characters
    assert state.errors == [] and state.blocked == []
    # nothing but the folder's own files was fetched: no injected <img src=x> either
    assert _local_files(state) == {"map.html", "plotly.min.js", "style.css", "map.js"}
    _screenshot(page, hostile_site, "map_hostile")


def test_hostile_text_never_runs_in_the_report(hostile_site: Path, open_offline):
    state = open_offline(hostile_site / "index.html")
    page = state.page
    page.wait_for_timeout(300)
    assert not _pwned(page)
    assert page.evaluate("document.querySelectorAll('img, i').length") == 0
    assert HOSTILE_TITLE in page.text_content("#topics")  # a representative paper, as text
    assert "<i onmouseover=window.__pwned=1>untrusted</i>" in page.text_content("#topics")
    assert state.errors == [] and state.blocked == []
    assert _local_files(state) == {"index.html", "plotly.min.js", "style.css", "report.js"}


def test_3401_papers_draw_search_and_click_in_time(tmp_path: Path, open_offline):
    """The real corpus's size, from a synthetic corpus: every point drawn, search, click."""
    synthetic = corpus(3401, themes=True)
    pages = render.render_pages(
        synthetic.documents,
        synthetic.clusters,
        synthetic.topics,
        RenderConfig(),
        synthetic.embeddings,
        render.Extras(synthetic.metrics, synthetic.baseline, None, synthetic.venue_topics),
    )
    _write_site(tmp_path, pages)
    started = time.monotonic()
    state = open_offline(tmp_path / "map.html", timeout=60_000)
    loaded = time.monotonic() - started
    page = state.page
    assert page.evaluate(PAPER_POINTS) == 3401
    assert loaded < 20, f"map took {loaded:.1f} s to draw"

    documents = synthetic.documents
    needle = documents.loc[7, "title"].split()[0][:6]
    text = (documents["title"] + "\n" + documents["abstract"]).str.lower()
    expected = int(text.str.contains(needle.lower(), regex=False).sum())
    assert 0 < expected < 3401
    assert _search(page, needle.upper()) == expected
    assert page.evaluate(PAPER_POINTS) == expected
    _click(page, 7)
    assert page.locator("#paper-neighbours button").count() == 5
    assert state.errors == [] and state.blocked == []

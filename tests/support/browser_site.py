"""Helpers of the browser tests (tests/browser/): pages opened offline in headless Chromium
with every request outside their folder aborted and recorded, sites written from the render
stage's core, and a site made of hostile text."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.config import CompareConfig, RenderConfig
from pipeline.stages import compare, metrics, render
from tests.support import tables as make
from tests.support.paths import ROOT
from tests.support.render_frames import rendered

# the report's charts in its first view drawn (report.js's mark; the others draw as they come
# into view, or at once with window.drawAllCharts())
REPORT_READY = "() => document.body?.dataset.ready === 'true'"
# every chart of the report drawn: those report.js draws as they come into view, and the
# per-year section's (report-years.js), each scrolled to
ALL_CHARTS = """async () => {
    await window.drawAllCharts();
    const section = document.getElementById('years-section');
    if (!section) return;
    for (const div of section.querySelectorAll('.plot')) {
        div.scrollIntoView();
        await new Promise((resolve) => setTimeout(resolve, 30));
    }
    window.scrollTo(0, 0);
}"""
YEAR_CHARTS_DRAWN = """() => [...document.querySelectorAll('#years-section .trend-plot[data-row]')]
    .every((div) => div.dataset.drawn === 'true')
    && (!document.getElementById('year-select')
        || !!document.getElementById('years-section').dataset.year)"""
MAP_READY = "() => document.getElementById('topic-map')?.dataset.ready === 'true'"
# points of the map's paper traces (uid papers-<panel>, WebGL) as plotly holds them after the
# draw; context dots and focus rings excluded
PAPER_POINTS = """document.getElementById('topic-map')._fullData
    .filter(t => t.uid.startsWith('papers-')).reduce((n, t) => n + t._length, 0)"""
PAPERS_IN_DATA = """document.getElementById('topic-map').data
    .filter(t => t.uid.startsWith('papers-')).reduce((n, t) => n + t.x.length, 0)"""
# pixels the WebGL canvas of the points holds (plotly keeps its drawing buffer): 0 when blank
GL_PIXELS = """(() => {
    const canvas = document.querySelector('#topic-map canvas.gl-canvas-context');
    const gl = canvas && canvas.getContext('webgl');
    if (!gl) return -1;
    const px = new Uint8Array(gl.drawingBufferWidth * gl.drawingBufferHeight * 4);
    gl.readPixels(0, 0, gl.drawingBufferWidth, gl.drawingBufferHeight, gl.RGBA,
        gl.UNSIGNED_BYTE, px);
    let n = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
    return n;
})()"""
REPORT_FILES = {"index.html", "plotly.min.js", "style.css", "report.js"}
MAP_FILES = {"map.html", "plotly-gl2d.min.js", "style.css", *render.MAP_SCRIPTS}

HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1">'
HOSTILE_ABSTRACT = (
    "We study robust parsing of untrusted text. </script><script>window.__pwned=1</script> "
    "The rest of the abstract follows here."
)
HOSTILE_VENUE = '<img src=v onerror="window.__pwned=2">'
HOSTILE_LABEL = "parsing, <i onmouseover=window.__pwned=1>untrusted</i>"
HOSTILE_THEME = "<b>bold</b> & <br>co"
HOSTILE_PAGE_TITLE = '<img src=t onerror="window.__pwned=3"> & <i>maps</i>'


@dataclass
class OfflinePage:
    page: object
    allowed_prefix: str
    blocked: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    resource_types: dict[str, str] = field(default_factory=dict)  # url -> how it was loaded
    errors: list[str] = field(default_factory=list)


def _watch(context, state: OfflinePage) -> None:
    def route(r):
        url = r.request.url
        if url.startswith(state.allowed_prefix):
            r.continue_()
        else:
            state.blocked.append(url)
            r.abort()

    context.route("**/*", route)
    page = state.page

    def request(req) -> None:
        state.requested.append(req.url)
        state.resource_types[req.url] = req.resource_type

    page.on("request", request)
    page.on(
        "console",
        lambda msg: state.errors.append(f"console: {msg.text}") if msg.type == "error" else None,
    )
    page.on("pageerror", lambda exc: state.errors.append(f"pageerror: {exc}"))


@contextmanager
def offline_pages(browser):
    """Yields open(html_path, timeout) -> OfflinePage, which opens a local page (waiting until
    its chart or map is drawn) with every request outside its folder aborted and recorded."""
    contexts = []

    def _open(
        html_path: Path, timeout: int = 30_000, before: str | None = None, every_chart: bool = True
    ) -> OfflinePage:
        """`before`: a script run in the page before its own (to take a browser feature away);
        `every_chart`: a report's charts all drawn (else those of its first view only)."""
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        contexts.append(context)
        if before:
            context.add_init_script(before)
        state = OfflinePage(page=context.new_page(), allowed_prefix=html_path.parent.as_uri() + "/")
        _watch(context, state)
        state.page.goto(html_path.as_uri(), wait_until="load")
        is_map = html_path.name == render.MAP_PAGE
        state.page.wait_for_function(MAP_READY if is_map else REPORT_READY, timeout=timeout)
        if not is_map and every_chart:
            state.page.evaluate(ALL_CHARTS)
            state.page.wait_for_function(YEAR_CHARTS_DRAWN, timeout=timeout)
        return state

    try:
        yield _open
    finally:
        for context in contexts:
            context.close()


def outside(state: OfflinePage) -> list[str]:
    return [u for u in state.requested if not u.startswith(state.allowed_prefix)]


def local_files(state: OfflinePage) -> set[str]:
    assert all(u.startswith(state.allowed_prefix) for u in state.requested), state.requested
    return {u.removeprefix(state.allowed_prefix).split("#")[0] for u in state.requested}


def shards_loaded(state: OfflinePage) -> set[str]:
    """The map's text shards the page has requested (map-data/text-NNN.js)."""
    return {name for name in local_files(state) if name.startswith("map-data/")}


def screenshot(page, folder: Path, name: str, full_page: bool = False) -> Path:
    """Save a screenshot into the output folder and a copy to /tmp/issue4_<name>.png."""
    shot = folder / f"{name}.png"
    if full_page:
        page.evaluate("window.scrollTo(0, 0)")  # sticky table headers follow the scroll
    page.screenshot(path=str(shot), full_page=full_page)
    assert shot.stat().st_size > 10_000
    shutil.copyfile(shot, f"/tmp/issue4_{name}.png")
    return shot


def write_site(folder: Path, files: dict[str, str]) -> None:
    """The output folder render.run writes: the pages, the map's text shards, plotly.min.js and
    the assets (render.write_files, as run() calls it)."""
    from plotly.offline import get_plotlyjs

    render.write_files(folder, files, get_plotlyjs())


def render_site(folder: Path, synthetic) -> None:
    """Render a synthetic_corpus.Corpus into `folder`."""
    pages = rendered(vars(synthetic))
    write_site(folder, pages)


def _hostile_tables() -> dict:
    ids = ["h0", "h1", "h2", "h3"]
    documents = make.documents(
        [
            "Robust parsing of untrusted markup in abstracts.",
            HOSTILE_ABSTRACT,
            "Graph neural networks with message passing.",
            "Message passing on graphs, once more.",
        ],
        doc_ids=ids,
        venues=["ICML", "ICML", HOSTILE_VENUE, HOSTILE_VENUE],
        titles=[HOSTILE_TITLE, None, "A plain title", None],
        sources="hostile.txt",
        urls=["javascript:window.__pwned=1", "https://example.org/h1", None, None],
    )
    clusters = make.clusters(
        ids, [0, 0, 1, 1], x=[0.0, 6.0, 3.0, 4.0], y=[0.0, 6.0, 3.0, 1.0], raw_outlier=False
    )
    topics = make.topics(
        [0, 1],
        labels=[HOSTILE_LABEL, "graph"],
        terms=[["parsing", "untrusted"], ["message passing", "graph"]],
        term_weights=[[0.4, 0.2], [0.3, 0.1]],
        sizes=[2, 2],
        themes=[0, 0],
        representative_docs=[["h0", "h1"], ["h2", "h3"]],
    )
    # one theme of both topics: the pages show a theme level
    themes = make.themes_of(topics, labels={0: HOSTILE_THEME}, terms={0: ["parsing"]})
    return {
        "documents": documents,
        "embeddings": (ids, np.eye(4, 8, dtype=np.float32) + 0.1),
        "clusters": clusters,
        "topics": topics,
        "themes": themes,
        "venue_topics": compare.make_venue_topics(
            documents, clusters, topics, themes, CompareConfig()
        ),
        "metrics": metrics.make_metrics(documents, clusters, topics, themes),
    }


def write_hostile_site(folder: Path) -> Path:
    """Four papers whose title, abstract, venue, URL, topic and theme labels and the page's
    title (render.title) try to run script or draw markup."""
    config = RenderConfig(title=HOSTILE_PAGE_TITLE)
    write_site(folder, render.make_pages(**_hostile_tables(), config=config))
    return folder


# every piece of text plotly draws as SVG (its pseudo-HTML, where <b>, <i>, <br> would render)
PLOTLY_TEXT = """(id) => [...document.querySelectorAll(
    `#${id} .annotation-text, #${id} .legendtext, #${id} .ytick text, #${id} .hoverlayer text`
).values()].map(node => node.textContent)"""


def pwned(page) -> bool:
    return page.evaluate("typeof window.__pwned") != "undefined"


# axe-core 4.14.1 from the npm registry (`npm pack axe-core@4.14.1`), vendored with its licence
AXE_JS = ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"
AXE_RUN = """async () => (await axe.run(document, {resultTypes: ["violations"], preload: false}))
    .violations.map(v => ({
        id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(" ")),
    }))"""


def axe_violations(page) -> list[dict]:
    """axe-core's violations on the page as it stands: [{id, impact, nodes}]. The script is
    injected as text and told not to fetch the stylesheets (preload), so it makes no request
    the offline pages would refuse."""
    if page.evaluate("typeof window.axe") == "undefined":
        page.add_script_tag(content=AXE_JS.read_text(encoding="utf-8"))
    return page.evaluate(AXE_RUN)


def serious(violations: list[dict]) -> list[dict]:
    return [v for v in violations if v["impact"] in ("serious", "critical")]


REAL_BUILD = ROOT / "outputs" / "icml-iclr-2020-2025"
HAS_REAL_BUILD = (REAL_BUILD / "clusters.parquet").is_file()


def write_real_build_site(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The 9,749-paper build's tables (`make all CONFIG=configs/icml-iclr-2020-2025.yaml`)
    rendered into `folder` by this code, venue_topics and venue_years from compare's core (the
    build's own may predate it); returns (documents, clusters, themes)."""
    from pipeline import tables
    from pipeline.api import open_build

    build = open_build(REAL_BUILD)
    d, c, t, h = build.documents, build.clusters, build.topics, build.themes
    embeddings = tables.read_embeddings(build.path("embeddings"), documents=d)
    venue_topics = compare.make_venue_topics(d, c, t, h, CompareConfig())
    venue_years = compare.make_venue_years(d, c, t, h, CompareConfig())
    pages = render.make_pages(
        d, embeddings, c, t, h, venue_topics, build.metrics, RenderConfig(), venue_years=venue_years
    )
    write_site(folder, pages)
    return d, c, h

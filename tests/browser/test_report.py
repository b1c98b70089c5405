"""The report in headless Chromium: offline, error-free, charts drawn from their JSON data,
sortable tables, no injection; a screenshot of the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline import schemas, tables
from tests.support.browser_site import (
    HOSTILE_LABEL,
    HOSTILE_PAGE_TITLE,
    HOSTILE_THEME,
    HOSTILE_TITLE,
    HOSTILE_VENUE,
    PLOTLY_TEXT,
    REPORT_FILES,
    local_files,
    outside,
    pwned,
    render_site,
    screenshot,
    write_hostile_site,
)
from tests.support.synthetic_corpus import corpus

pytestmark = pytest.mark.browser
CHART_DOTS = "(id) => document.querySelectorAll(`#${id} .scatterlayer .trace .point`).length"


@pytest.mark.slow  # needs the bundled build
def test_bundled_report_is_offline_complete_and_error_free(bundled_build: Path, open_offline):
    index = bundled_build / "index.html"
    assert (bundled_build / "plotly.min.js").is_file()
    state = open_offline(index)
    page = state.page
    page.wait_for_timeout(500)  # let late requests (fonts, maps, mathjax) show themselves

    assert state.blocked == [], f"page tried to leave its folder: {state.blocked}"
    assert outside(state) == []
    assert state.errors == []
    assert local_files(state) == REPORT_FILES

    summary = page.inner_text("#summary")
    assert summary.startswith("76 papers")
    assert re.search(r"\bICML 57\b", summary), summary
    assert re.search(r"\bICLR 19\b", summary), summary
    assert page.locator("#venues tbody tr").count() == 2
    n_topics = len(tables.read_table(bundled_build / "topics.parquet", schemas.TOPICS))
    assert page.locator("#topics tbody tr").count() == n_topics
    # one chart dot per assigned topic and venue
    assert (
        page.evaluate(CHART_DOTS, "venue-chart")
        == 2 * page.locator("#topics tbody tr:not(.pinned)").count()
    )
    if page.locator("#themes").count():  # the bundled corpus has a theme level
        assert (
            page.evaluate(CHART_DOTS, "theme-chart") == 2 * page.locator("#themes tbody tr").count()
        )

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
    screenshot(page, bundled_build, "index", full_page=True)


def test_report_charts_show_shares_and_flags_from_venue_topics(tmp_path: Path, open_offline):
    synthetic = corpus(600)
    render_site(tmp_path, synthetic)
    state = open_offline(tmp_path / "index.html")
    page = state.page
    rows = synthetic.venue_topics
    topic_rows = rows[(rows["level"] == "topic") & (rows["id"] >= 0)]
    theme_rows = rows[(rows["level"] == "theme") & (rows["id"] >= 0)]
    assert page.evaluate(CHART_DOTS, "venue-chart") == len(topic_rows)
    assert page.evaluate(CHART_DOTS, "theme-chart") == len(theme_rows)
    flagged = topic_rows[topic_rows["flag"] != "none"]
    assert len(flagged), "the synthetic corpus should flag some cells"
    outlined = page.evaluate(
        """() => document.getElementById('venue-chart')._fullData
            .filter(t => t.mode === 'markers' && Array.isArray(t.marker.line.width))
            .reduce((n, t) => n + t.marker.line.width.filter(w => w > 0).length, 0)"""
    )
    assert outlined == len(flagged)
    marks = page.locator("#topics .mark").count() + page.locator("#themes .mark").count()
    shown = (rows["level"] == "topic") | (rows["id"] >= 0)  # the themes table has no unassigned
    assert marks == int((shown & (rows["flag"] != "none")).sum())
    assert state.errors == [] and state.blocked == []


def test_hostile_text_never_runs_in_the_report(tmp_path: Path, open_offline):
    state = open_offline(write_hostile_site(tmp_path) / "index.html")
    page = state.page
    page.wait_for_timeout(300)
    assert not pwned(page)
    assert page.evaluate("document.querySelectorAll('img, i').length") == 0
    assert HOSTILE_TITLE in page.text_content("#topics")  # a representative paper, as text
    assert HOSTILE_LABEL in page.text_content("#topics")
    assert HOSTILE_THEME in page.text_content("#themes")
    assert HOSTILE_VENUE in page.text_content("#venues")  # the venue, as text
    assert HOSTILE_VENUE in page.text_content("#topics thead")  # a venue's column
    assert page.title() == HOSTILE_PAGE_TITLE  # render.title
    assert page.text_content("header h1") == HOSTILE_PAGE_TITLE
    # what plotly draws as SVG shows the characters: legend, row labels and hover labels
    topic_chart = page.evaluate(PLOTLY_TEXT, "venue-chart")
    assert HOSTILE_VENUE in topic_chart and HOSTILE_LABEL in topic_chart, topic_chart
    assert HOSTILE_THEME in page.evaluate(PLOTLY_TEXT, "theme-chart")
    treemap = " ".join(
        page.evaluate("[...document.querySelectorAll('#treemap text')].map(n => n.textContent)")
    )
    assert all(text in treemap for text in (HOSTILE_LABEL, HOSTILE_THEME, HOSTILE_VENUE)), treemap
    hovers = page.evaluate(
        """() => {
            const gd = document.getElementById('venue-chart');
            const found = [];
            gd.data.forEach((trace, curve) => (trace.text || []).forEach((_, point) => {
                Plotly.Fx.hover(gd, [{curveNumber: curve, pointNumber: point}]);
                found.push(gd.querySelector('.hoverlayer').textContent);
            }));
            return found;
        }"""
    )
    assert any(HOSTILE_LABEL in h and HOSTILE_VENUE in h for h in hovers), hovers
    assert not pwned(page)
    assert page.evaluate("document.querySelectorAll('img, i, b').length") == 0
    assert state.errors == [] and state.blocked == []
    assert local_files(state) == REPORT_FILES


def test_report_works_without_javascript(tmp_path: Path, browser):
    """With JavaScript off the tables, the map preview and the term bars still show; the
    treemap's place says it needs JavaScript."""
    render_site(tmp_path, corpus(300))
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1400, "height": 800}
    )
    try:
        page = context.new_page()
        page.goto((tmp_path / "index.html").as_uri())
        assert page.locator("#topics tbody tr").count() > 5
        assert page.locator("#map-preview svg circle").count() == 300
        assert page.locator("#map-preview").is_visible()
        page.click("#topics tbody tr:first-child details summary")
        assert page.locator("#topics tbody tr:first-child .term-bars li").first.is_visible()
        assert "needs JavaScript" in page.inner_text("#treemap-section")
        assert page.locator("#treemap .main-svg").count() == 0  # nothing drawn
    finally:
        context.close()

"""The per-year section and the many-venue comparison in headless Chromium: the eight-venue
report's heatmap (eight readable column headers, ▲/▼ in its cells), eight distinct venue
colours, the per-theme year charts and the year selector, offline, without console errors and
with no serious or critical axe-core violation."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import RenderConfig
from pipeline.labels import theme_level
from pipeline.stages.render import make_pages
from tests.support.browser_site import (
    HAS_REAL_BUILD,
    axe_violations,
    screenshot,
    serious,
    write_real_build_site,
    write_site,
)
from tests.support.many_venues import EIGHT, eight_venues, years_corpus

pytestmark = pytest.mark.browser

HEADERS = """() => [...document.querySelectorAll('#venue-chart .xtick text')].map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
})"""
TRACE_COLOURS = """() => [...document.querySelectorAll('#years-section .trend-plot')].map(
    div => div.data.map(t => [t.name, t.line.color]))"""


def _site(folder: Path, built) -> Path:
    c = built.corpus
    frames = (c.documents, c.embeddings, c.clusters, c.topics, c.themes, c.venue_topics)
    pages = make_pages(*frames, c.metrics, RenderConfig(), venue_years=built.venue_years)
    write_site(folder, pages)
    return folder / "index.html"


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    built = eight_venues(50)
    return _site(tmp_path_factory.mktemp("eight"), built), built


@pytest.fixture(scope="module")
def years(tmp_path_factory):
    built = years_corpus(700, undated=12)
    return _site(tmp_path_factory.mktemp("years"), built), built


def test_eight_venues_get_a_heatmap_with_readable_headers_and_distinct_colours(eight, open_offline):
    index, built = eight
    state = open_offline(index)
    page = state.page
    assert state.errors == [] and state.blocked == []
    headers = page.evaluate(HEADERS)
    assert [h["text"] for h in headers] == sorted(EIGHT)
    for first, second in zip(headers, headers[1:], strict=False):  # no header overlaps the next
        assert first["right"] <= second["left"] + 1 or first["bottom"] <= second["top"] + 1
    assert min(h["bottom"] - h["top"] for h in headers) >= 9  # a readable size
    cells = page.evaluate(
        "() => [...document.querySelectorAll('#venue-chart .hm text, #venue-chart text.hmtext')]"
        ".map(t => t.textContent)"
    )
    flagged = built.corpus.venue_topics.query("level == 'topic' and id >= 0 and flag == 'over'")
    assert sum("▲" in text for text in cells) == len(flagged) > 0
    colours = page.evaluate(TRACE_COLOURS)
    assert colours and all(len(chart) == 8 for chart in colours)
    assert len({colour for chart in colours for _, colour in chart}) == 8
    assert {name for _, name in [(c, n) for chart in colours for n, c in chart]} == set(EIGHT)
    assert serious(axe_violations(page)) == []
    screenshot(page, index.parent, "eight_venues_report", full_page=True)


def test_the_year_charts_and_the_year_selector(years, open_offline):
    index, built = years
    state = open_offline(index)
    page = state.page
    themes = theme_level(built.corpus.themes)
    traces = page.locator("#years-section .trends .trend-plot .scatterlayer .trace")
    assert traces.count() == 2 * len(themes)
    note = page.inner_text("#undated-note")
    assert note == "12 papers have no year and are left out of this section."
    assert page.get_attribute("#years-section", "data-year") == "2025"

    def shares(year: int) -> list[float]:
        rows = built.venue_years.query(f"year == {year} and level == 'topic' and id >= 0")
        return sorted(round(100 * s, 3) for s in rows.loc[rows["venue"] == "ICML", "share"])

    def drawn() -> list[float]:
        xs = page.evaluate(
            "() => document.getElementById('year-topic-chart').data"
            ".filter(t => t.name === 'ICML').map(t => t.x)[0]"
        )
        return sorted(xs)

    assert drawn() == pytest.approx(shares(2025))
    page.select_option("#year-select", "2021")
    page.wait_for_function("() => document.getElementById('years-section').dataset.year === '2021'")
    assert drawn() == pytest.approx(shares(2021))
    assert shares(2021) != shares(2025)
    page.focus("#year-select")  # the keyboard reaches it too
    page.keyboard.press("ArrowDown")
    page.wait_for_function("() => document.getElementById('years-section').dataset.year === '2022'")
    assert drawn() == pytest.approx(shares(2022))
    assert page.get_attribute("#topic-trend", "data-topic") == "trend-topic-0"
    page.select_option("#topic-trend-select", "trend-topic-3")
    page.wait_for_function(
        "() => document.getElementById('topic-trend').dataset.topic.endsWith('-3')"
    )
    lines = page.evaluate("() => document.getElementById('topic-trend').data.map(t => t.y)")
    three = built.venue_years.query("level == 'topic' and id == 3").sort_values("year")
    assert lines == [
        pytest.approx(list(100 * three.loc[three["venue"] == v, "share"]), abs=1e-3)
        for v in ("ICLR", "ICML")
    ]
    assert state.errors == []
    assert serious(axe_violations(page)) == []
    page.evaluate("document.querySelectorAll('.trend-figures').forEach(d => d.open = true)")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.trend-figures')]"
        ".every((d) => d.querySelector('table'))"
    )
    assert page.locator(".trend-figures table").first.is_visible()
    flagged = built.venue_years.query("level == 'theme' and id >= 0 and flag != 'none'")
    said = page.evaluate(
        "() => [...document.querySelectorAll('.trend-figures .visually-hidden')].length"
    )
    assert said == len(flagged) > 0  # every flagged cell's mark said in words too
    assert serious(axe_violations(page)) == []
    screenshot(page, index.parent, "years_report", full_page=True)


def test_the_year_charts_are_drawn_on_demand(years, open_offline):
    """At load only the first view's charts: a theme's trend is drawn as it scrolls into view,
    a topic's when chosen, from the one compact table."""
    index, built = years
    state = open_offline(index, every_chart=False)
    page = state.page
    undrawn = "() => [...document.querySelectorAll('.trend-plot[data-row]')].filter(d => !d.data)"
    first = page.evaluate(f"() => ({undrawn})().length")
    assert first == len(theme_level(built.corpus.themes))  # the section is below the first view
    assert page.evaluate("() => !document.getElementById('year-topic-chart').data")
    page.locator(".trend-plot[data-row]").first.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('.trend-plot[data-row]').dataset.drawn")
    page.locator("#year-topic-chart").scroll_into_view_if_needed()
    page.wait_for_function("() => document.getElementById('years-section').dataset.year")
    assert page.get_attribute("#years-section", "data-year") == "2025"
    assert state.errors == [] and state.blocked == []


@pytest.mark.slow  # renders the 9,749 papers (their similar papers too)
@pytest.mark.skipif(
    not HAS_REAL_BUILD, reason="needs `make all CONFIG=configs/icml-iclr-2020-2025.yaml` built"
)
def test_the_real_2020_2025_report_per_year(tmp_path, open_offline):
    """The tables of the 9,749-paper build, venue_years from compare's core, rendered here."""
    _, _, h = write_real_build_site(tmp_path)
    state = open_offline(tmp_path / "index.html", timeout=60_000)
    page = state.page
    assert page.inner_text("h1") == "ICLR & ICML 2020–2025 topic map"
    options = page.eval_on_selector_all("#year-select option", "os => os.map(o => o.value)")
    assert options == ["2020", "2021", "2022", "2023", "2025"]
    level = theme_level(h)
    traces = page.locator("#years-section .trends .trend-plot .scatterlayer .trace")
    assert traces.count() == 2 * len(level)
    page.select_option("#year-select", "2020")
    page.wait_for_function("() => document.getElementById('years-section').dataset.year === '2020'")
    assert state.errors == [] and state.blocked == []
    assert serious(axe_violations(page)) == []
    screenshot(page, tmp_path, "real_2020_2025_report", full_page=True)

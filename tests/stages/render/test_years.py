"""The report's per-year section and its many-venue comparison, from the tables compare writes:
venue_years' cells in one compact table (report-years.js draws its charts, tested in
tests/browser/test_years.py), its weight a few bytes a cell, and the topics x venues heatmap
with its ▲/▼ marks for more than three venues."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from pipeline.colours import venue_colour
from pipeline.config import RenderConfig
from pipeline.labels import theme_level
from pipeline.stages.render import make_pages
from pipeline.stages.render.charts import comparison_figure, figure_data, plotly_template
from pipeline.stages.render.report import comparison_charts
from pipeline.stages.render.years import FLAGS, unpack_cells, years_context
from tests.support.many_venues import EIGHT, eight_venues, years_corpus
from tests.support.render_frames import ISLAND, island


@pytest.fixture(scope="module")
def years():
    return years_corpus(600, undated=15)


@pytest.fixture(scope="module")
def eight():
    return eight_venues(40)


def _pages(built, **kwargs) -> dict[str, str]:
    c = built.corpus
    frames = (c.documents, c.embeddings, c.clusters, c.topics, c.themes, c.venue_topics)
    return make_pages(*frames, c.metrics, RenderConfig(), **kwargs)


def _cells(context: dict) -> dict:
    data = context["data"]
    shape = (len(data["rows"]), len(data["venues"]), len(data["years"]))
    return unpack_cells(data["cells"], *shape)


def test_every_rows_cells_are_venue_years_own_figures(years):
    c, venue_years = years.corpus, years.venue_years
    level = theme_level(c.themes)
    context = years_context(venue_years, level, c.topics, ["ICLR", "ICML"], 15)
    assert context["years"] == [2020, 2021, 2022, 2023, 2025] and context["undated"] == 15
    assert [t["id"] for t in context["trends"]] == [f"trend-theme-{h}" for h in level["theme"]]
    data, cells = context["data"], _cells(context)
    assigned = [int(t) for t in c.topics["topic"] if t >= 0]
    expected_rows = [("theme", int(h)) for h in level["theme"]] + [("topic", t) for t in assigned]
    assert [(r[0], r[1]) for r in data["rows"]] == expected_rows
    table = venue_years.set_index(["level", "id", "venue", "year"])
    seen = flagged = 0
    for r, (kind, key, label) in enumerate(data["rows"]):
        for v, venue in enumerate(data["venues"]):
            for y, year in enumerate(data["years"]):
                if (kind, key, venue, year) not in table.index:
                    assert cells["count"][r, v, y] == 0 and data["papers"][v][y] == 0
                    continue
                row = table.loc[(kind, key, venue, year)]
                assert label == row["label"]
                assert cells["count"][r, v, y] == row["count"]
                assert cells["share"][r, v, y] == pytest.approx(row["share"], rel=1e-6)
                z = cells["z"][r, v, y]
                assert (np.isnan(z) and pd.isna(row["z"])) or z == pytest.approx(row["z"], 1e-5)
                assert cells["flag"][r, v, y] == FLAGS[row["flag"]]
                assert data["papers"][v][y] == row["venue_year_papers"]
                seen += 1
                flagged += row["flag"] != "none"
    assert seen == len(venue_years[venue_years["id"] >= 0]) and flagged > 0


def test_the_papers_per_venue_and_year(years):
    c, venue_years = years.corpus, years.venue_years
    context = years_context(venue_years, theme_level(c.themes), c.topics, ["ICLR", "ICML"], 0)
    counts = {r["venue"]: r["counts"] for r in context["papers"]}
    dated = c.documents.dropna(subset=["year"])
    assert counts["ICML"] == [
        int(((dated["venue"] == "ICML") & (dated["year"] == y)).sum()) for y in context["years"]
    ]


def test_one_year_or_no_table_means_no_section(years):
    c = years.corpus
    one = years.venue_years[years.venue_years["year"] == 2021]
    assert years_context(one, None, c.topics, ["ICLR", "ICML"], 0) is None
    assert years_context(None, None, c.topics, ["ICLR", "ICML"], 0) is None
    index = _pages(years, venue_years=one)["index.html"]
    assert 'id="years-section"' not in index


def test_the_report_shows_the_section_and_says_how_many_papers_had_no_year(years):
    index = _pages(years, venue_years=years.venue_years)["index.html"]
    assert 'id="years-section"' in index and '<script src="report-years.js">' in index
    assert "15 papers have no year and are left out of this section." in index
    themes = theme_level(years.corpus.themes)
    assert index.count('class="plot trend-plot"') == len(themes) + 1  # + the chosen topic's
    data = island(index, "year-data")
    assert data["years"] == [2020, 2021, 2022, 2023, 2025]
    plots = {p["id"] for p in island(index, "chart-data")}
    assert not any(p.startswith("trend-") for p in plots)  # drawn on demand, from year-data
    assert '<option value="2025" selected>2025</option>' in index


def test_without_a_theme_level_a_chart_per_topic(years):
    c = years.corpus
    context = years_context(years.venue_years, None, c.topics, ["ICLR", "ICML"], 0)
    assigned = [int(t) for t in c.topics["topic"] if t >= 0]
    assert [t["id"] for t in context["trends"]] == [f"trend-topic-{t}" for t in assigned]
    assert {r[0] for r in context["data"]["rows"]} == {"topic"} and context["topic_trends"] == []
    index = _pages(years, venue_years=years.venue_years)["index.html"].replace("\n", "")
    assert 'id="year-topic-chart"' in index


def test_the_per_year_data_grows_with_its_cells_not_with_charts(years, eight):
    """The section's weight: a few bytes a cell (rows x venues x years), whatever the charts."""
    for built in (years, eight):
        c = built.corpus
        index = _pages(built, venue_years=built.venue_years)["index.html"]
        data = island(index, "year-data")
        cells = len(data["rows"]) * len(data["venues"]) * len(data["years"])
        island_bytes = len(re.search(ISLAND.format("year-data"), index, re.S).group(1))
        assert island_bytes < 2000 + 8 * cells
        assert len(data["rows"]) == int((c.topics["topic"] >= 0).sum()) + len(theme_level(c.themes))


def test_more_than_three_venues_compare_in_a_heatmap_with_marks_in_its_cells(eight):
    c = eight.corpus
    charts = comparison_charts(c.venue_topics, theme_level(c.themes))
    for chart in charts:
        (heat,) = chart["figure"]["data"]
        assert heat["type"] == "heatmap" and heat["x"] == sorted(EIGHT)
    (heat,) = charts[-1]["figure"]["data"]  # topics
    rows = c.venue_topics[(c.venue_topics["level"] == "topic") & (c.venue_topics["id"] >= 0)]
    cells = rows.set_index(["label", "venue"])
    for label, values, texts in zip(heat["y"], heat["z"], heat["text"], strict=True):
        for venue, value, text in zip(heat["x"], values, texts, strict=True):
            cell = cells.loc[(label, venue)]
            assert value == pytest.approx(100 * cell["share"], abs=1e-3)
            mark = {"over": "▲", "under": "▼"}.get(cell["flag"], "")
            assert text == f"{100 * cell['share']:.1f}{mark}"
    assert any("▲" in t for row in heat["text"] for t in row)
    spread = [max(r) - min(r) for r in heat["z"]]
    assert spread == sorted(spread, reverse=True)  # largest spread on top


def test_three_venues_keep_the_dot_chart_and_colours_follow_every_venues_place():
    rows = pd.DataFrame(
        {
            "id": [0, 0, 1, 1],
            "label": ["a", "a", "b", "b"],
            "venue": ["B", "C"] * 2,
            "count": [1, 2, 3, 4],
            "share": [0.1, 0.2, 0.3, 0.4],
            "z": [None] * 4,
            "flag": ["none"] * 4,
            "venue_papers": [10, 10, 10, 10],
        }
    )
    figure = figure_data(comparison_figure(rows, "topic", ["A", "B", "C"]))
    dots = [t for t in figure["data"] if t.get("mode") == "markers"]
    assert [(t["name"], t["marker"]["color"]) for t in dots] == [
        ("B", venue_colour(1)),
        ("C", venue_colour(2)),
    ]


def test_the_eight_venue_report_renders_every_venue_in_its_own_colour(eight):
    index = _pages(eight, venue_years=eight.venue_years)["index.html"]
    for k, venue in enumerate(sorted(EIGHT)):
        assert f'<span class="swatch" style="background:{venue_colour(k)}"></span>{venue}' in index
    assert len({venue_colour(k) for k in range(8)}) == 8
    assert "Venues as small multiples →" in index
    assert "Each cell is a topic's share of one venue's papers" in index


def test_every_topic_has_its_own_trend_behind_a_selector(years):
    c, venue_years = years.corpus, years.venue_years
    context = years_context(venue_years, theme_level(c.themes), c.topics, ["ICLR", "ICML"], 0)
    assigned = [int(t) for t in c.topics["topic"] if t >= 0]
    assert [t["id"] for t in context["topic_trends"]] == [f"trend-topic-{t}" for t in assigned]
    index = _pages(years, venue_years=venue_years)["index.html"]
    assert index.count('<option value="trend-topic-') == len(assigned)
    assert index.count('<details class="trend-figures" data-row=') == len(theme_level(c.themes))


def test_the_layout_template_travels_once_not_in_every_figure(years):
    index = _pages(years, venue_years=years.venue_years)["index.html"]
    figures = [p["figure"] for p in island(index, "chart-data")]
    assert len(figures) >= 2 and all("template" not in f["layout"] for f in figures)
    template = island(index, "plotly-template")
    assert template == plotly_template() and "layout" in template

"""The report's per-year section and its many-venue comparison, from the tables compare writes:
a chart per theme (venues as lines, flagged years marked), the venue comparison of each year,
and the topics x venues heatmap with its ▲/▼ marks for more than three venues."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.colours import venue_colour
from pipeline.config import RenderConfig
from pipeline.labels import theme_level
from pipeline.stages.render import make_pages
from pipeline.stages.render.charts import comparison_figure, figure_data, plotly_template
from pipeline.stages.render.report import comparison_charts
from pipeline.stages.render.years import years_context
from tests.support.many_venues import EIGHT, eight_venues, years_corpus
from tests.support.render_frames import island


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


def test_a_chart_per_theme_with_a_line_per_venue_read_from_venue_years(years):
    c, venue_years = years.corpus, years.venue_years
    level = theme_level(c.themes)
    context = years_context(venue_years, level, c.topics, ["ICLR", "ICML"], 15)
    assert context["years"] == [2020, 2021, 2022, 2023, 2025] and context["undated"] == 15
    assert [t["id"] for t in context["trends"]] == [f"trend-theme-{h}" for h in level["theme"]]
    rows = venue_years[venue_years["level"] == "theme"].set_index(["id", "venue", "year"])
    marked = 0
    for trend in context["trends"]:
        key = int(trend["id"].rsplit("-", 1)[1])
        traces = trend["figure"]["data"]
        assert [t["name"] for t in traces] == ["ICLR", "ICML"]
        for k, trace in enumerate(traces):
            assert trace["line"]["color"] == venue_colour(k)
            assert trace["x"] == context["years"]
            cells = rows.loc[[(key, trace["name"], y) for y in trace["x"]]]
            assert trace["y"] == pytest.approx(list(100 * cells["share"]), abs=1e-3)
            flags = list(cells["flag"])
            assert trace["text"] == [{"over": "▲", "under": "▼"}.get(f, "") for f in flags]
            widths = trace["marker"]["line"]["width"]
            assert widths == [2 if f != "none" else 0 for f in flags]
            marked += sum(f != "none" for f in flags)
    assert marked > 0  # the corpus has flagged years, so the marks are tested


def test_each_years_comparison_is_that_years_venue_years_rows(years):
    c, venue_years = years.corpus, years.venue_years
    context = years_context(venue_years, theme_level(c.themes), c.topics, ["ICLR", "ICML"], 0)
    assert sorted(context["by_year"]) == ["2020", "2021", "2022", "2023", "2025"]
    charts = context["by_year"]["2021"]
    assert [chart["id"] for chart in charts] == ["year-theme-chart", "year-topic-chart"]
    topic = charts[1]["figure"]["data"]
    dots = {
        t["name"]: t for t in topic if t.get("mode") == "markers" and t["name"] in ("ICLR", "ICML")
    }
    rows = venue_years[(venue_years["year"] == 2021) & (venue_years["level"] == "topic")]
    rows = rows[rows["id"] >= 0]
    for venue, trace in dots.items():
        expected = sorted(round(100 * s, 3) for s in rows.loc[rows["venue"] == venue, "share"])
        assert sorted(trace["x"]) == pytest.approx(expected)
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
    assert 'id="years-section"' in index
    assert "15 papers have no year and are left out of this section." in index
    themes = theme_level(years.corpus.themes)
    assert index.count('class="plot trend-plot"') == len(themes) + 1  # + the chosen topic's
    by_year = island(index, "year-data")
    assert sorted(by_year) == ["2020", "2021", "2022", "2023", "2025"]
    plots = {p["id"] for p in island(index, "chart-data")}
    assert {f"trend-theme-{h}" for h in theme_level(years.corpus.themes)["theme"]} <= plots
    assert '<option value="2025" selected>2025</option>' in index


def test_without_a_theme_level_a_chart_per_topic(years):
    c = years.corpus
    context = years_context(years.venue_years, None, c.topics, ["ICLR", "ICML"], 0)
    assigned = [int(t) for t in c.topics["topic"] if t >= 0]
    assert [t["id"] for t in context["trends"]] == [f"trend-topic-{t}" for t in assigned]
    assert [chart["id"] for chart in context["by_year"]["2020"]] == ["year-topic-chart"]


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
    zero = next(t for t in context["topic_trends"] if t["id"] == "trend-topic-0")
    icml = next(t for t in zero["figure"]["data"] if t["name"] == "ICML")
    rows = venue_years.query("level == 'topic' and id == 0 and venue == 'ICML'").sort_values("year")
    assert icml["y"] == pytest.approx(list(100 * rows["share"]), abs=1e-3)
    assert icml["text"][icml["x"].index(2021)] == "▲"  # the known lean of ICML 2021
    index = _pages(years, venue_years=venue_years)["index.html"]
    assert len(island(index, "topic-trend-data")) == len(assigned)
    assert index.count('<option value="trend-topic-') == len(assigned)


def test_each_theme_charts_figures_are_also_a_table_with_the_marks_in_words(years):
    c, venue_years = years.corpus, years.venue_years
    context = years_context(venue_years, theme_level(c.themes), c.topics, ["ICLR", "ICML"], 0)
    rows = venue_years[venue_years["level"] == "theme"].set_index(["id", "venue", "year"])
    for trend in context["trends"]:
        key = int(trend["id"].rsplit("-", 1)[1])
        assert [r["venue"] for r in trend["table"]] == ["ICLR", "ICML"]
        for row in trend["table"]:
            for year, cell in zip(context["years"], row["cells"], strict=True):
                assert cell["share"] == rows.loc[(key, row["venue"], year), "share"]
                assert cell["flag"] == rows.loc[(key, row["venue"], year), "flag"]
    assert "topic_trends" in context and "table" not in context["topic_trends"][0]
    index = _pages(years, venue_years=venue_years)["index.html"]
    flagged = (venue_years["level"] == "theme") & (venue_years["flag"] != "none")
    assert index.count("-represented at ICML that year</span>") + index.count(
        "-represented at ICLR that year</span>"
    ) == int(flagged.sum())


def test_the_layout_template_travels_once_not_in_every_figure(years):
    index = _pages(years, venue_years=years.venue_years)["index.html"]
    figures = [p["figure"] for p in island(index, "chart-data")]
    figures += [c["figure"] for charts in island(index, "year-data").values() for c in charts]
    figures += [t["figure"] for t in island(index, "topic-trend-data")]
    assert len(figures) > 20 and all("template" not in f["layout"] for f in figures)
    template = island(index, "plotly-template")
    assert template == plotly_template() and "layout" in template

"""Render stage: the report's venue figures (read from venue_topics, never recomputed), the
theme level, the quality figures and the representative papers."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from pipeline.stages import quality
from pipeline.stages.render import charts
from pipeline.text import banned_words
from tests.support.render_frames import island, rendered, tiny_tables

# ---------------------------------------------------------------- venue figures


def test_comparison_order_sorts_by_the_difference_between_venues():
    rows = pd.DataFrame(
        {
            "id": [0, 0, 1, 1, 2, 2],
            "venue": ["ICLR", "ICML"] * 3,
            "share": [0.1, 0.6, 0.5, 0.2, 0.4, 0.2],
        }
    )
    assert charts.comparison_order(rows) == [1, 2, 0]  # most ICLR-leaning first
    assert charts.comparison_order(rows[rows["venue"] == "ICLR"]) == [1, 2, 0]  # by share


def test_report_reads_counts_shares_totals_and_flags_from_venue_topics():
    frames = tiny_tables()
    venue_topics = frames["venue_topics"]
    cell = (venue_topics["level"] == "topic") & (venue_topics["id"] == 0)
    iclr = cell & (venue_topics["venue"] == "ICLR")
    # figures no other table holds: the page must show these, not recompute its own
    venue_topics.loc[iclr, ["count", "share", "z", "flag"]] = [7, 0.875, 3.25, "over"]
    venue_topics.loc[cell & (venue_topics["venue"] == "ICML"), ["z", "flag"]] = [-3.25, "under"]
    venue_topics.loc[venue_topics["venue"] == "ICLR", "venue_papers"] = 8
    venue_topics["z_threshold"] = 2.5
    index = rendered(frames)["index.html"]
    assert '<td class="num" data-sort="0.875000">87.5%<span class="note"> (7)</span>' in index
    assert (
        'title="significantly over-represented at ICLR (z = +3.2)"><span aria-hidden="true">▲'
        '</span><span class="visually-hidden"> significantly over-represented at ICLR</span>'
    ) in index  # the mark says in text what it means, not only in its title
    assert 'class="mark under" title=' in index
    assert "|z| ≥ 2.5, the weighted log-odds of venue_topics.parquet" in index
    assert "(ICLR 8, ICML 3)" in index  # each venue's papers, as venue_topics counts them
    iclr = '<td><span class="swatch" style="background:#2f6fdb"></span>ICLR</td>'
    assert iclr + '<td class="years">2025</td><td class="num">8</td>' in index  # its colour too
    figure = island(index, "chart-data")[0]["figure"]
    dots = {t["name"]: t for t in figure["data"] if t.get("name") in ("ICLR", "ICML")}
    assert 87.5 in dots["ICLR"]["x"]
    assert sorted(dots["ICLR"]["marker"]["line"]["width"]) == [0, 2]  # flagged dot outlined
    assert "significant difference" in [t.get("name") for t in figure["data"]]
    assert any(text.startswith("<b>") for text in figure["layout"]["yaxis"]["ticktext"])
    hover = "of 8 papers (87.5%)<br>z = +3.2, over-represented"
    assert any(hover in text for text in dots["ICLR"]["text"])


def test_unflagged_cells_carry_no_marks():
    frames = tiny_tables()
    frames["venue_topics"]["flag"] = "none"
    index = rendered(frames)["index.html"]
    assert 'class="mark over" title=' not in index and 'class="mark under" title=' not in index
    figure = island(index, "chart-data")[0]["figure"]
    assert "significant difference" not in [t.get("name") for t in figure["data"]]


# ---------------------------------------------------------------- themes, figures


def _quality_figures(monkeypatch) -> tuple[dict, dict]:
    """stability.json and baseline.json as the quality stage writes them, its BERTopic runs
    replaced by fixed assignments (no UMAP here)."""
    runs = {42: [0, 0, 1, 1, -1], 43: [0, 0, 1, 1, 1], 44: [1, 1, 0, 0, -1]}
    stability = quality.seed_agreement({s: np.array(t) for s, t in runs.items()})

    def bertopic_defaults(texts, vectors, seed):  # 5 papers: 2 topics and 1 outlier
        topics = np.array(runs[seed])
        terms = {-1: ["the"], 0: ["graph", "node"], 1: ["transport", "the"]}
        labels = {t: f"{t}_{'_'.join(w)}" for t, w in terms.items()}
        return quality.BaselineRun(topics, terms, labels, [{"graph", "node"}] * 5)

    monkeypatch.setattr(quality, "bertopic_defaults", bertopic_defaults)
    baseline = quality.make_baseline([""] * 5, np.zeros((5, 2)), [42, 43, 44], banned_words())
    return stability, baseline


def test_report_and_map_show_the_theme_level_when_themes_group_topics(monkeypatch):
    frames = tiny_tables(grouped=True)
    stability, baseline = _quality_figures(monkeypatch)
    found = rendered(frames, stability=stability, baseline=baseline)
    index = found["index.html"]
    assert '<table id="themes"' in index and "learning &lt;theory&gt;" in index
    assert '<div id="theme-chart"' in index and '<div id="venue-chart"' in index
    assert '<th class="sortable">Theme</th>' in index
    assert "in 2 topics (1 themes)" in index and '<div class="what">themes</div>' in index
    assert '<table id="quality"' in index and "BERTopic defaults" in index
    ours, base = (f"{stability['ari_min']:.3g}", f"{baseline['stability']['ari_min']:.3g}")
    assert f'<td>stability · ari min</td><td class="num">{ours}</td><td class="num">{base}' in index
    # shares as percents: 1 of 5 papers unassigned here, 2 of 5 by the baseline's first seed
    assert '<td>unassigned share</td><td class="num">20.0%</td><td class="num">20.0%' in index
    assert (
        '<td>labels with stop or filler words</td><td class="num">0</td><td class="num">1' in index
    )
    assert "Run the baseline target" not in index and "Run the stability target" not in index
    data = island(found["map.html"], "paper-data")
    # the theme's size from themes.parquet; its label at the median of its four papers
    theme = {"id": 0, "label": "learning <theory>", "size": 4, "area": None, "x": 1.5, "y": 2.0}
    assert data["themes"] == [theme]
    assert data["areas"] == []  # a small corpus: no areas
    assert '<th class="sortable">Area</th>' not in index
    assert {t["id"]: t["theme"] for t in data["topics"]} == {0: 0, 1: 0, -1: None}
    assert "<h2>Themes and topics</h2>" in found["map.html"]


def test_areas_above_the_themes_are_in_the_report_and_the_map_data():
    frames = tiny_tables(grouped=True)
    themes = frames["themes"]
    named = themes["theme"] >= 0
    frames["themes"] = themes.assign(
        area=np.where(named, 0, -1).astype(np.int32),
        area_label=np.where(named, "all of <learning>", ""),
    )
    found = rendered(frames)
    index = found["index.html"]
    assert '<th class="sortable">Area</th>' in index and "all of &lt;learning&gt;" in index
    assert "grouped in 1 areas" in index
    data = island(found["map.html"], "paper-data")
    area = {"id": 0, "label": "all of <learning>", "size": 4, "themes": [0], "x": 1.5, "y": 2.0}
    assert data["areas"] == [area]
    assert data["themes"][0]["area"] == 0
    assert '<option value="areas">areas</option>' in found["map.html"]


def test_one_topic_per_theme_shows_no_theme_level_and_says_what_is_missing():
    found = rendered(tiny_tables())
    index = found["index.html"]
    assert '<table id="themes"' not in index and '<div id="theme-chart"' not in index
    assert '<th class="sortable">Theme</th>' not in index and "themes)" not in index
    assert "<h2>Topics</h2>" in found["map.html"]
    assert '<table id="quality"' in index and "BERTopic defaults" not in index
    assert "Run the baseline target" in index and "Run the stability target" in index
    assert "<td>npmi mean</td>" in index and "<td>labels unique</td>" in index


def test_the_label_check_is_a_table_of_its_own_from_metrics_json():
    frames = tiny_tables(grouped=True)
    check = frames["metrics"]["label_check"]
    check["topics"].update(top1=0.4567, mrr=0.61234)  # figures the page cannot compute itself
    index = rendered(frames)["index.html"]
    assert '<table id="label-check"' in index and f"Each of the {check['papers']} papers" in index
    cells = '<td class="num">2</td><td class="num">45.7%</td><td class="num">0.612</td>'
    assert f'<tr><td>Topic labels</td>{cells}<td class="num">50.0%</td></tr>' in index
    assert "<td>BERTopic&#39;s default names of the same topics</td>" in index
    assert '<tr><td>Theme labels</td><td class="num">1</td>' in index  # one theme: chance 100%
    assert "<td>label check" not in index  # not flattened into the quality table as well
    one_level = rendered(tiny_tables())["index.html"]  # no theme level shown: no theme row
    assert "<td>Topic labels</td>" in one_level and "<td>Theme labels</td>" not in one_level


def test_representative_papers_come_from_the_topics_table():
    frames = tiny_tables()
    index = rendered(frames)["index.html"]
    for doc_id in ("p1", "p2", "p3", "p4"):
        assert f'href="map.html#paper={doc_id}"' in index
    assert 'href="map.html#paper=p0"' not in index  # the unassigned group lists none
    frames["topics"]["representative_docs"] = [[], ["p2", "not an id"], ["p3"]]
    index = rendered(frames)["index.html"]
    assert 'href="map.html#paper=p2"' in index and "<li>not an id</li>" in index
    assert 'href="map.html#paper=p4"' not in index


def test_the_marks_are_explained_in_visible_text_beside_each_table():
    index = rendered(tiny_tables(grouped=True))["index.html"]
    legends = re.findall(r'<p class="legend">(.*?)</p>', index, flags=re.S)
    assert len(legends) == 3  # the comparison, the themes and the topics
    text = re.sub(r"<[^>]+>", "", legends[0])
    assert "▲ significantly over-represented and ▼ significantly under-represented" in text
    assert "|z| ≥ 1.96" in text
    one_venue = rendered(tiny_tables(venues=["ICML"] * 5))["index.html"]
    assert "no differences are marked" in one_venue and "▲ significantly" not in one_venue

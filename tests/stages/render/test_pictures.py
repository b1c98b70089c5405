"""The report's pictures: the themes -> topics treemap (sized by papers, coloured by venue
lean), each topic's term bars (c-TF-IDF weights from topics.parquet) and the static map preview
(an inline SVG linking to the map), built from the stages' own tables."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from pipeline.colours import UNASSIGNED_COLOUR, topic_colour
from pipeline.stages.render.pictures import map_preview, preview_sample, term_bars
from pipeline.stages.render.treemap import treemap_chart
from pipeline.tables import paper_frame
from tests.support.render_frames import island, rendered, tiny_tables


def _treemap(frames) -> dict:
    return island(rendered(frames)["index.html"], "chart-data")[-1]


def test_treemap_nests_topics_in_themes_sized_by_papers():
    frames = tiny_tables(grouped=True)
    entry = _treemap(frames)
    assert entry["id"] == "treemap"
    trace = entry["figure"]["data"][0]
    assert trace["type"] == "treemap" and trace["branchvalues"] == "total"
    # one root, the theme, its topics; the unassigned papers left out
    assert trace["ids"] == ["all", "theme-0", "topic-0", "topic-1"]
    assert trace["parents"] == ["", "all", "theme-0", "theme-0"]
    assert trace["values"] == [4, 4, 2, 2]  # themes.parquet's and topics.parquet's sizes
    assert trace["labels"][1] == "learning &lt;theory&gt;"  # escaped for plotly's markup


def test_treemap_colour_is_the_venue_lean_from_venue_topics():
    frames = tiny_tables(grouped=True)
    rows = frames["venue_topics"]
    topic0 = (rows["level"] == "topic") & (rows["id"] == 0)
    rows.loc[topic0 & (rows["venue"] == "ICLR"), "share"] = 0.9  # a figure only compare has
    rows.loc[topic0 & (rows["venue"] == "ICML"), "share"] = 0.1
    trace = _treemap(frames)["figure"]["data"][0]
    lean = dict(zip(trace["ids"], trace["marker"]["colors"], strict=True))
    assert lean["topic-0"] == pytest.approx(80.0)  # ICLR's share minus ICML's, in points
    hovers = dict(zip(trace["ids"], trace["hovertext"], strict=True))
    assert hovers["topic-0"].endswith("<br>ICLR: 90.0% of its papers<br>ICML: 10.0% of its papers")
    assert lean["topic-1"] == pytest.approx(100 * (1 / 2 - 1 / 3), abs=0.01)
    marker = trace["marker"]
    assert marker["cmid"] == 0 and marker["cmin"] == -marker["cmax"] == -80.0
    ticks = marker["colorbar"]["ticktext"]
    assert "more ICML" in ticks[0] and "more ICLR" in ticks[-1]  # which side is which venue
    assert marker["colorscale"][0][1] != marker["colorscale"][-1][1]


def test_treemap_with_one_venue_colours_by_theme():
    frames = tiny_tables(venues=["ICML"] * 5, grouped=True)
    trace = _treemap(frames)["figure"]["data"][0]
    assert trace["marker"]["colors"][1:] == [topic_colour(0)] * 3  # theme 0's colour throughout
    assert "colorscale" not in trace["marker"]
    flat = _treemap(tiny_tables(venues=["ICML"] * 5))["figure"]["data"][0]
    assert flat["parents"] == ["", "all", "all"]  # no theme level: the topics alone
    assert flat["marker"]["colors"][1:] == [topic_colour(0), topic_colour(1)]


def test_no_treemap_without_an_assigned_topic():
    frames = tiny_tables()
    topics = frames["topics"]
    ids = treemap_chart(topics, None, frames["venue_topics"]).data[0].ids
    assert ids == ("all", "topic-0", "topic-1")
    frames["clusters"]["topic"] = np.int32(-1)
    frames["topics"] = topics[topics["topic"] < 0].assign(size=np.int32(5))
    frames["themes"] = frames["themes"][frames["themes"]["theme"] < 0]
    from pipeline.config import CompareConfig
    from pipeline.stages import compare

    frames["venue_topics"] = compare.make_venue_topics(
        frames["documents"], frames["clusters"], frames["topics"], frames["themes"], CompareConfig()
    )
    index = rendered(frames)["index.html"]
    assert 'id="treemap"' not in index
    assert [c["id"] for c in island(index, "chart-data")] == []


def test_term_bars_are_the_topics_ctfidf_weights_scaled_to_its_largest():
    bars = term_bars(["optimal transport", "wasserstein", "sinkhorn"], [0.2, 0.4, 0.1])
    assert [b["term"] for b in bars] == ["optimal transport", "wasserstein", "sinkhorn"]
    assert [b["percent"] for b in bars] == [50.0, 100.0, 25.0]
    assert [b["weight"] for b in bars] == [0.2, 0.4, 0.1]
    assert term_bars([], []) == []
    assert [b["percent"] for b in term_bars(["a"], [0.0])] == [0.0]
    with pytest.raises(ValueError):
        term_bars(["a", "b"], [0.1])


def test_each_topic_row_shows_its_bars_in_a_disclosure_without_script():
    frames = tiny_tables()
    index = rendered(frames)["index.html"]
    row = re.search(
        r"<details><summary>optimal transport, wasserstein</summary>(.*?)</details>",
        index,
        flags=re.S,
    )
    assert row, "the topic's terms open onto their bars"
    widths = re.findall(r'class="bar" style="width:([\d.]+)%;background:(#\w+)"', row.group(1))
    assert widths == [("100.0", topic_colour(0)), ("38.7", topic_colour(0))]  # 0.31, 0.12
    assert re.findall(r'class="weight">([\d.]+)<', row.group(1)) == ["0.310", "0.120"]


def test_preview_sample_is_deterministic_spread_and_bounded():
    assert preview_sample(5, limit=10).tolist() == [0, 1, 2, 3, 4]
    picked = preview_sample(10_000, limit=2_000)
    assert len(picked) == 2_000 and picked[0] == 0 and picked[-1] == 9_999
    assert set(np.diff(picked).tolist()) <= {5, 6}  # evenly spread
    assert picked.tolist() == preview_sample(10_000, limit=2_000).tolist()


def test_preview_draws_the_papers_coloured_as_on_the_map_inside_its_box():
    frames = tiny_tables()
    frame = paper_frame(frames["documents"], frames["clusters"], frames["topics"])
    preview = map_preview(frame)
    assert preview["shown"] == preview["papers"] == 5
    colours = [g["colour"] for g in preview["groups"]]
    assert colours == [UNASSIGNED_COLOUR, topic_colour(0), topic_colour(1)]  # unassigned beneath
    points = [p for g in preview["groups"] for p in g["points"]]
    xs, ys = zip(*points, strict=True)
    assert 0 <= min(xs) and max(xs) <= preview["width"] and 0 <= min(ys) <= preview["height"]
    # the map's highest and rightmost paper (p1 of topic 1, at 10, 3.5) is drawn at the top
    # right (SVG's y grows downwards), its lowest (p0, unassigned, y -4.5) at the bottom
    assert (max(xs), min(ys)) in preview["groups"][2]["points"]
    assert preview["groups"][0]["points"] == [(xs[0], max(ys))]
    big = pd.concat([frame] * 900, ignore_index=True)
    big["doc_id"] = [f"d{i:05d}" for i in range(len(big))]
    assert map_preview(big, limit=1_000)["shown"] == 1_000
    # the same papers in another order give the same picture (sampled in doc_id order)
    shuffled = big.sample(frac=1, random_state=1)
    assert map_preview(shuffled, limit=1_000) == map_preview(big, limit=1_000)


def test_the_preview_is_an_inline_svg_linking_to_the_map():
    index = rendered(tiny_tables())["index.html"]
    link = re.search(
        r'<a id="map-preview" href="map.html#view=combined">\s*<svg (.*?)</svg></a>',
        index,
        flags=re.S,
    )
    assert link, "the preview is a link to the map"
    assert 'role="img"' in link.group(1) and "<title" in link.group(1)
    assert link.group(1).count("<circle") == 5 and link.group(1).count('r="2.6"') == 5

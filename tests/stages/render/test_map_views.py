"""The map's data for its year filter, venue views and colours (shaping.map_data): the years
offered and each paper's year, the venue layout and the words of its button, and topic colours
that are theme shades when topics outnumber the palette (distinct again within one theme)."""

from __future__ import annotations

from pipeline.colours import PALETTE, topic_colour, topic_colours, track_colour, year_colours
from pipeline.config import RenderConfig
from pipeline.labels import theme_level
from pipeline.stages.render import make_pages
from pipeline.stages.render.mapfiles import decode_typed_array
from pipeline.stages.render.pictures import map_preview
from pipeline.tables import paper_frame
from tests.support.many_venues import eight_venues, years_corpus
from tests.support.render_frames import island, rendered, tiny_tables
from tests.support.synthetic_corpus import corpus


def _map_data(c) -> dict:
    frames = (c.documents, c.embeddings, c.clusters, c.topics, c.themes, c.venue_topics)
    pages = make_pages(*frames, c.metrics, RenderConfig())
    return island(pages["map.html"], "paper-data"), pages["map.html"]


def test_the_years_the_filter_offers_and_each_papers_year():
    built = years_corpus(300, undated=9)
    data, _ = _map_data(built.corpus)
    assert data["years"] == {"years": [2020, 2021, 2022, 2023, 2025], "undated": 9}
    years = decode_typed_array(data["papers"]["year"]).tolist()
    documents = built.corpus.documents.sort_values("doc_id")
    expected = documents["year"].fillna(0).astype(int).tolist()
    assert years == expected and years.count(0) == 9
    assert data["year_colours"] == year_colours(data["years"]["years"])


def test_the_tracks_and_each_papers_track():
    built = years_corpus(90, undated=0)
    built.corpus.documents["track"] = ["", "Oral", "Workshop"] * 30
    data, page = _map_data(built.corpus)
    assert data["tracks"] == ["no track", "Oral", "Workshop"]
    assert data["track_colours"] == [track_colour(k) for k in range(3)]
    tracks = decode_typed_array(data["papers"]["track"]).tolist()
    expected = built.corpus.documents.sort_values("doc_id")["track"].tolist()
    assert [data["tracks"][k] for k in tracks] == [t or "no track" for t in expected]
    assert '<option value="track">by track</option>' in page
    assert '<option value="year">by year</option>' in page
    one_track = rendered(tiny_tables())["map.html"]  # one track, one year: neither is offered
    assert 'value="track"' not in one_track and 'value="year"' not in one_track


def test_eight_venues_are_small_multiples_and_one_venue_is_a_single_map():
    data, page = _map_data(eight_venues(20).corpus)
    assert data["venue_layout"] == "small_multiples"
    assert data["venues_label"] == "Venues as small multiples" and data["venues_label"] in page
    assert len(set(data["venue_colours"])) == 8
    frames = tiny_tables(venues=["ICML"] * 5)
    page = rendered(frames)["map.html"]
    data = island(page, "paper-data")
    assert data["venue_layout"] == "single" and "Venues side by side" not in page
    assert island(rendered(tiny_tables())["map.html"], "paper-data")["venue_layout"] == (
        "side_by_side"
    )


def test_many_topics_are_coloured_as_theme_shades_distinct_within_a_theme():
    c = corpus(1200, n_topics=len(PALETTE) + 12, n_themes=5, seed=2)
    data, _ = _map_data(c)
    themes = theme_level(c.themes)
    expected = topic_colours(c.topics, themes)
    entries = [t for t in data["topics"] if t["id"] >= 0]
    assert {t["id"]: t["colour"] for t in entries} == {t["id"]: expected[t["id"]] for t in entries}
    assert any(t["colour"] != topic_colour(t["id"]) for t in entries)  # shades, not the cycle
    for theme in {t["theme"] for t in entries}:
        members = [t["theme_colour"] for t in entries if t["theme"] == theme]
        assert len(set(members)) == len(members)  # a theme shown alone: distinct colours
    preview = map_preview(paper_frame(c.documents, c.clusters, c.topics), expected)
    assert {g["colour"] for g in preview["groups"]} <= set(expected.values())


def test_the_map_tab_title_says_map_once():
    page = rendered(tiny_tables())["map.html"]
    title = page.split("<title>")[1].split("</title>")[0]
    assert title.endswith(" topic map · map") and title.count("topic map") == 1


def test_the_reading_lists_key_is_the_maps_title_so_a_rebuild_keeps_it():
    """The key the map's reading list is kept under (map-reading.js): the same for every
    rebuild of a map under one title, another for another title."""
    frames = tiny_tables()
    keys = [
        island(rendered(frames, config=RenderConfig(title=title))["map.html"], "paper-data")[
            "build_key"
        ]
        for title in ("Our map", "Our map", "Their map")
    ]
    assert keys[0] == keys[1] != keys[2] and len(keys[0]) == 12
    shuffled = {**frames, "documents": frames["documents"].iloc[::-1].reset_index(drop=True)}
    made = island(rendered(shuffled)["map.html"], "paper-data")["build_key"]
    assert made == island(rendered(frames)["map.html"], "paper-data")["build_key"]

"""The map in headless Chromium: offline, error-free, every paper drawn, search, click-through to
similar papers, topic and theme isolation, links into the map, no injection; screenshots."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

from pipeline import schemas, tables
from tests.support.browser_site import (
    GL_PIXELS,
    HOSTILE_ABSTRACT,
    HOSTILE_LABEL,
    HOSTILE_PAGE_TITLE,
    HOSTILE_THEME,
    HOSTILE_TITLE,
    HOSTILE_VENUE,
    MAP_FILES,
    MAP_READY,
    PAPER_POINTS,
    PAPERS_IN_DATA,
    PLOTLY_TEXT,
    local_files,
    outside,
    pwned,
    render_site,
    screenshot,
    shards_loaded,
    write_hostile_site,
)
from tests.support.synthetic_corpus import corpus

pytestmark = pytest.mark.browser


def _documents(folder: Path) -> pd.DataFrame:
    return tables.read_table(folder / "documents.parquet", schemas.DOCUMENTS)


def _point_position(page, index: int) -> dict:
    """Where paper `index` (its position in the page's data) is drawn, in page pixels."""
    return page.evaluate(
        """(index) => {
            const gd = document.getElementById('topic-map');
            const drawn = window.TopicMap.instance.figure.drawn;
            for (const trace of gd._fullData) {
                if (!trace.uid.startsWith('papers-')) continue;
                const i = drawn.get(trace.uid).indexOf(index);
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
    return page.evaluate("(id) => window.TopicMap.instance.indexById.get(id)", doc_id)


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
    query = text.strip().lower()
    page.wait_for_function("(q) => window.TopicMap.instance.state.query === q", arg=query)
    page.wait_for_timeout(200)
    return int(page.get_attribute("#match-count", "data-count"))


@pytest.mark.slow  # needs the bundled build
def test_bundled_map_draws_every_paper_offline_and_searches(bundled_build: Path, open_offline):
    state = open_offline(bundled_build / "map.html")
    page = state.page
    page.wait_for_timeout(500)
    assert state.blocked == [] and outside(state) == [] and state.errors == []
    assert local_files(state) == MAP_FILES  # no paper text is loaded to draw the map

    assert page.evaluate(PAPER_POINTS) == 76
    assert page.evaluate(PAPERS_IN_DATA) == 76
    assert page.evaluate(GL_PIXELS) > 0  # the WebGL canvas holds the points
    assert page.inner_text("#match-count") == "76 papers"
    titles = page.evaluate(
        "[...document.querySelectorAll('#topic-map .annotation-text')].map(a => a.textContent)"
    )
    assert "ICLR  19 papers" in titles and "ICML  57 papers" in titles
    screenshot(page, bundled_build, "map")

    # search: the matching papers stay drawn in colour and are counted, case-insensitively
    documents = _documents(bundled_build)
    text = (documents["title"].fillna("") + "\n" + documents["abstract"]).str.lower()
    for needle in ("Graph", "federated"):
        expected = int(text.str.contains(needle.lower(), regex=False).sum())
        assert 0 < expected < 76, needle
        assert _search(page, needle) == expected
        assert page.evaluate(PAPER_POINTS) == expected
        assert page.inner_text("#match-count") == f"{expected} of 76 papers match"
    screenshot(page, bundled_build, "map_search")
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


@pytest.mark.slow  # needs the bundled build
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
    assert page.evaluate("window.TopicMap.instance.state.selected") == index
    screenshot(page, bundled_build, "map_panel")

    # a neighbour re-focuses the panel on that paper and rings it on the map
    target = int(neighbours.nth(2).get_attribute("data-index"))
    neighbours.nth(2).click()
    page.wait_for_timeout(300)
    assert page.evaluate("window.TopicMap.instance.state.selected") == target  # (index 0 included)
    shown = page.get_attribute("#paper-detail", "data-paper")
    assert shown != first
    assert page.text_content("#paper-abstract") == documents.loc[shown, "abstract"]
    assert page.locator("#paper-neighbours button").count() == 5
    rings = page.evaluate(
        "[...document.querySelectorAll('#focus-rings circle')].map(c => +c.dataset.index)"
    )
    assert target in rings and len(rings) == 6  # the paper and its five neighbours
    page.keyboard.press("Escape")
    assert page.is_hidden("#paper-detail")
    assert state.errors == []


@pytest.mark.slow  # needs the bundled build
def test_bundled_topic_list_shows_one_topic_alone(bundled_build: Path, open_offline):
    state = open_offline(bundled_build / "map.html")
    page = state.page
    topics = tables.read_table(bundled_build / "topics.parquet", schemas.TOPICS)
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


def test_links_open_the_map_on_a_theme_or_a_paper(tmp_path: Path, open_offline):
    synthetic = corpus(400)
    render_site(tmp_path, synthetic)
    themes = synthetic.themes[synthetic.themes["theme"] >= 0]
    theme = themes.iloc[-1]
    state = open_offline(tmp_path / "index.html")
    page = state.page
    page.click(f"#themes a[href='map.html#theme={theme['theme']}']")
    page.wait_for_function(MAP_READY)
    page.wait_for_timeout(300)
    assert page.evaluate(PAPER_POINTS) == theme["size"]
    pressed = page.locator("#topic-list button[aria-pressed=true]")
    assert pressed.get_attribute("data-kind") == "theme"
    assert pressed.get_attribute("data-id") == str(theme["theme"])
    doc_id = synthetic.topics.iloc[-1]["representative_docs"][0]
    page.goto((tmp_path / "map.html").as_uri() + f"#paper={doc_id}")
    page.wait_for_function(MAP_READY)
    page.wait_for_selector("#paper-detail:not([hidden])")
    assert page.get_attribute("#paper-detail", "data-paper") == doc_id
    assert state.errors == [] and state.blocked == []


@pytest.mark.slow  # needs the bundled build
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


def test_hostile_text_never_runs_on_the_map(tmp_path: Path, open_offline):
    site = write_hostile_site(tmp_path)
    state = open_offline(site / "map.html")
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
    page.select_option("#colour-by", "venue")  # the venue key lists the venues' names
    page.wait_for_timeout(300)

    assert not pwned(page)
    assert page.evaluate("document.querySelectorAll('img, i').length") == 0
    assert "<i onmouseover" in page.text_content("#topic-list")  # the label, as characters
    assert HOSTILE_VENUE in page.text_content("#venue-key")
    # what plotly draws as SVG text shows the characters: the panel titles (venues); and so do
    # the labels over the plot: zoomed out, the theme's label; then the topics' labels
    # (the count shortened to "2" where the header's panel is too narrow for "2 papers")
    headers = page.evaluate(PLOTLY_TEXT, "topic-map")
    assert any(h in (f"{HOSTILE_VENUE}  2 papers", f"{HOSTILE_VENUE}  2") for h in headers)
    assert set(_drawn_labels(page)) == {HOSTILE_THEME}  # in each venue's panel
    page.select_option("#label-mode", "topics")
    page.wait_for_timeout(300)
    assert HOSTILE_LABEL in _drawn_labels(page)
    assert page.title() == f"{HOSTILE_PAGE_TITLE} · map"  # render.title
    assert page.text_content("header h1") == HOSTILE_PAGE_TITLE
    assert not pwned(page) and page.evaluate("document.querySelectorAll('img, i, b').length") == 0
    assert state.errors == [] and state.blocked == []
    # nothing but the folder's own files was fetched: no injected <img src=x> either
    assert local_files(state) - shards_loaded(state) == MAP_FILES
    screenshot(page, site, "map_hostile")


def test_3401_papers_draw_search_and_click_in_time(tmp_path: Path, open_offline):
    """The real corpus's size, from a synthetic corpus: every point drawn, search, click."""
    synthetic = corpus(3401)
    render_site(tmp_path, synthetic)
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


def _drawn_labels(page) -> list[str]:
    """The topic or theme labels on the map now (the layer over the plot, not plotly's)."""
    return page.evaluate(
        "[...document.querySelectorAll('#map-labels .map-label')].map(a => a.textContent)"
    )


# (venue colour, topic colour, drawn colour) of every coloured paper; a point's drawn colour is
# the RGBA array (0-1) its trace gives it, as #rrggbb
DRAWN_COLOURS = """() => {
    const data = window.TopicMap.instance.data;
    const topic = new Map(data.DATA.topics.map((t) => [t.id, t.colour]));
    const drawnColour = (marker, value) => '#' + value.slice(0, 3)
        .map((c) => Math.round(c * 255).toString(16).padStart(2, '0')).join('');
    return document.getElementById('topic-map').data
        .filter((t) => t.uid.startsWith('papers-'))
        .flatMap((t) => [...window.TopicMap.instance.figure.drawn.get(t.uid)].map((i, k) => [
            data.DATA.venue_colours[data.venue[i]],
            data.topic[i] >= 0 ? topic.get(data.topic[i]) : null,
            drawnColour(t.marker, t.marker.color[k])]));
}"""


def test_the_map_opens_combined_colours_by_venue_and_labels_by_zoom(tmp_path, open_offline):
    synthetic = corpus(400)
    render_site(tmp_path, synthetic)
    state = open_offline(tmp_path / "index.html")
    page = state.page
    page.click("#link-combined")  # the report's link: map.html#view=combined
    page.wait_for_function(MAP_READY)
    page.wait_for_timeout(300)
    assert page.url.endswith("map.html#view=combined")
    assert page.get_attribute("#view-switch button[data-view=combined]", "aria-pressed") == "true"
    assert page.evaluate("document.getElementById('topic-map')._fullLayout.xaxis2") is None
    assert page.evaluate(PAPER_POINTS) == 400

    # zoomed out: theme labels; zoomed in on a topic's centre: topic labels
    themes = set(synthetic.themes["label"])
    topics = set(synthetic.topics["label"])
    zoomed_out = _drawn_labels(page)
    assert zoomed_out and set(zoomed_out) <= themes, zoomed_out
    page.evaluate(
        """() => {
            const data = window.TopicMap.instance.data.DATA;
            const t = data.topics[0];
            const dx = (data.x_range[1] - data.x_range[0]) / 8;
            const dy = (data.y_range[1] - data.y_range[0]) / 8;
            return Plotly.relayout('topic-map', {
                'xaxis.range': [t.x - dx, t.x + dx], 'yaxis.range': [t.y - dy, t.y + dy]});
        }"""
    )
    page.wait_for_timeout(500)
    zoomed_in = _drawn_labels(page)
    assert zoomed_in and set(zoomed_in) <= topics, zoomed_in
    assert synthetic.topics.loc[synthetic.topics["topic"] == 0, "label"].iloc[0] in zoomed_in

    # colour by venue: every paper takes its venue's colour, and the key shows the venues
    def colours() -> list[list[str]]:
        """(venue colour, topic colour, drawn colour) of every coloured paper."""
        return page.evaluate(DRAWN_COLOURS)

    by_topic = [c for c in colours() if c[1] is not None]
    assert by_topic and all(drawn == topic for _, topic, drawn in by_topic)
    assert "shown" not in (page.get_attribute("#venue-key", "class") or "")
    page.select_option("#colour-by", "venue")
    page.wait_for_timeout(300)
    by_venue = colours()
    assert len(by_venue) == 400 and all(drawn == venue for venue, _, drawn in by_venue)
    assert len({venue for venue, _, _ in by_venue}) == 2
    assert "shown" in page.get_attribute("#venue-key", "class")
    assert page.text_content("#venue-key") == "ICLRICML"
    assert state.errors == [] and state.blocked == []


def test_a_theme_label_too_long_for_its_panel_is_shortened_not_left_out(tmp_path, open_offline):
    """A theme labelled `shared phrase: heads` wider than the venue's panel shows its shared
    phrase there, not nothing."""
    synthetic = corpus(300, n_topics=6, n_themes=2)
    heads = ", ".join(f"topic head number {k}" for k in range(8))  # far wider than a panel
    synthetic.themes["label"] = [f"shared phrase {h}: {heads}" for h in synthetic.themes["theme"]]
    render_site(tmp_path, synthetic)
    page = open_offline(tmp_path / "map.html").page
    page.wait_for_function(MAP_READY)
    page.wait_for_timeout(300)
    drawn = _drawn_labels(page)
    assert drawn and all(label.startswith("shared phrase ") for label in drawn), drawn
    assert all(":" not in label for label in drawn), drawn
    assert {label.split()[-1] for label in drawn} == {"0", "1"}


def test_a_wide_label_near_a_panels_edge_is_moved_in_not_left_out(tmp_path, open_offline):
    """A label narrower than its panel but too wide to stand at its theme's x is drawn whole,
    moved in from the edge (the 9,672's largest theme was left out so)."""
    render_site(tmp_path, corpus(300, n_topics=6, n_themes=2))
    page = open_offline(tmp_path / "map.html").page
    page.wait_for_function(MAP_READY)
    label = "w" * 40  # 40 x 13 x 0.62 + 8 = 330 px: neither centred, left nor right at 100 px
    placed = page.evaluate(
        """(label) => window.TopicMap.labels.placements(
            [{ id: 0, size: 10, x: 0.25, y: 0.5, label }],
            { w: 400, h: 300, xr: [0, 1], yr: [0, 1] }, "themes")""",
        label,
    )
    assert placed == [{"text": label, "x": 0, "y": 150, "anchor": "left"}]

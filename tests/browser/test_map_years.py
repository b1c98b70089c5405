"""The map's colour by year and by track, its year histogram and its state in the link, in
headless Chromium from file://: the year scale's colours and key (undated papers grey), the
tracks' colours, the histogram's bars (per year and venue, following the search and the topic
list) brushed by the mouse and by the keyboard, and every field of the state written into
map.html#... and restored from it (old links too); offline, without console errors and with
no serious or critical axe-core violation."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pytest

from pipeline.colours import MAP_COLOURS, year_colours
from pipeline.config import CompareConfig, RenderConfig
from pipeline.stages import compare
from pipeline.stages.render import make_pages
from tests.support.browser_site import PAPERS_IN_DATA, axe_violations, screenshot, serious
from tests.support.browser_site import write_site as write_files
from tests.support.many_venues import eight_venues, years_corpus

pytestmark = pytest.mark.browser

TRACKS = ["", "Oral", "Workshop"]
YEARS = [2020, 2021, 2022, 2023, 2025]
DRAWN_COLOURS = """() => { const m = window.TopicMap.instance, out = [];
    for (let i = 0; i < m.data.N; i++) out.push(m.figure.paperColour(i)); return out; }"""
BARS = """() => Object.fromEntries([...document.querySelectorAll('#year-histogram g')]
    .map(g => [g.dataset.year, Number(g.dataset.count)]))"""
STATE = """() => { const s = window.TopicMap.instance.state; return {view: s.view,
    highlight: s.highlight, colour: s.colour, years: s.years, query: s.query, filter: s.filter,
    selected: s.selected}; }"""
IDLE = "() => document.getElementById('topic-map').dataset.ready === 'true'"


def _write(folder: Path, c, venue_years) -> Path:
    frames = (c.documents, c.embeddings, c.clusters, c.topics, c.themes, c.venue_topics)
    write_files(folder, make_pages(*frames, c.metrics, RenderConfig(), venue_years=venue_years))
    return folder / "map.html"


@pytest.fixture(scope="module")
def years(tmp_path_factory):
    """Two venues over 2020-2025 (no 2024), 12 papers undated, three tracks."""
    built = years_corpus(700, undated=12)
    documents = built.corpus.documents
    documents["track"] = [TRACKS[i % 3] for i in range(len(documents))]
    return _write(tmp_path_factory.mktemp("years"), built.corpus, built.venue_years), built


@pytest.fixture(scope="module")
def one_venue(tmp_path_factory):
    """The same corpus as one venue's."""
    built = years_corpus(500, undated=0, seed=7)
    c = built.corpus
    c.documents["venue"] = c.documents["conference"] = "ICLR"
    d, k, t, h = c.documents, c.clusters, c.topics, c.themes
    c.venue_topics = compare.make_venue_topics(d, k, t, h, CompareConfig())
    venue_years = compare.make_venue_years(d, k, t, h, CompareConfig())
    return _write(tmp_path_factory.mktemp("one-venue"), c, venue_years), built


def _sorted_documents(built):
    return built.corpus.documents.sort_values("doc_id", ignore_index=True)


def _kept(documents, low: int, high: int) -> np.ndarray:
    year = documents["year"].astype("float").to_numpy()
    return np.isnan(year) | ((year >= low) & (year <= high))


def _open_at(open_offline, path: Path, link: str):
    """The map opened in a new tab at map.html<link> (a load, not a hash change)."""
    state = open_offline(path)
    state.page.goto("about:blank")
    state.page.goto(path.as_uri() + link)
    state.page.wait_for_function(IDLE)
    return state


def _settle(page, condition: str) -> None:
    page.wait_for_function(condition)
    page.wait_for_timeout(250)


def test_colour_by_year_is_the_year_scale_with_its_key_and_undated_papers_grey(years, open_offline):
    path, built = years
    state = open_offline(path)
    page = state.page
    page.select_option("#colour-by", "year")
    _settle(page, "() => window.TopicMap.instance.state.colour === 'year'")
    scale = dict(zip(YEARS, year_colours(YEARS), strict=True))
    documents = _sorted_documents(built)
    expected = [
        MAP_COLOURS["undated"] if np.isnan(y) else scale[int(y)]
        for y in documents["year"].astype("float")
    ]
    assert page.evaluate(DRAWN_COLOURS) == expected
    key = page.inner_text("#colour-key.shown").split()
    assert key == [*map(str, YEARS), "no", "year"]
    swatches = page.eval_on_selector_all(
        "#colour-key .swatch", "s => s.map(n => n.style.background)"
    )
    assert len(set(swatches)) == len(YEARS) + 1
    assert not page.is_visible("#venue-key")
    assert state.errors == [] and state.blocked == []
    assert serious(axe_violations(page)) == []
    screenshot(page, path.parent, "map_colour_by_year")


def test_colour_by_track_gives_each_track_its_colour_and_key(years, open_offline):
    path, built = years
    state = open_offline(path)
    page = state.page
    page.select_option("#colour-by", "track")
    _settle(page, "() => window.TopicMap.instance.state.colour === 'track'")
    documents = _sorted_documents(built)
    drawn = page.evaluate(DRAWN_COLOURS)
    by_track = {}
    for track, colour in zip(documents["track"], drawn, strict=True):
        by_track.setdefault(track, set()).add(colour)
    assert (
        all(len(c) == 1 for c in by_track.values()) and len(set(map(min, by_track.values()))) == 3
    )
    assert page.inner_text("#colour-key.shown").split("\n") == ["no track", "Oral", "Workshop"]
    page.select_option("#colour-by", "venue")
    _settle(page, "() => window.TopicMap.instance.state.colour === 'venue'")
    assert page.is_visible("#venue-key") and not page.is_visible("#colour-key")
    assert state.errors == [] and state.blocked == []


def _year_box(page, year: int) -> dict:
    return page.evaluate(
        """(y) => { const r = document.querySelector(`#year-histogram g[data-year="${y}"] rect`)
            .getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2,
            bottom: r.bottom - 2}; }""",
        year,
    )


def test_the_histogram_counts_each_year_and_a_drag_chooses_the_range(years, open_offline):
    path, built = years
    state = open_offline(path)
    page = state.page
    documents = _sorted_documents(built)
    counts = documents["year"].value_counts()
    assert page.evaluate(BARS) == {str(y): int(counts[y]) for y in YEARS}
    stacks = page.eval_on_selector_all(
        '#year-histogram g[data-year="2021"] rect', "rs => rs.map(r => r.getAttribute('fill'))"
    )
    assert len(stacks) == 2  # stacked by venue: ICLR and ICML
    start, end = _year_box(page, 2021), _year_box(page, 2023)
    page.mouse.move(start["x"], start["bottom"])
    page.mouse.down()
    page.mouse.move(end["x"], end["bottom"], steps=5)
    page.mouse.up()
    _settle(page, "() => window.TopicMap.instance.state.years?.to === 2023")
    assert page.evaluate(STATE)["years"] == {"from": 2021, "to": 2023}
    kept = int(_kept(documents, 2021, 2023).sum())
    assert page.evaluate(PAPERS_IN_DATA) == kept
    assert page.get_attribute("#match-count", "data-count") == str(kept)
    assert (page.input_value("#year-from"), page.input_value("#year-to")) == ("2021", "2023")
    outside = page.eval_on_selector_all(
        "#year-histogram g.out", "gs => gs.map(g => g.dataset.year)"
    )
    assert outside == ["2020", "2025"]
    # the search and the topic list narrow the bars; the range stays
    word = documents["abstract"].iloc[0].split()[1].lower()
    text = (documents["title"].fillna("") + "\x1f" + documents["abstract"]).str.lower()
    holds = text.str.contains(word, regex=False)
    page.fill("#search", word)
    _settle(page, f"() => window.TopicMap.instance.state.query === {word!r}")
    found = documents.loc[holds, "year"].value_counts()
    assert page.evaluate(BARS) == {str(y): int(found.get(y, 0)) for y in YEARS}
    both = int((holds.to_numpy() & _kept(documents, 2021, 2023)).sum())
    assert page.get_attribute("#match-count", "data-count") == str(both)
    page.fill("#search", "")
    _settle(page, "() => window.TopicMap.instance.state.query === ''")
    page.click('#topic-list button[data-kind="topic"][data-id="0"]')
    page.wait_for_timeout(300)
    topic0 = set(built.corpus.clusters.loc[built.corpus.clusters["topic"] == 0, "doc_id"])
    in_topic = documents["doc_id"].isin(topic0)
    per_year = documents.loc[in_topic, "year"].value_counts()
    assert page.evaluate(BARS) == {str(y): int(per_year.get(y, 0)) for y in YEARS}
    page.click("#show-all")
    page.dblclick("#year-histogram .year-area")  # all years again
    _settle(page, "() => window.TopicMap.instance.state.years === null")
    assert page.evaluate(PAPERS_IN_DATA) == len(documents)
    assert state.errors == [] and state.blocked == []


def test_the_histograms_ends_are_sliders_the_keyboard_moves(years, open_offline):
    path, built = years
    state = open_offline(path)
    page = state.page
    first, last = (
        "#year-histogram .year-handle[data-end='0']",
        "#year-histogram .year-handle[data-end='1']",
    )
    assert page.get_attribute(first, "role") == "slider"
    assert page.get_attribute(first, "aria-label") == "First year shown"
    assert page.get_attribute(last, "aria-label") == "Last year shown"
    page.focus(first)
    page.keyboard.press("ArrowRight")
    _settle(page, "() => window.TopicMap.instance.state.years?.from === 2021")
    assert page.get_attribute(first, "aria-valuenow") == "2021"
    page.focus(last)
    page.keyboard.press("ArrowLeft")  # 2025 -> 2023: the next year with papers
    _settle(page, "() => window.TopicMap.instance.state.years?.to === 2023")
    assert page.get_attribute(last, "aria-valuenow") == "2023"
    for _ in range(5):  # the last year stops at the first
        page.keyboard.press("ArrowLeft")
    _settle(page, "() => window.TopicMap.instance.state.years?.to === 2021")
    assert page.evaluate(STATE)["years"] == {"from": 2021, "to": 2021}
    documents = _sorted_documents(built)
    assert page.evaluate(PAPERS_IN_DATA) == int(_kept(documents, 2021, 2021).sum())
    page.keyboard.press("End")
    page.focus(first)
    page.keyboard.press("Home")
    _settle(page, "() => window.TopicMap.instance.state.years === null")
    # the selects set the range too, and the sliders follow them
    page.select_option("#year-from", "2022")
    _settle(page, "() => window.TopicMap.instance.state.years?.from === 2022")
    assert page.get_attribute(first, "aria-valuenow") == "2022"
    assert state.errors == [] and state.blocked == []
    assert serious(axe_violations(page)) == []


def test_the_histogram_of_one_venue_and_of_eight(one_venue, tmp_path, open_offline):
    path, built = one_venue
    state = open_offline(path)
    page = state.page
    counts = built.corpus.documents["year"].value_counts()
    assert page.evaluate(BARS) == {str(y): int(counts[y]) for y in YEARS}
    assert page.eval_on_selector_all(
        "#year-histogram g", "gs => gs.map(g => g.children.length)"
    ) == [2] * len(YEARS)  # one bar and its title a year
    page.focus("#year-histogram .year-handle[data-end='1']")
    page.keyboard.press("ArrowLeft")
    _settle(page, "() => window.TopicMap.instance.state.years?.to === 2023")
    assert state.errors == [] and state.blocked == []
    page.locator(".toolbar").screenshot(path=str(tmp_path / "toolbar_one_venue.png"))
    screenshot(page, path.parent, "map_years_one_venue")
    eight = eight_venues(40)
    state = open_offline(_write(tmp_path / "eight", eight.corpus, eight.venue_years))
    page = state.page
    stacks = page.eval_on_selector_all("#year-histogram g", "gs => gs.map(g => g.children.length)")
    assert stacks == [9] * 4  # 2020-2023, eight venues stacked and the title
    page.select_option("#colour-by", "year")
    _settle(page, "() => window.TopicMap.instance.state.colour === 'year'")
    assert state.errors == [] and state.blocked == []
    assert serious(axe_violations(page)) == []
    screenshot(page, tmp_path, "map_years_eight_venues")


def _hash(page) -> dict:
    return {k: v[0] for k, v in parse_qs(page.evaluate("location.hash").lstrip("#")).items()}


def test_every_field_of_the_state_is_in_the_link_and_restored_from_it(years, open_offline):
    path, built = years
    state = open_offline(path)
    page = state.page
    documents = _sorted_documents(built)
    word = documents["abstract"].iloc[0].split()[1]
    page.select_option("#highlight-venue", label="ICML")
    page.select_option("#colour-by", "year")
    page.select_option("#year-from", "2021")
    page.select_option("#year-to", "2023")
    page.fill("#search", word.upper())
    _settle(page, f"() => window.TopicMap.instance.state.query === {word.lower()!r}")
    page.click('#topic-list button[data-kind="topic"][data-id="1"]')
    page.wait_for_timeout(300)
    paper = page.evaluate(
        "() => { const s = window.TopicMap.instance.state; return s.active.indexOf(1); }"
    )
    assert paper >= 0
    page.evaluate(f"window.TopicMap.instance.select({paper})")
    page.wait_for_function("() => !document.getElementById('paper-detail').hidden")
    doc_id = documents["doc_id"].iloc[paper]
    link = _hash(page)
    assert link == {
        "view": "combined",
        "venue": "ICML",
        "colour": "year",
        "years": "2021-2023",
        "q": word.upper(),
        "topic": "1",
        "paper": doc_id,
    }
    shown = page.evaluate(STATE)
    count = page.get_attribute("#match-count", "data-count")
    again = _open_at(open_offline, path, page.evaluate("location.hash")).page
    again.wait_for_function(f"() => window.TopicMap.instance.state.selected === {paper}")
    again.wait_for_timeout(300)
    assert again.evaluate(STATE) == shown
    assert again.get_attribute("#match-count", "data-count") == count
    assert again.input_value("#search") == word.upper()
    assert (
        again.input_value("#colour-by") == "year" and again.input_value("#highlight-venue") == "1"
    )
    assert again.get_attribute("#paper-detail", "data-paper") == doc_id
    assert again.get_attribute(".year-handle[data-end='0']", "aria-valuenow") == "2021"
    assert again.evaluate(PAPERS_IN_DATA) == page.evaluate(PAPERS_IN_DATA)
    assert _hash(again) == link
    assert state.errors == [] and state.blocked == []


def test_old_links_still_open_and_a_link_the_map_cannot_show_is_ignored(years, open_offline):
    path, built = years
    documents = _sorted_documents(built)
    doc_id = documents["doc_id"].iloc[5]
    state = _open_at(open_offline, path, f"#paper={doc_id}&topic=0&view=combined")
    page = state.page
    page.wait_for_function("() => window.TopicMap.instance.state.selected === 5")
    shown = page.evaluate(STATE)
    assert shown["view"] == "combined" and shown["filter"] == {"kind": "topic", "id": 0}
    bad = _open_at(open_offline, path, "#years=3000-x&colour=plaid&venue=nowhere&topic=999&paper=x")
    page = bad.page
    page.wait_for_timeout(300)
    shown = page.evaluate(STATE)
    assert shown["years"] is None and shown["colour"] == "topic" and shown["highlight"] is None
    assert shown["filter"] is None and shown["selected"] is None
    assert page.evaluate("location.hash") == ""  # nothing it could show: the default map
    one = _open_at(open_offline, path, "#years=2022")
    page = one.page
    page.wait_for_function("() => window.TopicMap.instance.state.years?.to === 2022")
    assert page.evaluate(STATE)["years"] == {"from": 2022, "to": 2022}
    assert state.errors == bad.errors == one.errors == []
    assert state.blocked == bad.blocked == one.blocked == []


def test_many_years_have_a_scale_bar_for_a_key_and_a_bar_a_year(tmp_path, open_offline):
    built = years_corpus(400, undated=0, seed=11)
    documents = built.corpus.documents
    documents["year"] = [1985 + i % 39 for i in range(len(documents))]
    d, k, t, h = documents, built.corpus.clusters, built.corpus.topics, built.corpus.themes
    venue_years = compare.make_venue_years(d, k, t, h, CompareConfig())
    state = open_offline(_write(tmp_path, built.corpus, venue_years))
    page = state.page
    assert len(page.evaluate(BARS)) == 39
    page.select_option("#colour-by", "year")
    _settle(page, "() => window.TopicMap.instance.state.colour === 'year'")
    assert page.inner_text("#colour-key.shown").split() == ["1985", "2023"]
    background = page.eval_on_selector("#colour-key .year-scale", "n => n.style.background")
    colours = year_colours(list(range(1985, 2024)))
    rgb = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in (colours[0], colours[-1])]
    assert all(f"rgb({r}, {g}, {b})" in background for r, g, b in rgb)
    page.focus("#year-histogram .year-handle[data-end='0']")
    page.keyboard.press("PageUp")  # five years on
    _settle(page, "() => window.TopicMap.instance.state.years?.from === 1990")
    assert state.errors == [] and state.blocked == []

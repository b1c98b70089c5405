"""Taking papers away from the map in headless Chromium: a box and a lasso drawn with the mouse
(plotly's selection) in the combined view and in a venue's panel keep exactly the papers inside,
counted by venue, year and topic beside the map; a list (a selection, a topic) saved as CSV and
BibTeX by the page itself; the reading list starred in the panel and in a list, kept through a
reload and a rebuild of the same papers and apart from another map's; offline, keyboard
operable, without console errors and with no serious or critical axe-core violation."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from matplotlib.path import Path as Polygon

from pipeline.config import RenderConfig
from pipeline.stages.render import make_pages
from tests.support.browser_site import MAP_READY, axe_violations, screenshot, serious, write_site
from tests.support.many_venues import eight_venues
from tests.support.synthetic_corpus import corpus

pytestmark = pytest.mark.browser

N = 400
# the plot area of panel k in page pixels, and its axes' data -> pixel functions' results
PANEL_BOX = """(k) => {
    const gd = document.getElementById('topic-map'), s = k ? String(k + 1) : '';
    const xa = gd._fullLayout['xaxis' + s], ya = gd._fullLayout['yaxis' + s];
    const box = gd.getBoundingClientRect();
    return {left: box.left + xa._offset, top: box.top + ya._offset, w: xa._length, h: ya._length};
}"""
# what plotly reports of the last selection (its box's ranges or its lasso's points)
RECORD_SELECTION = """() => { window.__selected = null;
    document.getElementById('topic-map').on('plotly_selected', (e) => {
        window.__selected = e ? {range: e.range || null, lasso: e.lassoPoints || null} : null; });
}"""
SELECTION = "window.TopicMap.instance.state.selection !== null"
# the list named `name` shown: counted, its rows made (not busy loading their titles)
LISTED = """(name) => document.getElementById('list-name').textContent === name
    && !!document.querySelector('#list-counts dl')
    && !document.getElementById('match-list').hasAttribute('aria-busy')"""


def _render(folder: Path, c, title: str | None = None) -> Path:
    frames = (c.documents, c.embeddings, c.clusters, c.topics, c.themes, c.venue_topics)
    write_site(folder, make_pages(*frames, c.metrics, RenderConfig(title=title)))
    return folder / "map.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    built = corpus(N)
    return _render(tmp_path_factory.mktemp("select-map"), built), built


def _papers(built):
    """The papers as the page holds them: doc_id, venue, year, track, title, url, topic, x, y,
    label."""
    frame = built.documents.merge(built.clusters[["doc_id", "topic", "x", "y"]], on="doc_id")
    labels = dict(zip(built.topics["topic"], built.topics["label"], strict=True))
    return frame.assign(label=frame["topic"].map(labels)).set_index("doc_id")


def _drag(page, points: list[tuple[float, float]]) -> None:
    page.mouse.move(*points[0])
    page.mouse.down()
    for x, y in points[1:]:
        page.mouse.move(x, y, steps=6)
    page.mouse.up()


def _selected(page, recorded: bool = True) -> set[str]:
    """The doc_ids the map keeps once a selection is listed (`recorded`: and plotly reported
    it, RECORD_SELECTION)."""
    page.wait_for_function(f"() => {SELECTION}" + (" && !!window.__selected" if recorded else ""))
    page.wait_for_function(LISTED, arg="Selected papers")
    return set(
        page.evaluate(
            """() => { const m = window.TopicMap.instance, out = [];
            for (let i = 0; i < m.data.N; i++) if (m.state.active[i]) out.push(m.data.ids[i]);
            return out; }"""
        )
    )


def _counts(page) -> dict[str, str]:
    terms = page.locator("#list-counts dt").all_inner_texts()
    return dict(zip(terms, page.locator("#list-counts dd").all_inner_texts(), strict=True))


def test_a_box_in_the_combined_view_keeps_the_papers_inside_and_counts_them(site, open_offline):
    path, built = site
    state = open_offline(path)
    page = state.page
    page.evaluate("window.TopicMap.instance.setView('combined')")
    page.evaluate(RECORD_SELECTION)
    page.click("#drag-mode [data-drag=select]")
    assert page.evaluate("document.getElementById('topic-map')._fullLayout.dragmode") == "select"
    box = page.evaluate(PANEL_BOX, 0)
    x0, y0 = box["left"] + 0.25 * box["w"], box["top"] + 0.3 * box["h"]
    _drag(page, [(x0, y0), (x0 + 0.4 * box["w"], y0 + 0.35 * box["h"])])
    got = _selected(page)
    shape = page.evaluate("window.__selected.range")
    papers = _papers(built)
    (xl, xh), (yl, yh) = sorted(shape["x"]), sorted(shape["y"])
    inside = papers[papers["x"].between(xl, xh) & papers["y"].between(yl, yh)]
    assert 20 < len(inside) < N and got == set(inside.index)
    assert page.inner_text("#match-count") == f"{len(inside)} of {N} papers match"
    assert page.locator("#match-list li").count() == min(50, len(inside))
    counts = _counts(page)
    venues = inside["venue"].value_counts()
    assert counts["By venue"] == " · ".join(f"{v} {venues[v]}" for v in sorted(venues.index))
    years = inside["year"].value_counts()
    assert counts["By year"] == " · ".join(f"{y} {years[y]}" for y in sorted(years.index))
    biggest = Counter(inside["label"]).most_common(1)[0]
    assert counts["By topic"].startswith(f"{biggest[0]} ({biggest[1]})")
    assert state.errors == [] and state.blocked == []
    screenshot(page, path.parent, "map_selection_box")
    page.click("#clear-selection")
    page.wait_for_function("() => window.TopicMap.instance.state.selection === null")
    assert page.inner_text("#match-count") == f"{N} papers"


def test_a_lasso_in_a_venue_panel_keeps_that_venues_papers_inside(site, open_offline):
    path, built = site
    state = open_offline(path)
    page = state.page
    assert page.evaluate("window.TopicMap.instance.state.view") == "venues"
    page.evaluate(RECORD_SELECTION)
    page.click("#drag-mode [data-drag=lasso]")
    box = page.evaluate(PANEL_BOX, 1)  # the second panel: ICML
    corners = [(0.15, 0.2), (0.85, 0.3), (0.7, 0.85), (0.2, 0.7), (0.15, 0.2)]
    _drag(page, [(box["left"] + a * box["w"], box["top"] + b * box["h"]) for a, b in corners])
    got = _selected(page)
    lasso = page.evaluate("window.__selected.lasso")
    assert set(lasso) == {"x2", "y2"}  # drawn on the second panel's axes
    papers = _papers(built)
    within = Polygon(np.column_stack([lasso["x2"], lasso["y2"]])).contains_points(
        papers[["x", "y"]].to_numpy()
    )
    inside = papers[within & (papers["venue"] == "ICML").to_numpy()]
    assert 20 < len(inside) and got == set(inside.index)
    assert (papers[within]["venue"] == "ICLR").any()  # ICLR papers there are left out
    assert _counts(page)["By venue"] == f"ICML {len(inside)}"
    headers = page.evaluate(
        "() => document.getElementById('topic-map').layout.annotations.map(a => a.text)"
    )
    assert any(f"{len(inside)} of" in h and "ICML" in h for h in headers)
    assert state.errors == [] and state.blocked == []


def test_a_lasso_in_a_small_multiple_keeps_that_panels_venue(tmp_path, open_offline):
    """Eight venues in a grid: the panel lassoed is the venue selected, wherever the grid puts
    it (map-venues.js orders the panels)."""
    built = eight_venues(60)
    c = built.corpus
    frames = (c.documents, c.embeddings, c.clusters, c.topics, c.themes, c.venue_topics)
    pages = make_pages(*frames, c.metrics, RenderConfig(), venue_years=built.venue_years)
    write_site(tmp_path, pages)
    state = open_offline(tmp_path / "map.html")
    page = state.page
    page.evaluate(RECORD_SELECTION)
    page.click("#drag-mode [data-drag=lasso]")
    k = 4
    box = page.evaluate(PANEL_BOX, k)
    corners = [(0.05, 0.05), (0.95, 0.05), (0.95, 0.95), (0.05, 0.95), (0.05, 0.05)]
    _drag(page, [(box["left"] + a * box["w"], box["top"] + b * box["h"]) for a, b in corners])
    got = _selected(page)
    venue = page.evaluate(
        """(k) => { const m = window.TopicMap.instance;
        return window.TopicMap.venues.panels(m.data.DATA, m.state)[k].name; }""",
        k,
    )
    lasso = page.evaluate("window.__selected.lasso")
    papers = c.documents.merge(c.clusters[["doc_id", "x", "y"]], on="doc_id").set_index("doc_id")
    xs, ys = lasso[f"x{k + 1}"], lasso[f"y{k + 1}"]
    within = Polygon(np.column_stack([xs, ys])).contains_points(papers[["x", "y"]].to_numpy())
    inside = papers[within & (papers["venue"] == venue).to_numpy()]
    assert len(inside) > 10 and got == set(inside.index)
    assert _counts(page)["By venue"] == f"{venue} {len(inside)}"
    assert state.errors == [] and state.blocked == []


def _download(page, button: str) -> tuple[str, str]:
    with page.expect_download() as caught:
        page.click(button)
    download = caught.value
    return download.suggested_filename, Path(download.path()).read_text(encoding="utf-8")


def test_a_topic_saves_as_csv_and_bibtex(site, open_offline):
    path, built = site
    state = open_offline(path)
    page = state.page
    papers = _papers(built)
    topic = int(papers["topic"].value_counts().drop(-1, errors="ignore").index[0])
    page.click(f'#topic-list button[data-kind="topic"][data-id="{topic}"]')
    label = papers.loc[papers["topic"] == topic, "label"].iloc[0]
    page.wait_for_function(LISTED, arg=f"Topic “{label}”")
    name, text = _download(page, "#export-csv")
    assert name == f"topic-{topic}.csv"
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["doc_id", "title", "venue", "year", "track", "topic", "label", "url"]
    members = papers[papers["topic"] == topic]
    assert {r["doc_id"] for r in rows} == set(members.index) and len(rows) == len(members)
    for row in rows:
        paper = members.loc[row["doc_id"]]
        assert row["title"] == paper["title"] and row["venue"] == paper["venue"]
        assert row["year"] == str(paper["year"]) and row["track"] == paper["track"]
        assert row["topic"] == str(topic) and row["label"] == label
        assert row["url"] == paper["url"]
    name, text = _download(page, "#export-bibtex")
    assert name == f"topic-{topic}.bib"
    entries = re.findall(r"@inproceedings\{([^,]+),\n((?:  \w+ = \{.*\},\n)+)\}", text)
    assert len(entries) == len(members) == text.count("@inproceedings")
    keys = [key for key, _ in entries]
    assert len(set(keys)) == len(keys)
    for key, body in entries:
        doc_id = key.rsplit("_", 1)[1]
        paper = members.loc[doc_id]
        assert key == f"{paper['venue'].lower()}{paper['year']}_{doc_id}"
        assert f"  title = {{{{{paper['title']}}}}},\n" in body
        assert f"  booktitle = {{{paper['venue']}}},\n  year = {{{paper['year']}}}," in body
        assert f"  url = {{{paper['url']}}},\n" in body
    assert page.inner_text("#export-status") == f"Saved {len(members)} papers as topic-{topic}.bib"
    assert state.errors == [] and state.blocked == []


def test_an_export_whose_text_shard_is_missing_says_so(tmp_path, open_offline):
    built = corpus(N)
    path = _render(tmp_path, built)
    (tmp_path / "map-data" / "text-000.js").unlink()  # the unassigned papers' text
    page = open_offline(path).page
    page.click('#topic-list button[data-kind="topic"][data-id="-1"]')
    page.wait_for_function(LISTED, arg="Topic “Unassigned”")
    name, text = _download(page, "#export-csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    unassigned = int((built.clusters["topic"] < 0).sum())
    assert len(rows) == unassigned and all(r["title"] == r["url"] == "" for r in rows)
    assert all(r["venue"] and r["label"] == "Unassigned" for r in rows)
    assert page.inner_text("#export-status") == (
        f"Saved {unassigned} papers as topic-unassigned.csv ({unassigned} without title and link: "
        "their text failed)"
    )
    assert "could not be loaded" in page.inner_text("#panel-message")


def test_csv_and_bibtex_escape_their_special_characters(site, open_offline):
    page = open_offline(site[0]).page
    field = page.evaluate(
        "() => ['a, b', 'say \"hi\"', 'two\\nlines', ' edge', 'plain']"
        ".map(window.TopicMap.exporter.csvField)"
    )
    assert field == ['"a, b"', '"say ""hi"""', '"two\nlines"', '" edge"', "plain"]
    bib = page.evaluate(
        "() => window.TopicMap.exporter.bibtexText('50% of R&D {costs} $5 #1 a_b ~x ^y \\\\z  ok')"
    )
    assert bib == (
        r"50\% of R\&D \{costs\} \$5 \#1 a\_b \textasciitilde{}x \textasciicircum{}y "
        r"\textbackslash{}z ok"
    )


READING_LISTED = """() => document.getElementById('list-name').textContent === 'Reading list'
    && document.getElementById('reading-open').getAttribute('aria-pressed') === 'true'
    && !document.getElementById('match-list').hasAttribute('aria-busy')"""


def _reading(page) -> list[str]:
    """Open the reading list (from the keyboard): the doc_ids it lists, in order."""
    page.focus("#reading-open")
    page.keyboard.press("Enter")
    page.wait_for_function(READING_LISTED)
    return page.eval_on_selector_all(
        "#match-list button",
        "bs => bs.map(b => window.TopicMap.instance.data.ids[+b.dataset.index])",
    )


def _fewer(built, drop: set[str]):
    """The corpus without the papers `drop`: a rebuild that keeps the others."""
    from pipeline.config import CompareConfig
    from pipeline.stages import compare, metrics

    keep = ~built.documents["doc_id"].isin(drop)
    documents = built.documents[keep].reset_index(drop=True)
    clusters = built.clusters[~built.clusters["doc_id"].isin(drop)].reset_index(drop=True)
    ids, vectors = built.embeddings
    rows = [k for k, doc_id in enumerate(ids) if doc_id not in drop]
    t, h = built.topics, built.themes
    return type(built)(
        documents,
        ([ids[k] for k in rows], vectors[rows]),
        clusters,
        t,
        h,
        compare.make_venue_topics(documents, clusters, t, h, CompareConfig()),
        metrics.make_metrics(documents, clusters, t, h),
    )


def _reload(page) -> None:
    page.reload(wait_until="load")
    page.wait_for_function(MAP_READY)


def test_the_reading_list_keeps_its_stars_through_a_reload_and_a_rebuild(tmp_path, open_offline):
    built = corpus(N)
    path = _render(tmp_path, built)
    state = open_offline(path)
    page = state.page
    ids = built.documents["doc_id"].sort_values().tolist()
    page.evaluate("window.TopicMap.instance.select(200)")  # a paper's panel: its star button
    page.wait_for_selector("#paper-detail:not([hidden])")
    page.focus("#paper-star")
    page.keyboard.press("Enter")
    assert page.get_attribute("#paper-star", "aria-pressed") == "true"
    page.keyboard.press("Escape")
    page.fill("#search", "a")  # a list: star its second paper from the keyboard
    page.wait_for_function(LISTED, arg="Papers matching “a”")
    second = page.locator("#match-list li").nth(1)
    listed = ids[int(second.locator("button").get_attribute("data-index"))]
    second.locator("input.star").focus()
    page.keyboard.press("Space")
    assert page.inner_text("#reading-count") == "2"
    assert _reading(page) == [ids[200], listed]
    assert page.locator("#match-list input.star:checked").count() == 2
    assert serious(axe_violations(page)) == []
    screenshot(page, tmp_path, "map_reading_list")
    name, text = _download(page, "#export-csv")
    assert name == "reading-list.csv"
    assert [r["doc_id"] for r in csv.DictReader(io.StringIO(text))] == [ids[200], listed]

    _reload(page)
    assert page.inner_text("#reading-count") == "2"
    assert _reading(page) == [ids[200], listed]
    # a rebuild without the first 30 papers (not starred): the starred papers' places change
    drop = set(ids[:30]) - {ids[200], listed}
    _render(tmp_path, _fewer(built, drop))
    _reload(page)
    assert page.evaluate("window.TopicMap.instance.data.N") == N - len(drop)
    assert _reading(page) == [ids[200], listed]
    page.click("#match-list li:first-child button")  # the panel's star shows it starred
    page.wait_for_selector("#paper-detail:not([hidden])")
    assert page.get_attribute("#paper-star", "aria-pressed") == "true"

    other = _render(tmp_path / "other", built, title="Another map")  # another map's list
    page.goto(other.as_uri())
    page.wait_for_function(MAP_READY)
    assert page.inner_text("#reading-count") == "0"
    page.goto(path.as_uri())
    page.wait_for_function(MAP_READY)
    _reading(page)
    page.click("#clear-reading")
    assert page.inner_text("#reading-count") == "0"
    assert page.locator("#match-list li").count() == 0 and page.is_visible("#list-empty")
    _reload(page)
    assert page.inner_text("#reading-count") == "0"
    assert state.errors == [] and state.blocked == []


def test_select_in_view_from_the_keyboard_and_axe(site, open_offline):
    path, built = site
    state = open_offline(path)
    page = state.page
    page.evaluate(
        """() => { const gd = document.getElementById('topic-map');
        return Plotly.relayout(gd, {'xaxis.range': [-4, 4], 'yaxis.range': [-4, 4]}); }"""
    )
    page.focus("#select-view")
    page.keyboard.press("Enter")
    got = _selected(page, recorded=False)
    papers = _papers(built)
    inside = papers[papers["x"].between(-4, 4) & papers["y"].between(-4, 4)]
    assert got == set(inside.index) and len(inside) > 0
    assert serious(axe_violations(page)) == []
    assert state.errors == [] and state.blocked == []

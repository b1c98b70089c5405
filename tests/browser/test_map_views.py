"""The map's views for many venues and many years in headless Chromium: the eight-venue grid of
small multiples (panel headers readable and disjoint, panels apart, eight distinct venue
colours), a venue highlighted over the others in grey, the year range filter (counted from the
drawn data, with search and the topic list), a theme shown alone in distinct colours; offline,
without console errors and with no serious or critical axe-core violation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.colours import PALETTE
from pipeline.config import RenderConfig
from pipeline.stages.render import make_pages
from tests.support.browser_site import (
    HAS_REAL_BUILD,
    PAPERS_IN_DATA,
    axe_violations,
    screenshot,
    serious,
    write_real_build_site,
    write_site,
)
from tests.support.many_venues import EIGHT, eight_venues, years_corpus
from tests.support.synthetic_corpus import corpus

pytestmark = pytest.mark.browser

# each panel header's text and box, and each panel's plot area, in page pixels
HEADERS = """() => {
    const gd = document.getElementById('topic-map');
    const out = [];
    gd.layout.annotations.forEach((a, k) => {
        if (a.name !== 'panel-header') return;
        const node = gd.querySelector(`.annotation[data-index="${k}"] .annotation-text`);
        const r = node.getBoundingClientRect();
        out.push({text: node.textContent, left: r.left, right: r.right, top: r.top,
            bottom: r.bottom});
    });
    return out;
}"""
PANELS = """() => {
    const gd = document.getElementById('topic-map');
    const full = gd._fullLayout, box = gd.getBoundingClientRect();
    return Object.keys(full).filter(k => /^xaxis\\d*$/.test(k)).map(k => {
        const xa = full[k], ya = full['y' + k.slice(1)];
        return {left: box.left + xa._offset, right: box.left + xa._offset + xa._length,
            top: box.top + ya._offset, bottom: box.top + ya._offset + ya._length};
    });
}"""
TRACES = """() => document.getElementById('topic-map').data.map(t => ({uid: t.uid,
    n: t.x.length, colour: typeof t.marker.color === 'string' ? t.marker.color : null}))"""


def _site(folder: Path, c, venue_years=None) -> Path:
    frames = (c.documents, c.embeddings, c.clusters, c.topics, c.themes, c.venue_topics)
    pages = make_pages(*frames, c.metrics, RenderConfig(), venue_years=venue_years)
    write_site(folder, pages)
    return folder / "map.html"


def _apart(boxes: list[dict]) -> bool:
    return all(
        a["right"] <= b["left"] + 0.5
        or b["right"] <= a["left"] + 0.5
        or a["bottom"] <= b["top"] + 0.5
        or b["bottom"] <= a["top"] + 0.5
        for k, a in enumerate(boxes)
        for b in boxes[k + 1 :]
    )


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    built = eight_venues(50)
    return _site(tmp_path_factory.mktemp("eight-map"), built.corpus, built.venue_years), built


@pytest.fixture(scope="module")
def years(tmp_path_factory):
    built = years_corpus(700, undated=12)
    return _site(tmp_path_factory.mktemp("years-map"), built.corpus, built.venue_years), built


def test_eight_venues_are_a_grid_with_disjoint_headers_and_distinct_colours(eight, open_offline):
    path, built = eight
    state = open_offline(path)
    page = state.page
    assert page.inner_text("#view-switch [data-view=venues]") == "Venues as small multiples"
    headers = page.evaluate(HEADERS)
    assert sorted(h["text"].split("  ")[0] for h in headers) == sorted(EIGHT)
    assert _apart(headers) and min(h["bottom"] - h["top"] for h in headers) >= 9
    panels = page.evaluate(PANELS)
    assert len(panels) == 8 and _apart(panels)
    assert len({round(p["left"]) for p in panels}) == 3  # ceil(sqrt(8)) columns
    assert _apart(headers + panels)  # no header lies over a panel
    page.select_option("#colour-by", "venue")
    page.wait_for_timeout(300)
    colours = page.evaluate(
        "() => [...document.querySelectorAll('#venue-key .swatch')].map(s => s.style.background)"
    )
    assert len(colours) == 8 and len(set(colours)) == 8
    drawn = page.evaluate(
        """() => { const m = window.TopicMap.instance; return [...Array(m.data.N).keys()]
            .map(i => m.figure.paperColour(i)); }"""
    )
    assert len(set(drawn)) == 8
    assert state.errors == [] and state.blocked == []
    assert serious(axe_violations(page)) == []
    screenshot(page, path.parent, "eight_venues_map")


def test_highlighting_a_venue_greys_the_others(eight, open_offline):
    path, built = eight
    state = open_offline(path)
    page = state.page
    page.select_option("#highlight-venue", label="ICLR")
    page.wait_for_function("() => window.TopicMap.instance.state.view === 'combined'")
    page.wait_for_timeout(300)
    traces = {t["uid"]: t for t in page.evaluate(TRACES)}
    iclr = int((built.corpus.documents["venue"] == "ICLR").sum())
    assert traces["papers-0"]["n"] == iclr > 0
    assert traces["muted-0"]["n"] == len(built.corpus.documents) - iclr
    greys = page.evaluate(
        """() => { const m = window.TopicMap.instance, D = m.data; const out = new Set();
            for (let i = 0; i < D.N; i++) if (D.DATA.venues[D.venue[i]] !== 'ICLR')
                out.add(m.figure.paperColour(i));
            return [...out]; }"""
    )
    assert greys == [traces["muted-0"]["colour"]]
    assert page.inner_text("#match-count") == f"{len(built.corpus.documents)} papers"
    page.click("#view-switch [data-view=venues]")
    page.wait_for_timeout(300)
    assert page.input_value("#highlight-venue") == ""
    assert "muted-0" not in {t["uid"] for t in page.evaluate(TRACES)}
    assert state.errors == []
    screenshot(page, path.parent, "eight_venues_highlight")


def _kept(documents, low: int, high: int) -> np.ndarray:
    year = documents["year"].astype("float").to_numpy()
    return np.isnan(year) | ((year >= low) & (year <= high))


def test_the_year_range_filters_the_drawn_papers_the_count_and_the_list(years, open_offline):
    path, built = years
    state = open_offline(path)
    page = state.page
    documents = built.corpus.documents
    assert "12 papers without a year" in page.inner_text("#undated-note")
    options = page.eval_on_selector_all("#year-from option", "os => os.map(o => o.value)")
    assert options == ["2020", "2021", "2022", "2023", "2025"]
    assert page.evaluate(PAPERS_IN_DATA) == len(documents)
    page.select_option("#year-from", "2022")
    page.focus("#year-to")
    page.select_option("#year-to", "2023")
    page.wait_for_function("() => window.TopicMap.instance.state.years !== null")
    page.wait_for_timeout(300)
    kept = int(_kept(documents, 2022, 2023).sum())
    assert 12 < kept < len(documents)
    assert page.evaluate(PAPERS_IN_DATA) == kept  # the papers drawn in colour
    assert page.get_attribute("#match-count", "data-count") == str(kept)
    assert page.inner_text("#match-range").endswith(f"of {kept}")
    in_range = documents[_kept(documents, 2022, 2023)]
    headers = sorted(h["text"] for h in page.evaluate(HEADERS))
    assert headers == [
        f"{v}  {(in_range['venue'] == v).sum()} of {(documents['venue'] == v).sum()} papers"
        for v in ("ICLR", "ICML")
    ]
    # with the search: the papers holding the word and in the years
    word = documents["abstract"].iloc[0].split()[1].lower()
    text = (documents["title"].fillna("") + "\x1f" + documents["abstract"]).str.lower()
    both = int(
        (text.str.contains(word, regex=False).to_numpy() & _kept(documents, 2022, 2023)).sum()
    )
    page.fill("#search", word)
    page.wait_for_function(f"() => window.TopicMap.instance.state.query === {word!r}")
    page.wait_for_timeout(300)
    assert page.get_attribute("#match-count", "data-count") == str(both)
    assert page.evaluate(PAPERS_IN_DATA) == both
    # and one topic alone
    page.fill("#search", "")
    page.wait_for_function("() => window.TopicMap.instance.state.query === ''")
    page.click('#topic-list button[data-kind="topic"][data-id="0"]')
    page.wait_for_timeout(300)
    topic0 = set(built.corpus.clusters.loc[built.corpus.clusters["topic"] == 0, "doc_id"])
    in_topic = documents["doc_id"].isin(topic0).to_numpy()
    assert page.evaluate(PAPERS_IN_DATA) == int((in_topic & _kept(documents, 2022, 2023)).sum())
    page.click("#show-all")
    page.select_option("#year-from", "2020")
    page.select_option("#year-to", "2025")
    page.wait_for_function("() => window.TopicMap.instance.state.years === null")
    page.wait_for_timeout(300)
    assert page.evaluate(PAPERS_IN_DATA) == len(documents)
    assert state.errors == [] and state.blocked == []
    assert serious(axe_violations(page)) == []
    screenshot(page, path.parent, "years_map")


def test_a_theme_shown_alone_has_distinct_topic_colours_at_many_topics(tmp_path, open_offline):
    c = corpus(1200, n_topics=len(PALETTE) + 12, n_themes=5, seed=2)
    state = open_offline(_site(tmp_path, c))
    page = state.page
    script = """(theme) => { const m = window.TopicMap.instance, D = m.data, out = {};
        for (let i = 0; i < D.N; i++) { const t = D.topics.get(D.topic[i]);
            if (t && t.id >= 0 && t.theme === theme) out[t.id] = m.figure.paperColour(i); }
        return out; }"""
    theme = int(page.get_attribute("#topic-list button[data-kind=theme]", "data-id"))
    shades = page.evaluate(script, theme)
    page.click(f'#topic-list button[data-kind="theme"][data-id="{theme}"]')
    page.wait_for_timeout(300)
    alone = page.evaluate(script, theme)
    assert len(alone) > 1 and len(set(alone.values())) == len(alone)
    assert set(alone.values()) <= set(PALETTE) and alone != shades
    assert state.errors == []


@pytest.mark.slow  # renders the 9,749 papers (their similar papers too)
@pytest.mark.skipif(
    not HAS_REAL_BUILD, reason="needs `make all CONFIG=configs/icml-iclr-2020-2025.yaml` built"
)
def test_the_real_2020_2025_map_filters_by_year(tmp_path, open_offline):
    d, c, _ = write_real_build_site(tmp_path)
    state = open_offline(tmp_path / "map.html", timeout=60_000)
    page = state.page
    shown = d[d["doc_id"].isin(c["doc_id"])]
    page.select_option("#year-from", "2025")
    page.wait_for_function("() => window.TopicMap.instance.state.years !== null")
    page.wait_for_timeout(500)
    assert page.evaluate(PAPERS_IN_DATA) == int(_kept(shown, 2025, 2025).sum()) > 0
    assert state.errors == [] and state.blocked == []
    screenshot(page, tmp_path, "real_2020_2025_map_2025")


# each label's anchor on the page and its topic's or theme's centre there (first panel)
LABEL_SPOTS = """() => {
    const gd = document.getElementById('topic-map'), D = window.TopicMap.instance.data.DATA;
    const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
    const items = [...D.topics, ...D.themes];
    return [...document.querySelectorAll('#map-labels .map-label')].map(node => {
        const r = node.getBoundingClientRect();
        const x = {center: (r.left + r.right) / 2, left: r.left, right: r.right}[
            node.dataset.anchor];
        const item = items.find(t => t.label === node.textContent);
        return {text: node.textContent, x, y: (r.top + r.bottom) / 2,
            cx: box.left + xa._offset + xa.l2p(item.x), cy: box.top + ya._offset + ya.l2p(item.y)};
    });
}"""


def test_labels_sit_on_their_topics_follow_a_drag_and_zoom_without_redrawing(
    tmp_path, open_offline
):
    """The labels are a layer over the plot: placed at their topics' centres, moved with every
    frame of a drag, and moving them costs plotly no new computation of the traces."""
    synthetic = corpus(400)
    state = open_offline(_site(tmp_path, synthetic))
    page = state.page
    page.evaluate("window.TopicMap.instance.setView('combined')")
    page.select_option("#label-mode", "topics")
    page.wait_for_timeout(300)
    spots = page.evaluate(LABEL_SPOTS)
    assert len(spots) >= 3
    for s in spots:  # on its centre, or beside or above or below it where that was taken
        assert abs(s["x"] - s["cx"]) <= 1.5 and abs(s["y"] - s["cy"]) <= 20, s
    page.evaluate("document.getElementById('topic-map').calcdata.tagged = true")
    zoomed = page.evaluate(
        """async () => { const gd = document.getElementById('topic-map');
            const [a, b] = gd._fullLayout.xaxis.range, [c, d] = gd._fullLayout.yaxis.range;
            await Plotly.relayout(gd,
                {'xaxis.range': [a, (a + b) / 2], 'yaxis.range': [c, (c + d) / 2]});
            return gd.calcdata.tagged === true; }"""
    )
    assert zoomed  # the traces were not computed again
    before = {s["text"]: s["x"] for s in page.evaluate(LABEL_SPOTS)}
    box = page.locator("#topic-map .nsewdrag").first.bounding_box()
    start = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] + 60, start[1], steps=6)
    during = {s["text"]: s["x"] for s in page.evaluate(LABEL_SPOTS)}  # the button still down
    page.mouse.up()
    moved = [during[t] - x for t, x in before.items() if t in during]
    assert moved and all(abs(m - 60) <= 2 for m in moved), moved
    page.wait_for_timeout(300)
    for s in page.evaluate(LABEL_SPOTS):
        assert abs(s["x"] - s["cx"]) <= 1.5 and abs(s["y"] - s["cy"]) <= 20, s
    assert state.errors == []

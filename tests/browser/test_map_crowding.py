"""The map as a corpus grows, in headless Chromium from file://: the topic tree (themes opening
into topics, a choice zooming every panel to its papers), the density layer under the points
and its toggle, and the small multiples of 2, 8 and 25 venues (every header with its count, no
header or label over another, each theme labelled only where it is large, venue groups with
a legend at 25). Offline, no console error, axe with no serious or critical violation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.config import RenderConfig
from pipeline.stages.render import make_pages
from tests.support.browser_site import axe_violations, screenshot, serious, write_site
from tests.support.many_venues import n_venues, venue_names
from tests.support.synthetic_corpus import corpus

pytestmark = pytest.mark.browser

RANGES = """() => {
    const gd = document.getElementById('topic-map');
    return {x: gd.layout.xaxis.range.slice(), y: gd.layout.yaxis.range.slice()};
}"""
HEADERS = """() => [...document.querySelectorAll('#topic-map .annotation')].map(a => {
    const r = a.getBoundingClientRect();
    return {text: a.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom};
})"""
LABELS = """() => [...document.querySelectorAll('#map-labels .map-label')].map(s => {
    const r = s.getBoundingClientRect();
    return {text: s.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom};
})"""


def _site(folder: Path, c) -> Path:
    frames = (c.documents, c.embeddings, c.clusters, c.topics, c.themes, c.venue_topics)
    write_site(folder, make_pages(*frames, c.metrics, RenderConfig()))
    return folder / "map.html"


def _overlaps(boxes: list[dict]) -> list[tuple[str, str]]:
    return [
        (a["text"], b["text"])
        for k, a in enumerate(boxes)
        for b in boxes[k + 1 :]
        if a["l"] < b["r"] - 1
        and b["l"] < a["r"] - 1
        and a["t"] < b["b"] - 1
        and b["t"] < a["b"] - 1
    ]


@pytest.fixture(scope="module")
def themed(tmp_path_factory):
    return _site(tmp_path_factory.mktemp("tree"), corpus(1500, n_topics=20, n_themes=5, seed=2))


def test_the_tree_opens_from_the_keyboard_and_a_choice_zooms_to_its_papers(themed, open_offline):
    state = open_offline(themed)
    page = state.page
    full = page.evaluate(RANGES)
    arrow = page.locator("#topic-list .tree-toggle").first
    assert arrow.get_attribute("aria-expanded") == "true"
    children = arrow.get_attribute("aria-controls")
    arrow.focus()
    page.keyboard.press("Enter")  # a button: the keyboard closes it
    assert arrow.get_attribute("aria-expanded") == "false"
    assert page.locator(f"#{children}").is_hidden()
    page.keyboard.press("Space")
    assert page.locator(f"#{children}").is_visible()
    topic = page.locator(f"#{children} button[data-kind='topic']").first
    topic_id = int(topic.get_attribute("data-id"))
    topic.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(full) => document.getElementById('topic-map').layout.xaxis.range[1] - "
        "document.getElementById('topic-map').layout.xaxis.range[0] < 0.9 * (full[1] - full[0])",
        arg=full["x"],
    )
    zoomed = page.evaluate(RANGES)
    assert topic.get_attribute("aria-pressed") == "true"
    inside = page.evaluate(
        """([id, r]) => { const m = window.TopicMap.instance.data; let n = 0, all = 0;
        for (let i = 0; i < m.N; i++) { if (m.topic[i] !== id) continue; all++;
          if (m.x[i] >= r.x[0] && m.x[i] <= r.x[1] && m.y[i] >= r.y[0] && m.y[i] <= r.y[1]) n++; }
        return [n, all]; }""",
        [topic_id, zoomed],
    )
    assert inside[0] >= 0.97 * inside[1] > 0  # the topic's papers are in view, and it fills it
    assert (zoomed["y"][1] - zoomed["y"][0]) < (full["y"][1] - full["y"][0])
    assert page.evaluate("window.TopicMap.instance.state.filter.id") == topic_id
    screenshot(page, themed.parent, "map_tree_zoomed")
    page.keyboard.press("Enter")  # pressed again: all papers, zoomed out
    page.wait_for_function("() => window.TopicMap.instance.state.filter === null")
    page.wait_for_function(
        "(full) => Math.abs(document.getElementById('topic-map').layout.xaxis.range[0] - full[0])"
        " < 1e-6",
        arg=full["x"],
    )
    theme = page.locator("#topic-list button[data-kind='theme']").first
    theme.click()
    page.wait_for_function("() => window.TopicMap.instance.state.filter?.kind === 'theme'")
    assert page.evaluate(RANGES)["x"] != full["x"]
    assert serious(axe_violations(page)) == []
    assert state.errors == [] and state.blocked == []


def test_the_density_layer_lies_under_the_points_and_toggles(themed, open_offline):
    state = open_offline(themed)
    page = state.page
    data = page.evaluate("window.TopicMap.instance.data.DATA.density")
    assert data is not None and data["on"] is False  # 1,500 papers: few overplot
    box = page.locator("#density-toggle")
    assert box.is_visible() and not box.is_checked()
    assert page.evaluate("document.getElementById('topic-map').layout.images.length") == 0
    box.focus()
    page.keyboard.press("Space")
    page.wait_for_function("() => document.getElementById('topic-map').layout.images.length > 0")
    images = page.evaluate(
        "document.getElementById('topic-map')._fullLayout.images.map(i => [i.layer, i.xref])"
    )
    panels = page.evaluate("document.getElementById('topic-map')._fullLayout._subplots.cartesian")
    assert all(layer == "below" for layer, _ in images)
    assert sorted(x for _, x in images) == sorted(p.split("y")[0] for p in panels)  # one a panel
    # in the plot area's layer below the traces: the points' WebGL canvas is drawn over it
    assert page.locator("#topic-map .imagelayer image").count() == len(images)
    screenshot(page, themed.parent, "map_density")
    page.keyboard.press("Space")
    page.wait_for_function("() => document.getElementById('topic-map').layout.images.length === 0")
    assert serious(axe_violations(page)) == []
    assert state.errors == [] and state.blocked == []


@pytest.mark.parametrize("count", [2, 8, 25])
def test_many_venues_panels_keep_their_counts_and_labels_do_not_crowd(
    count, tmp_path, open_offline
):
    built = n_venues(count, per_venue=40 if count > 2 else 300)
    index = _site(tmp_path, built.corpus)
    state = open_offline(index)
    page = state.page
    headers = page.evaluate(HEADERS)
    assert len(headers) == count
    for header in headers:  # every header names its count
        assert re.search(r"\d(,\d{3})*( papers)?$", header["text"]), header["text"]
    assert _overlaps(headers) == []
    labels = page.evaluate(LABELS)
    assert labels and _overlaps(labels) == []
    themes = page.evaluate("window.TopicMap.instance.data.DATA.themes.length")
    if count > 3:  # a theme only where it is large, by its first term: not in every panel
        per_theme = {}
        for label in labels:
            per_theme[label["text"]] = per_theme.get(label["text"], 0) + 1
        assert max(per_theme.values()) < count and len(labels) < themes * count
    groups = page.locator("#venue-group-key button")
    if count < 12:
        assert groups.count() == 0
    else:
        assert 2 <= groups.count() <= 8
        first = groups.first
        first.focus()
        page.keyboard.press("Enter")
        shown = page.evaluate(HEADERS)
        listed = first.get_attribute("title").split(": ", 1)[1].split(". Show")[0].split(", ")
        assert len(shown) == len(listed) < count
        names = venue_names(count)
        assert all(
            any(h["text"].split("  ")[0].strip("■ ").rstrip("…") in n for n in listed)
            for h in shown
        ), (shown, listed)
        assert all(n in names for n in listed)
        screenshot(page, tmp_path, f"map_{count}_venues_group")
        page.keyboard.press("Enter")
        assert len(page.evaluate(HEADERS)) == count
    screenshot(page, tmp_path, f"map_{count}_venues")
    assert serious(axe_violations(page)) == []
    assert state.errors == [] and state.blocked == []

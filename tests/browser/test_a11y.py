"""Accessibility of both pages in headless Chromium: axe-core (vendored, tests/vendor/axe-core)
finds no serious or critical violation on the report or the map, in their first state and with
their disclosures open; every control works from the keyboard."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser_site import (
    AXE_JS,
    MAP_READY,
    axe_violations,
    render_site,
    serious,
)
from tests.support.synthetic_corpus import corpus

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, object]:
    folder = tmp_path_factory.mktemp("a11y")
    synthetic = corpus(400)
    render_site(folder, synthetic)
    return folder, synthetic


def test_axe_is_the_vendored_release_with_its_licence():
    assert AXE_JS.read_text(encoding="utf-8").startswith("/*! axe v4.14.1")
    assert "Mozilla Public License" in (AXE_JS.parent / "LICENSE").read_text(encoding="utf-8")


def test_axe_finds_what_it_should(tmp_path: Path, open_offline, site):
    """The check can fail: grey text on white and an unlabelled field are serious findings."""
    folder, _ = site
    state = open_offline(folder / "index.html")
    state.page.evaluate(
        """() => {
            const p = document.createElement('p');
            p.textContent = 'faint'; p.style.color = '#c7ccd1';
            document.querySelector('main').append(p, document.createElement('input'));
        }"""
    )
    found = {v["id"] for v in serious(axe_violations(state.page))}
    assert {"color-contrast", "label"} <= found, found


def test_report_has_no_serious_or_critical_violation(open_offline, site):
    folder, _ = site
    state = open_offline(folder / "index.html")
    page = state.page
    assert serious(axe_violations(page)) == []
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    assert serious(axe_violations(page)) == []
    assert state.errors == [] and state.blocked == []


@pytest.mark.slow  # needs the bundled build
def test_bundled_pages_have_no_serious_or_critical_violation(bundled_build: Path, open_offline):
    for name in ("index.html", "map.html"):
        state = open_offline(bundled_build / name)
        assert serious(axe_violations(state.page)) == [], name
        assert state.errors == [] and state.blocked == [], name


def test_map_has_no_serious_or_critical_violation(open_offline, site):
    folder, synthetic = site
    state = open_offline(folder / "map.html")
    page = state.page
    assert serious(axe_violations(page)) == []
    doc_id = synthetic.topics.iloc[1]["representative_docs"][0]
    page.goto((folder / "map.html").as_uri() + f"#paper={doc_id}")
    page.wait_for_function(MAP_READY)
    page.wait_for_selector("#paper-detail:not([hidden])")
    page.click("#topic-list button[data-kind=topic]")  # a topic alone: Show all appears
    assert serious(axe_violations(page)) == []
    assert state.errors == []


def _tab_to(page, selector: str, limit: int = 400) -> None:
    """Press Tab until the element matching `selector` has the focus (fails after `limit`)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement?.matches(s) ?? false", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_every_report_control_works_from_the_keyboard(open_offline, site):
    folder, _ = site
    page = open_offline(folder / "index.html").page
    header = "#topics thead th.sortable:nth-child(4)"  # Papers
    _tab_to(page, header)
    page.keyboard.press("Enter")
    assert page.get_attribute(header, "aria-sort") == "descending"
    page.keyboard.press("Space")
    assert page.get_attribute(header, "aria-sort") == "ascending"
    sizes = page.locator("#topics tbody tr:not(.pinned) td:nth-child(4)").all_inner_texts()
    numbers = [int(s.replace(",", "")) for s in sizes]
    assert numbers == sorted(numbers)
    _tab_to(page, "#topics details summary")  # the row's term bars open and close
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.parentElement.open")
    assert page.locator("#topics details[open] .term-bars li").count() > 0
    page.keyboard.press("Space")
    assert not page.evaluate("document.activeElement.parentElement.open")
    _tab_to(page, "#map-preview")  # the preview is a link to the map
    page.keyboard.press("Enter")
    page.wait_for_function(MAP_READY)
    assert page.url.endswith("map.html#view=combined")


def test_every_map_control_works_from_the_keyboard(open_offline, site):
    folder, synthetic = site
    page = open_offline(folder / "map.html").page
    _tab_to(page, "#view-switch button[data-view=combined]")
    page.keyboard.press("Enter")
    assert page.get_attribute("#view-switch [data-view=combined]", "aria-pressed") == "true"
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Space")
    assert page.get_attribute("#view-switch [data-view=venues]", "aria-pressed") == "true"
    for select, value in (("#label-mode", "topics"), ("#colour-by", "venue")):
        page.focus(select)
        start = page.input_value(select)
        page.keyboard.press("ArrowDown")
        assert page.input_value(select) != start
        page.select_option(select, value)
    assert page.locator("#venue-key.shown").count() == 1
    # the topic list: Enter shows one topic alone, Show all brings the rest back
    _tab_to(page, "#topic-list button[data-kind=topic]")
    page.keyboard.press("Enter")
    assert page.get_attribute("#topic-list button[aria-pressed=true]", "data-kind") == "topic"
    _tab_to(page, "#show-all")
    page.keyboard.press("Enter")
    assert page.locator("#topic-list button[aria-pressed=true]").count() == 0
    # search, then open a paper from the list it keeps, then its neighbour, then close
    title = next(t for t in synthetic.documents["title"] if isinstance(t, str) and t.strip())
    _tab_to(page, "#search")
    page.keyboard.type(title)
    page.wait_for_selector("#match-box:not([hidden]) #match-list button")
    _tab_to(page, "#match-list button")
    page.keyboard.press("Enter")
    page.wait_for_selector("#paper-detail:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "paper-title"
    assert page.text_content("#paper-title") == title.strip()
    _tab_to(page, "#paper-neighbours button")
    target = int(page.evaluate("document.activeElement.dataset.index"))
    page.keyboard.press("Enter")
    papers = synthetic.documents.sort_values("doc_id")["doc_id"].tolist()  # the map's order
    assert page.get_attribute("#paper-detail", "data-paper") == papers[target]
    page.keyboard.press("Escape")
    assert page.locator("#paper-detail").is_hidden()
    assert page.evaluate("document.activeElement.id") == "search"

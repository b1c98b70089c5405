"""The map's scripts are one namespace, window.TopicMap, each adding one part in the order the
page loads them (render.MAP_SCRIPTS): loaded out of order, the page says which part lacks
which, instead of failing later on an undefined name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.stages import render
from tests.support.browser_site import render_site
from tests.support.synthetic_corpus import corpus

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("parts")
    render_site(folder, corpus(60))
    return folder


def _page_errors(browser, page_path: Path) -> tuple[list[str], object]:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(page_path.as_uri(), wait_until="load")
    return errors, page


def test_each_script_adds_one_part_and_the_namespace_is_fixed(site: Path, browser):
    errors, page = _page_errors(browser, site / "map.html")
    page.wait_for_function("() => document.getElementById('topic-map').dataset.ready === 'true'")
    assert errors == []
    parts = page.evaluate("Object.keys(window.TopicMap)")
    roles = (
        "helpers data search venues labels layout density colour figure panel controls tree "
        "years link exporter reading selection instance"
    )
    assert parts == roles.split()
    assert len(parts) == len(render.MAP_SCRIPTS)  # one part a script
    replaced = page.evaluate(
        """() => { try { window.TopicMap.define('figure', [], () => ({})); return 'replaced'; }
                   catch (error) { return error.message; } }"""
    )
    assert replaced == "the map's part figure is defined twice"
    page.evaluate("window.TopicMap = {}; window.TopicMap.figure = null")  # not writable
    assert page.evaluate("typeof window.TopicMap.figure.make") == "function"


def test_scripts_loaded_out_of_order_name_the_part_missing(site: Path, browser):
    html = (site / "map.html").read_text(encoding="utf-8")
    swapped = html.replace('<script src="map-layout.js"></script>\n', "").replace(
        '<script src="map-panel.js"></script>',
        '<script src="map-panel.js"></script>\n<script src="map-layout.js"></script>',
    )
    assert swapped != html
    (site / "swapped.html").write_text(swapped, encoding="utf-8")
    errors, _ = _page_errors(browser, site / "swapped.html")
    assert any(
        re.search(r"the map's part figure needs layout, loaded before it", e) for e in errors
    )

"""The map page served by `topicmap serve` in Chromium: the search box's "by meaning" mode lists
the papers nearest in meaning, best first, and the "Place an abstract" box places one (its topic
named, the point marked, its nearest papers ringed and listed), as the API answers, with no
serious axe violation. Opened from disk the same controls say in one line how to start the
server, and ask nothing of any."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.support.browser_site import MAP_READY, axe_violations, outside, serious
from tests.support.serving import request, serve_process

pytestmark = pytest.mark.browser

ABSTRACT = (
    "We train a policy with reinforcement learning to route packets through a communication "
    "network, and it beats shortest-path routing on delay under heavy traffic."
)


@pytest.mark.slow  # needs the bundled build and the model
def test_served_map_searches_by_meaning_and_places_an_abstract(bundled_build: Path, browser):
    documents = pd.read_parquet(bundled_build / "documents.parquet")
    own = documents.iloc[11]
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    failures, errors = [], []
    page.on("response", lambda r: failures.append(r.url) if r.status >= 400 else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with serve_process("--dir", str(bundled_build)) as (base, _process):
        page.goto(f"{base}/map.html")
        page.wait_for_function(MAP_READY, timeout=30_000)
        assert page.locator(".serve-hint").first.is_hidden()
        page.select_option("#search-mode", "meaning")
        page.fill("#search", " ".join(own["abstract"].split()[:60]))
        page.wait_for_function("() => document.querySelectorAll('#match-list button').length")
        first = page.locator("#match-list button").first
        index = int(first.get_attribute("data-index"))
        assert page.evaluate(f"TopicMap.instance.data.ids[{index}]") == own["doc_id"]
        count = page.inner_text("#match-count")
        assert count.startswith(f"{min(50, len(documents))} of {len(documents)} papers match")

        page.fill("#place-abstract", ABSTRACT)
        page.press("#place-go", "Enter")  # from the keyboard
        page.wait_for_function("() => document.querySelectorAll('#place-neighbours li').length")
        answer = request(base, "POST", "/api/place", {"title": None, "abstract": ABSTRACT})[1]
        result = page.inner_text("#place-result")
        assert f"“{answer['topic_label']}”" in result or answer["topic"] < 0
        assert f"{answer['similarity']:.3f}" in result
        listed = page.eval_on_selector_all(
            "#place-neighbours button",
            "bs => bs.map(b => TopicMap.instance.data.ids[+b.dataset.index])",
        )
        assert listed == [n["doc_id"] for n in answer["neighbours"]]
        assert page.locator("#focus-rings .placed-mark").count() >= 1
        assert page.locator("#focus-rings .placed-ring").count() >= 1
        assert serious(axe_violations(page)) == []  # the two controls and their answers too
        page.screenshot(path=str(bundled_build.parent / "served_map.png"))
        shutil.copyfile(bundled_build.parent / "served_map.png", "/tmp/issue34_served_map.png")
    context.close()
    assert not errors, errors
    assert all(url.endswith("/favicon.ico") for url in failures), failures


@pytest.mark.slow  # needs the bundled build
def test_from_disk_the_controls_say_how_to_start_the_server(bundled_build: Path, open_offline):
    state = open_offline(bundled_build / "map.html")
    page = state.page
    hint = page.locator("#place-box .serve-hint")
    assert hint.is_visible() and "topicmap serve --dir" in hint.inner_text()
    assert page.locator("#place-form").is_hidden()
    page.select_option("#search-mode", "meaning")
    page.fill("#search", "contrastive learning")
    page.wait_for_function(
        "() => /topicmap serve/.test(document.getElementById('match-count').textContent)"
    )
    assert page.inner_text("#match-count").count("\n") == 0
    page.select_option("#search-mode", "words")
    page.wait_for_function(
        "() => /papers match/.test(document.getElementById('match-count').textContent)"
    )
    assert outside(state) == [] and not state.errors

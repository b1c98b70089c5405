"""What changed, in a browser: the map's topic list marks a topic born lately ("new"), a link
to an ended topic (map.html#topic=N) says where its papers are now with a link to each
successor, which opens it; the report's section links each topic to the map. Offline, without
console errors and without a serious or critical axe-core violation."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser_site import axe_violations, screenshot, serious, write_site
from tests.support.render_frames import changed_history, rendered, tiny_tables

pytestmark = pytest.mark.browser

IDLE = "() => document.getElementById('topic-map').dataset.ready === 'true'"
FILTER = "() => window.TopicMap.instance.state.filter"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("changes")
    write_site(folder, rendered(tiny_tables(), history=changed_history()))
    return folder


def test_the_map_marks_a_new_topic_and_answers_a_link_to_a_retired_one(site, open_offline):
    state = open_offline(site / "map.html")
    page = state.page
    badges = page.locator("#topic-list .badge-new")
    assert badges.count() == 1
    assert page.locator('#topic-list button[data-id="1"] .badge-new').count() == 1
    assert page.locator("#gone-note").is_hidden()
    page.goto("about:blank")
    page.goto((site / "map.html").as_uri() + "#topic=7")
    page.wait_for_function(IDLE)
    note = page.locator("#gone-note")
    assert note.is_visible()
    assert note.inner_text() == (
        "Topic 7, “an old topic”, was retired: its papers are now in graph, message passing (#1)."
    )
    assert page.evaluate(FILTER) is None  # the map shows every paper meanwhile
    assert page.url.endswith("#topic=7")  # the link keeps naming it: a reload says it again
    page.reload()
    page.wait_for_function(IDLE)
    assert note.is_visible() and note.inner_text().startswith("Topic 7,")
    screenshot(page, site, "changes_map_retired")
    assert serious(axe_violations(page)) == []
    page.locator('#topic-list button[data-id="0"]').click()  # a choice in the list hides it
    page.wait_for_function("() => document.getElementById('gone-note').hidden")
    page.goto("about:blank")
    page.goto((site / "map.html").as_uri() + "#topic=7")
    page.wait_for_function(IDLE)
    note.locator("a").click()
    page.wait_for_function("() => window.TopicMap.instance.state.filter !== null")
    assert page.evaluate(FILTER) == {"kind": "topic", "id": 1}
    assert page.url.endswith("#topic=1") and note.is_hidden()
    assert state.errors == [] and state.blocked == []


def test_the_reports_section_links_its_topics_to_the_map(site, open_offline):
    state = open_offline(site / "index.html")
    page = state.page
    section = page.locator("#changes")
    assert section.locator("h3").first.inner_text().startswith("Since the topics were fitted")
    link = section.locator("li.born a")
    assert link.get_attribute("href") == "map.html#topic=1"
    section.screenshot(path=str(site / "changes_report.png"))
    assert serious(axe_violations(page)) == []
    assert state.errors == [] and state.blocked == []

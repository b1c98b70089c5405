"""The map's paper text in headless Chromium, from disk: shards loaded by <script> only when a
paper, a topic or a search needs them, search over text not yet loaded, the list of results
from the keyboard, a missing, corrupt or stale shard reported in the panel while the rest of
the map works, and hostile, long and non-Latin text kept as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.stages.render.mapfiles import shard_path
from pipeline.stages.render.shaping import edition
from tests.support.browser_site import (
    GL_PIXELS,
    HOSTILE_ABSTRACT,
    HOSTILE_TITLE,
    PAPER_POINTS,
    pwned,
    render_site,
    shards_loaded,
)
from tests.support.synthetic_corpus import corpus

pytestmark = pytest.mark.browser

N = 400


@pytest.fixture(scope="module")
def synthetic():
    return corpus(N)


@pytest.fixture
def site(tmp_path: Path, synthetic) -> Path:
    render_site(tmp_path, synthetic)
    return tmp_path


def _shard(page, index: int) -> int:
    return page.evaluate("(i) => window.TopicMap.instance.data.shard[i]", index)


def _open_paper(page, index: int) -> None:
    page.evaluate("(i) => window.TopicMap.instance.select(i)", index)
    page.wait_for_function(
        "(id) => document.getElementById('paper-detail').dataset.paper === id"
        " && !document.getElementById('paper-detail').hidden",
        arg=page.evaluate("(i) => window.TopicMap.instance.data.ids[i]", index),
    )


def _search(page, text: str) -> int:
    page.fill("#search", text)
    query = text.strip().lower()
    page.wait_for_function("(q) => window.TopicMap.instance.state.query === q", arg=query)
    page.wait_for_timeout(100)
    return int(page.get_attribute("#match-count", "data-count"))


def synthetic_topic(synthetic, row) -> int:
    clusters = synthetic.clusters.set_index("doc_id")
    return int(clusters.loc[row["doc_id"], "topic"])


def _papers(synthetic):
    """The corpus's papers in the map's order (doc_id order)."""
    return synthetic.documents.sort_values("doc_id", ignore_index=True)


def test_text_is_loaded_by_script_only_for_the_paper_shown(site, synthetic, open_offline):
    state = open_offline(site / "map.html")
    page = state.page
    assert shards_loaded(state) == set()  # nothing of the papers' text to draw the map
    assert page.evaluate(PAPER_POINTS) == N and page.evaluate(GL_PIXELS) > 0
    papers = _papers(synthetic)
    index = 17
    _open_paper(page, index)
    assert page.text_content("#paper-abstract") == papers.loc[index, "abstract"]
    neighbours = [
        int(b)
        for b in page.eval_on_selector_all(
            "#paper-neighbours button", "bs => bs.map(b => b.dataset.index)"
        )
    ]
    assert len(neighbours) == 5
    rings = page.eval_on_selector_all("#focus-rings circle", "cs => cs.map(c => +c.dataset.index)")
    assert sorted(rings) == sorted([index, *neighbours])  # ringed on the map
    wanted = {shard_path(_shard(page, i)) for i in [index, *neighbours]}
    assert shards_loaded(state) == wanted  # the paper's shard and its neighbours', no more
    how = {kind for url, kind in state.resource_types.items() if "/map-data/" in url}
    assert how == {"script"}  # <script src> from file://, never fetch()
    assert state.errors == [] and state.blocked == []


def test_search_finds_papers_whose_text_was_not_loaded(site, synthetic, open_offline):
    state = open_offline(site / "map.html")
    page = state.page
    papers = _papers(synthetic)
    text = (papers["title"].fillna("") + "\n" + papers["abstract"]).str.lower()
    index = 250
    word = next(
        w
        for w in papers.loc[index, "abstract"].lower().split()
        if len(w) > 7 and text.str.contains(w, regex=False).sum() <= 3
    )
    expected = int(text.str.contains(word, regex=False).sum())
    assert shards_loaded(state) == set()
    assert _search(page, word.upper()) == expected
    assert page.evaluate("(i) => window.TopicMap.instance.state.active[i]", index) == 1
    listed = page.eval_on_selector_all("#match-list button", "bs => bs.map(b => +b.dataset.index)")
    assert index in listed and len(listed) == expected
    shard_count = page.evaluate("window.TopicMap.instance.data.shardCount")
    assert len(shards_loaded(state)) == shard_count  # a search reads every shard, once
    # both ways the page searches: five bytes and more (Horspool's shifts) and fewer (the
    # rarest byte's places), each against the text's own count
    for part in (word[1:6], word[1:5], word[2:4], word[-3:]):
        assert _search(page, part) == int(text.str.contains(part, regex=False).sum()), part
    assert _search(page, "") == N
    assert state.errors == [] and state.blocked == []


def test_results_are_a_paged_list_to_reach_from_the_keyboard(site, synthetic, open_offline):
    state = open_offline(site / "map.html")
    page = state.page
    papers = _papers(synthetic)
    text = (papers["title"].fillna("") + "\n" + papers["abstract"]).str.lower()
    expected = int(text.str.contains("e", regex=False).sum())
    assert expected > 100
    assert _search(page, "e") == expected
    assert page.text_content("#match-range") == f"1–50 of {expected}"
    rows = page.locator("#match-list button")
    assert rows.count() == 50
    first = rows.nth(0).text_content()
    index = int(rows.nth(0).get_attribute("data-index"))
    row = papers.loc[index]
    topics = synthetic.topics.set_index("topic")["label"]
    where = edition(row["conference"], row["year"], row["track"])  # venue and year
    assert first == f"{row['title']}{where} · {topics[synthetic_topic(synthetic, row)]}"
    page.focus("#search")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.index") == str(index)
    page.keyboard.press("ArrowDown")
    second = int(page.evaluate("document.activeElement.dataset.index"))
    page.keyboard.press("Enter")
    page.wait_for_selector("#paper-detail:not([hidden])")
    assert page.get_attribute("#paper-detail", "data-paper") == papers.loc[second, "doc_id"]
    assert page.evaluate("document.activeElement.id") == "paper-title"
    assert page.evaluate("window.TopicMap.instance.state.selected") == second
    page.keyboard.press("Escape")
    page.click("#match-next")  # the next 50, focus on the first of them
    page.wait_for_function("document.getElementById('match-range').textContent.startsWith('51')")
    assert page.text_content("#match-range") == f"51–{min(100, expected)} of {expected}"
    assert page.evaluate("document.activeElement.closest('#match-list') !== null")
    assert state.errors == [] and state.blocked == []


def _expected_error(line: str) -> bool:
    """The browser's own report of the shards this test broke (a missing file, a script that
    does not parse), which the page cannot prevent."""
    return "ERR_FILE_NOT_FOUND" in line or "Unexpected token" in line


def test_a_missing_or_corrupt_shard_is_reported_and_the_rest_works(site, open_offline):
    state = open_offline(site / "map.html")
    page = state.page
    shard_of = page.evaluate("[...window.TopicMap.instance.data.shard]")
    token = page.evaluate("window.TopicMap.instance.data.DATA.shard_tokens")
    first_of = {s: shard_of.index(s) for s in sorted(set(shard_of))}
    missing, bad_payload, stale, not_js, good = list(first_of)[:5]
    (site / shard_path(missing)).unlink()
    (site / shard_path(bad_payload)).write_text(
        f'topicMapShard({bad_payload},"{token[bad_payload]}","bm90IGRlZmxhdGU=");\n'
    )
    (site / shard_path(stale)).write_text(f'topicMapShard({stale},"000000000000","AA==");\n')
    (site / shard_path(not_js)).write_text("topicMapShard(<<<")
    for shard in (missing, bad_payload, stale, not_js):
        _open_paper(page, first_of[shard])
        assert page.text_content("#paper-abstract") == "This paper's text could not be loaded."
        assert page.is_visible("#panel-message")
        assert shard_path(shard) in page.text_content("#panel-message")
    # the rest of the map keeps working: another paper opens, search answers, points drawn
    _open_paper(page, first_of[good])
    assert page.text_content("#paper-abstract") != "This paper's text could not be loaded."
    assert page.locator("#paper-neighbours button").count() == 5
    assert _search(page, "a") > 0
    assert page.evaluate(PAPER_POINTS) > 0 and page.evaluate(GL_PIXELS) > 0
    message = page.text_content("#panel-message")
    assert "could not be loaded" in message and "another build" in message
    assert "corrupt" in message and "missing" in message
    assert [e for e in state.errors if not _expected_error(e)] == []
    assert state.blocked == []


def test_long_non_latin_and_hostile_text_stays_text_in_list_hover_and_panel(
    tmp_path: Path, open_offline
):
    synthetic = corpus(60, n_topics=6, n_themes=2)
    documents = synthetic.documents
    long_title = HOSTILE_TITLE + " 强化学习と拡散モデル " + "очень длинный заголовок " * 40
    documents.loc[0, "title"] = long_title
    documents.loc[0, "abstract"] = HOSTILE_ABSTRACT + " <!-- " + "مرحبا بالعالم " * 400
    render_site(tmp_path, synthetic)
    state = open_offline(tmp_path / "map.html")
    page = state.page
    index_of = "(id) => window.TopicMap.instance.indexById.get(id)"
    index = page.evaluate(index_of, documents.loc[0, "doc_id"])
    assert _search(page, "强化学习と") == 1
    row = page.locator("#match-list button").nth(0)
    assert long_title in row.text_content()
    row.click()
    page.wait_for_selector("#paper-detail:not([hidden])")
    assert page.text_content("#paper-title") == long_title
    assert page.text_content("#paper-abstract") == documents.loc[0, "abstract"]
    page.evaluate("window.TopicMap.instance.select(null)")
    # hover: the tooltip the plot's hover event fills
    page.evaluate(
        """(i) => { const gd = document.getElementById('topic-map');
            const drawn = window.TopicMap.instance.figure.drawn;
            const k = gd.data.findIndex(t => drawn.get(t.uid)?.includes(i)
                && t.uid.startsWith('papers-'));
            const n = drawn.get(gd.data[k].uid).indexOf(i);
            gd.emit('plotly_hover', {points: [{data: gd.data[k], pointNumber: n}],
                event: {clientX: 300, clientY: 300}}); }""",
        index,
    )
    page.wait_for_selector("#tooltip:not([hidden])")
    assert long_title in page.text_content("#tooltip")
    assert not pwned(page)
    assert page.evaluate("document.querySelectorAll('img, i, b').length") == 0
    assert state.errors == [] and state.blocked == []


def test_a_browser_without_a_base64_decoder_decodes_the_same_papers(site, synthetic, open_offline):
    """Uint8Array.fromBase64 is recent (Chromium 140): without it the page decodes the typed
    arrays and the shards with atob, to the same coordinates and text."""
    columns = (
        "() => { const D = window.TopicMap.instance.data; "
        "return [Array.from(D.x), Array.from(D.topic)]; }"
    )
    native = open_offline(site / "map.html").page.evaluate(columns)
    state = open_offline(site / "map.html", before="delete Uint8Array.fromBase64")
    page = state.page
    assert page.evaluate("typeof Uint8Array.fromBase64") == "undefined"
    assert page.evaluate(columns) == native
    _open_paper(page, 250)
    assert page.text_content("#paper-abstract") == _papers(synthetic).loc[250, "abstract"]
    assert state.errors == [] and state.blocked == []

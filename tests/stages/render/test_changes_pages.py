"""The pages with a build's history (render.History): the report's "What changed" section and
fit note (every paper added since the fit counted, the topics born since said), and the map's
data marking a born topic and naming where an ended topic's papers went."""

from __future__ import annotations

import re

from pipeline.config import CompareConfig
from pipeline.stages import compare
from pipeline.stages.render import History
from tests.support import tables as make
from tests.support.render_frames import NOTES, changed_history, island, rendered, tiny_tables


def test_the_report_says_what_changed_and_counts_every_paper_added_since_the_fit():
    pages = rendered(tiny_tables(), history=changed_history())
    report = pages["index.html"]
    note = re.search(r'<p class="note" id="fit-note">(.*?)</p>', report, flags=re.S).group(1)
    assert "on 3 papers" in note and "2 papers added since" in note
    assert "or in the topic born since among them" in note
    section = re.search(r'<section id="changes">(.*?)</section>', report, flags=re.S).group(1)
    born = re.findall(r'<li class="born">(.*?)</li>', section, flags=re.S)
    assert len(born) == 1 and 'href="map.html#topic=1"' in born[0]
    assert "graph, message passing" in born[0] and "ICLR 2025 (1), ICML 2025 (1)" in born[0]
    assert '<li class="added">2 papers added</li>' in section
    data = island(pages["map.html"], "paper-data")
    assert [t["id"] for t in data["topics"] if t.get("new")] == [1]
    assert data["gone"] == [
        {"id": 7, "label": "an old topic", "status": "retired", "successors": [1]}
    ]


def test_without_a_history_the_pages_have_no_section_and_no_marks():
    pages = rendered(tiny_tables(), fitted_at="2026-12-05T08:00:00Z")
    assert 'id="changes"' not in pages["index.html"]
    assert "0 papers added since" in pages["index.html"]
    data = island(pages["map.html"], "paper-data")
    assert data["gone"] == [] and not any(t.get("new") for t in data["topics"])


def test_a_first_fit_says_so_in_one_line():
    history = History(
        notes={**NOTES, "papers_at_fit": "5"},
        registry=make.registry(
            [{"topic": 0, "made_in": "fit-b"}, {"topic": 1, "made_in": "fit-b"}]
        ),
        snapshots=make.snapshots("fit", {-1: 1, 0: 2, 1: 2}, "fit-b"),
    )
    report = rendered(tiny_tables(), history=history)["index.html"]
    section = re.search(r'<section id="changes">(.*?)</section>', report, flags=re.S).group(1)
    assert re.findall(r"<(?:p|li|h3)\b", section) == ["<p"]
    assert "First fit" in section


def test_the_per_year_section_opens_with_the_latest_year_against_the_earlier_ones():
    frames = tiny_tables()
    frames["documents"]["year"] = frames["documents"]["year"].astype("Int32")
    frames["documents"].loc[:, "year"] = [2024, 2024, 2024, 2025, 2025]
    tables_ = [frames[k] for k in ("documents", "clusters", "topics", "themes")]
    venue_years = compare.make_venue_years(*tables_, CompareConfig())
    report = rendered(frames, venue_years=venue_years)["index.html"]
    assert 'id="changes"' not in report  # no fit: nothing since one
    years = re.search(r'<section id="years-section">(.*?)</section>', report, flags=re.S).group(1)
    assert '<h3 id="latest-year">In 2025, against 2024</h3>' in years
    assert "of the 2 papers of 2025 against its share of the 3 of 2024" in years
    # topics 0 and 1 hold one of the three papers of 2024 each and one of the two of 2025
    rose = re.search(r'<li class="rose-most">(.*?)</li>', years, flags=re.S).group(1)
    assert re.findall(r'href="map.html#topic=(\d+)"', rose) == ["0", "1"]
    assert "33.3% → 50.0%" in rose
    assert 'class="fell-most"' not in years and 'class="first-seen"' not in years

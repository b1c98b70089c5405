"""The report's "What changed" core (render/changes.py) on small frames: the topics born (with
where their papers appeared), ended (with where their papers went), grown and shrunk beyond
chance since the fit and since the previous build, the latest year against the earlier ones,
and the one-line note where nothing changed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline import tables
from pipeline.config import CompareConfig
from pipeline.log_odds import log_odds_z
from pipeline.stages import compare
from pipeline.stages.render import changes
from tests.support import tables as make

ODDS = changes.Odds(prior_scale=0.1, z_threshold=1.96)


def _frame(topics: list[int], venues=None, years=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the papers' frame, the topics table) of papers p0, p1, ... in `topics`."""
    n = len(topics)
    documents = make.documents(n=n, venues=venues or "ICML", years=2025 if years is None else years)
    clusters = make.clusters(documents["doc_id"].tolist(), topics)
    ids = sorted(set(topics))
    table = make.topics(ids, sizes=[topics.count(t) for t in ids])
    return tables.paper_frame(documents, clusters, table), table


def _ids(rows: list[dict]) -> list[int]:
    return [r["id"] for r in rows]


def test_growth_is_the_log_odds_of_each_topics_share_now_against_then():
    then = pd.Series({-1: 5, 0: 50, 1: 45})
    now = pd.Series({-1: 5, 0: 90, 1: 45, 2: 10})
    table = changes.growth(then, now, ODDS)
    counts = np.array([[5, 5], [50, 90], [45, 45], [0, 10]], dtype=float)
    assert np.allclose(table["z"], log_odds_z(counts, 0.1)[:, 1])
    assert table["topic"].tolist() == [-1, 0, 1, 2]
    assert table.set_index("topic").loc[1, "z"] < 0 < table.set_index("topic").loc[0, "z"]
    assert np.isclose(table["now_share"].sum(), 1.0) and np.isclose(table["then_share"].sum(), 1.0)


def test_topics_born_since_the_fit_are_listed_with_where_their_papers_appeared():
    venues = ["ICML"] * 22 + ["ICLR"] * 2
    years = [2025] * 22 + [2026] * 2
    topics = [0] * 10 + [1] * 10 + [2, 2] + [2, 2]  # two unassigned papers and two new join 2
    frame, table = _frame(topics, venues, years)
    registry = make.registry(
        [{"topic": 0}, {"topic": 1}, {"topic": 2, "made": "emerged", "made_in": "fit-b"}]
    )
    fit = changes.Fit("fit-b", "2026-12-05T08:00:00Z", 22)
    at_fit = (pd.Series({-1: 2, 0: 10, 1: 10}), "fit-a")
    part = changes.since_fit(frame, table.set_index("topic")["label"], registry, fit, at_fit, ODDS)
    assert part["added"] == 2 and _ids(part["born"]) == [2] and part["gone"] == []
    born = part["born"][0]
    assert born["editions"] == "ICLR 2026 (2), ICML 2025 (2)"
    assert born["made"] == "emerged" and born["how"].startswith("born since the fit")
    assert born["papers"] == 4


def test_a_refit_lists_the_topics_it_made_and_where_the_ended_ones_papers_went():
    frame, table = _frame([3] * 6 + [4] * 6 + [5] * 8 + [-1] * 2)
    registry = make.registry(
        [
            {"topic": 0, "status": "split", "change": "split", "changed_in": "fit-b",
             "successors": [3, 4], "label": "old zero"},
            {"topic": 1, "status": "merged", "change": "merged", "changed_in": "fit-b",
             "successors": [5]},
            {"topic": 2, "status": "retired", "change": "retired", "changed_in": "fit-b"},
            {"topic": 3, "made": "split", "made_in": "fit-b", "parents": [0]},
            {"topic": 4, "made": "split", "made_in": "fit-b", "parents": [0]},
            {"topic": 5, "made": "merged", "made_in": "fit-b", "parents": [1, 2]},
        ]
    )  # fmt: skip
    labels = dict(zip(table["topic"], table["label"], strict=True))
    fit = changes.Fit("fit-b", None, 22)
    at_fit = (pd.Series({-1: 2, 3: 6, 4: 6, 5: 8}), "fit-b")
    part = changes.since_fit(frame, labels, registry, fit, at_fit, ODDS)
    assert _ids(part["born"]) == [3, 4, 5] and part["added"] == 0
    assert part["born"][0]["how"] == "split off at the fit from #0"
    assert part["born"][2]["how"] == "merged at the fit from #1, #2"
    gone = {g["id"]: g for g in part["gone"]}
    assert [g["status"] for g in part["gone"]] == ["split", "merged", "retired"]
    assert gone[0]["label"] == "old zero"
    assert gone[0]["successors"] == [{"id": 3, "label": "topic 3"}, {"id": 4, "label": "topic 4"}]
    assert _ids(gone[1]["successors"]) == [5] and gone[2]["successors"] == []
    assert part["grew"] == part["shrank"] == []


def test_topics_that_grew_or_shrank_beyond_chance_since_the_previous_build():
    frame, table = _frame([0] * 90 + [1] * 10 + [2] * 50)
    labels = dict(zip(table["topic"], table["label"], strict=True))
    part = changes.since_build(frame, labels, None, pd.Series({0: 50, 1: 50, 2: 50}), ODDS)
    assert _ids(part["grew"]) == [0] and _ids(part["shrank"]) == [1]
    assert part["grew"][0]["then"] == 50 and part["grew"][0]["now"] == 90
    assert part["added"] == 0 and part["born"] == part["gone"] == []
    slightly = changes.since_build(frame, labels, None, pd.Series({0: 88, 1: 12, 2: 50}), ODDS)
    assert slightly["grew"] == slightly["shrank"] == []  # within chance
    assert changes.since_build(frame, labels, None, pd.Series({0: 90, 1: 10, 2: 50}), ODDS) is None


def test_a_topic_gone_since_the_previous_build_without_a_registry_says_so():
    frame, table = _frame([0] * 5 + [2] * 5)
    labels = dict(zip(table["topic"], table["label"], strict=True))
    part = changes.since_build(frame, labels, None, pd.Series({0: 5, 1: 3}), ODDS)
    assert _ids(part["born"]) == [2] and part["born"][0]["how"] == ""
    assert part["gone"] == [{"id": 1, "label": "Topic 1", "status": "gone", "successors": []}]
    assert part["added"] == 2


def test_the_previous_build_is_left_out_where_it_says_what_the_fit_says():
    frame, table = _frame([0] * 10 + [1] * 3)
    registry = make.registry([{"topic": 0}, {"topic": 1, "made": "emerged", "made_in": "fit-b"}])
    snapshots = pd.concat(
        [make.snapshots("fit", {0: 10}), make.snapshots("build", {0: 10})], ignore_index=True
    )
    notes = {"fit_id": "fit-b", "fitted_at": "2026-12-05T08:00:00Z", "papers_at_fit": "10"}
    found = changes.changes_context(frame, table, registry, snapshots, notes, None, ODDS)
    assert [p["key"] for p in found["parts"]] == ["fit"] and found["parts"][0]["also_build"]
    assert found["new"] == [1] and found["note"] is None and found["years"] is None
    later = pd.concat(
        [make.snapshots("fit", {0: 10}), make.snapshots("build", {0: 10, 1: 2})], ignore_index=True
    )
    both = changes.changes_context(frame, table, registry, later, notes, None, ODDS)
    assert [p["key"] for p in both["parts"]] == ["fit", "build"]
    assert both["parts"][1]["born"] == [] and both["parts"][1]["added"] == 1


def test_a_note_where_nothing_changed_and_nothing_without_a_fit_or_years():
    frame, table = _frame([0] * 10 + [1] * 3)
    registry = make.registry([{"topic": 0}, {"topic": 1}])
    notes = {"fit_id": "fit-a", "papers_at_fit": "13"}
    fit_only = make.snapshots("fit", {0: 10, 1: 3})
    first = changes.changes_context(frame, table, registry, fit_only, notes, None, ODDS)
    assert first["parts"] == [] and first["note"] == "first" and first["new"] == []
    built = pd.concat([fit_only, make.snapshots("build", {0: 10, 1: 3})], ignore_index=True)
    same = changes.changes_context(frame, table, registry, built, notes, None, ODDS)
    assert same["note"] == "nothing"
    assert changes.changes_context(frame, table, None, None, None, None, ODDS) is None


def test_the_latest_year_against_the_earlier_ones():
    years = [2022] * 40 + [2023] * 40 + [2024] * 40
    topics = [0] * 20 + [1] * 20 + [0] * 20 + [1] * 20 + [0] * 5 + [1] * 25 + [2] * 10
    venues = ["ICML", "ICLR"] * 60
    frame, table = _frame(topics, venues, years)
    documents = make.documents(n=len(topics), venues=venues, years=years)
    clusters = make.clusters(documents["doc_id"].tolist(), topics)
    themes = make.themes_of(table)
    venue_years = compare.make_venue_years(documents, clusters, table, themes, CompareConfig())
    labels = dict(zip(table["topic"], table["label"], strict=True))
    found = changes.latest_year(venue_years, labels, ODDS)
    assert found["latest"] == 2024 and found["earlier"] == "2022–2023"
    assert found["papers"] == 40 and found["earlier_papers"] == 80
    assert _ids(found["rose"]) == [2, 1] and _ids(found["fell"]) == [0]
    assert found["fell"][0]["beyond"] and found["rose"][0]["beyond"]
    assert _ids(found["first_seen"]) == [2]
    one_year = venue_years[venue_years["year"] == 2024]
    assert changes.latest_year(one_year, labels, ODDS) is None
    context = changes.changes_context(frame, table, None, None, None, venue_years, ODDS)
    assert context["parts"] == [] and context["note"] is None and context["years"] == found


def test_the_maps_ended_topics_name_their_successors():
    registry = make.registry(
        [
            {"topic": 0, "status": "merged", "successors": [2], "label": "old"},
            {"topic": 1, "status": "retired", "label": ""},
            {"topic": 2, "made": "merged", "parents": [0]},
        ]
    )
    gone = changes.gone_topics(registry, {2: "two", 1: "one now"})
    assert gone == [
        {"id": 0, "label": "old", "status": "merged", "successors": [2]},
        {"id": 1, "label": "one now", "status": "retired", "successors": []},
    ]
    assert changes.gone_topics(None, {}) == []

"""The topics' snapshots the cluster stage keeps beside the model (model/snapshots.parquet): the
fit's, taken by the build that fits and kept while papers are added; the previous build's,
taken only when a build changes the topics' papers; the file rewritten only when they change."""

from __future__ import annotations

import pandas as pd

from pipeline import schemas, tables
from pipeline.stages.cluster import snapshots
from tests.support import tables as make


def _clusters(topics: list[int]) -> pd.DataFrame:
    return make.clusters([f"p{i}" for i in range(len(topics))], topics)


def _papers(frame: pd.DataFrame, kind: str) -> dict[int, int]:
    rows = frame[frame["snapshot"] == kind]
    return dict(zip(rows["topic"].astype(int), rows["papers"].astype(int), strict=True))


def test_a_first_fit_keeps_the_fit_and_no_previous_build():
    first = snapshots.updated(None, None, "", _clusters([0, 0, 1, -1]), "fit-a", refitted=True)
    assert _papers(first, "fit") == {-1: 1, 0: 2, 1: 1}
    assert set(first["fit_id"]) == {"fit-a"}
    assert _papers(first, "build") == {}


def test_added_papers_keep_the_fit_and_take_the_previous_build():
    before = _clusters([0, 0, 1, -1])
    history = snapshots.updated(None, None, "", before, "fit-a", refitted=True)
    grown = _clusters([0, 0, 1, 2, 2, 2])  # the unassigned paper and two new ones: topic 2
    after = snapshots.updated(history, before, "fit-a", grown, "fit-b", refitted=False)
    assert _papers(after, "fit") == {-1: 1, 0: 2, 1: 1}  # the fit's, though the fit_id moved
    assert _papers(after, "build") == {-1: 1, 0: 2, 1: 1}
    assert set(after.loc[after["snapshot"] == "build", "fit_id"]) == {"fit-a"}
    # a build that changes nothing keeps the build before as "the previous build"
    again = snapshots.updated(after, grown, "fit-b", grown, "fit-b", refitted=False)
    assert _papers(again, "build") == {-1: 1, 0: 2, 1: 1}
    more = _clusters([0, 0, 1, 2, 2, 2, 2])
    later = snapshots.updated(again, grown, "fit-b", more, "fit-b", refitted=False)
    assert _papers(later, "build") == {0: 2, 1: 1, 2: 3}


def test_a_model_saved_without_snapshots_takes_its_fit_from_the_papers_the_fit_placed():
    before = pd.concat(
        [_clusters([0, 0, 1, -1]), make.clusters(["q0", "q1"], [1, -1], placed="added")],
        ignore_index=True,
    )
    grown = pd.concat([before, make.clusters(["q2"], [0], placed="added")], ignore_index=True)
    after = snapshots.updated(None, before, "fit-a", grown, "fit-a", refitted=False)
    assert _papers(after, "fit") == {-1: 1, 0: 2, 1: 1}  # q0 and q1 came after the fit
    assert set(after.loc[after["snapshot"] == "fit", "fit_id"]) == {"fit-a"}
    assert _papers(after, "build") == {-1: 2, 0: 2, 1: 2}


def test_a_refit_takes_a_new_fit_and_the_build_it_replaced():
    before = _clusters([0, 0, 1, -1])
    history = snapshots.updated(None, None, "", before, "fit-a", refitted=True)
    refit = _clusters([3, 3, 3, -1])
    after = snapshots.updated(history, before, "fit-a", refit, "fit-c", refitted=True)
    assert _papers(after, "fit") == {-1: 1, 3: 3}
    assert set(after.loc[after["snapshot"] == "fit", "fit_id"]) == {"fit-c"}
    assert _papers(after, "build") == {-1: 1, 0: 2, 1: 1}


def test_the_file_is_written_only_when_its_rows_change(tmp_path):
    rows = snapshots.updated(None, None, "", _clusters([0, 1]), "fit-a", refitted=True)
    snapshots.keep(tmp_path, rows)
    path = tmp_path / snapshots.FILE
    written = path.stat().st_mtime_ns
    snapshots.keep(tmp_path, rows.sample(frac=1, random_state=0))  # the same rows, reordered
    assert path.stat().st_mtime_ns == written
    pd.testing.assert_frame_equal(snapshots.read(tmp_path), rows, check_dtype=False)
    changed = snapshots.updated(rows, _clusters([0, 1]), "fit-a", _clusters([0, 0]), "fit-a", False)
    snapshots.keep(tmp_path, changed)
    assert _papers(tables.read_table(path, schemas.TOPIC_SNAPSHOTS), "build") == {0: 1, 1: 1}


def test_an_unreadable_file_is_kept_afresh_with_a_note(tmp_path, caplog):
    (tmp_path / snapshots.FILE).write_bytes(b"not parquet")
    with caplog.at_level("INFO", logger="pipeline.cluster"):
        assert snapshots.read(tmp_path) is None
    assert "not readable" in caplog.text

"""The sample bench's diagnosis cores: topics matched one-to-one, and the agreement split into
fitted and placed papers."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.runs import load_tool

bench_sample = load_tool("bench_sample")


def test_topics_are_matched_one_to_one_and_splits_and_losses_shown():
    full = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, -1])
    other = np.array([5, 5, 5, 5, 6, 6, 7, 7, -1, -1, 9])
    table = bench_sample.matched_topics(full, other).set_index("topic")
    assert table.loc[0, ["papers", "matched", "jaccard", "parts"]].tolist() == [4, 5, 1.0, 1]
    assert table.loc[1, "matched"] in (6, 7) and table.loc[1, "jaccard"] == 0.5
    assert table.loc[1, "parts"] == 2  # split in two
    # topic 2: every paper left unassigned, no sample topic shares one: lost, not matched
    assert table.loc[2, ["matched", "jaccard", "parts", "unassigned"]].tolist() == [-1, 0, 0, 1]
    assert table["papers"].is_monotonic_decreasing


def test_two_topics_merged_into_one_leave_one_unmatched():
    full = np.array([0, 0, 0, 1, 1, 1])
    table = bench_sample.matched_topics(full, np.zeros(6, dtype=int)).set_index("topic")
    assert sorted(table["matched"].tolist()) == [-1, 0]
    assert table["parts"].tolist() == [1, 1]


def test_agreement_is_split_into_fitted_and_placed_papers():
    full = np.array([0, 0, 1, 1, 0, 0, 1, 1])
    other = np.array([3, 3, 4, 4, 3, 4, 3, 4])  # the fitted half agrees, the placed half not
    fitted = np.arange(8) < 4
    split = bench_sample.split_agreement(full, other, fitted)
    assert split["fitted"] == pytest.approx(1.0)
    assert split["placed"] < 0.5 and split["placed"] < split["all"] < 1.0


def test_the_report_shows_each_sample_size_and_its_worst_topics():
    split = {"all": 0.7, "fitted": 0.72, "placed": 0.69}
    worst = {"topic": 49, "papers": 43, "jaccard": 0.0, "parts": 0, "unassigned": 0.0}
    diagnosis = {
        "fitted": 4836,
        "sample_vs_full": split,
        "next_seed_vs_full": split,
        "disjoint_samples": 0.64,
        "mean_jaccard": 0.59,
        "below_half": 13,
        "split": 9,
        "worst": [worst],
    }
    lines = bench_sample.diagnosis_lines(diagnosis)
    assert "4836 fitted" in lines[0] and "0.700 / 0.720 / 0.690" in lines[0]
    assert "two disjoint samples 0.640" in lines[0]
    assert "13 below 0.5, 9 split" in lines[1]
    assert lines[2].split() == ["49", "43", "0.00", "0", "0.00"]

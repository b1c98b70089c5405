"""Venue comparison: weighted log-odds z-scores with an informative Dirichlet prior."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.config import CompareConfig
from pipeline.stages import compare
from pipeline.stages.compare import flags, log_odds_z, make_venue_topics
from tests.support.build_folder import write_build
from tests.support.compare_inputs import compare_inputs, write_compare_inputs


def test_a_known_over_representation_is_flagged_both_ways():
    # topic 0 holds 10% of venue A's papers and 2% of venue B's; topic 1 the same share of both
    counts = np.array([[100, 20], [100, 100], [800, 880]])
    z = log_odds_z(counts, prior_scale=0.1)
    assert z[0, 0] > 1.96 and z[0, 1] < -1.96
    assert abs(z[1, 0]) < 1.96
    np.testing.assert_allclose(z[:, 0], -z[:, 1])  # two venues: one is the other's mirror
    assert list(flags(z[:, 0], 1.96)) == ["over", "none", "under"]


def test_a_stronger_prior_shrinks_the_z_scores():
    counts = np.array([[30, 10], [970, 990]])
    weak, strong = log_odds_z(counts, 0.01), log_odds_z(counts, 1.0)
    assert abs(strong[0, 0]) < abs(weak[0, 0])
    assert np.sign(strong[0, 0]) == np.sign(weak[0, 0]) == 1


def test_three_venues_each_against_the_other_two():
    counts = np.array([[60, 20, 20], [440, 480, 480]])
    z = log_odds_z(counts, 0.1)
    assert z[0, 0] > 1.96 and z[0, 1] < 0 and z[0, 2] < 0
    assert z[0, 1] == pytest.approx(z[0, 2])


def test_one_venue_compares_nothing():
    z = log_odds_z(np.array([[3], [7]]), 0.1)
    assert np.isnan(z).all()
    assert list(flags(z, 1.96)) == ["none", "none"]


def test_venue_table_has_every_topic_and_theme_at_every_venue():
    documents, clusters, topics, themes = compare_inputs(["ICML", "ICLR"] * 30)
    table = make_venue_topics(documents, clusters, topics, themes, CompareConfig(z_threshold=2.5))
    assert list(table.columns) == schemas.VENUE_TOPICS.columns
    assert len(table[table["level"] == "topic"]) == 3 * 2
    assert len(table[table["level"] == "theme"]) == 2 * 2
    for (_level, _venue), group in table.groupby(["level", "venue"]):
        assert group["share"].sum() == pytest.approx(1.0)
        assert group["count"].sum() == 30
        assert set(group["venue_papers"]) == {30}
    assert set(table["z_threshold"]) == {2.5}
    theme = table[(table["level"] == "theme") & (table["id"] == 0)]
    assert theme["label"].unique().tolist() == ["maths"]
    assert set(table["flag"]) <= {"over", "under", "none"}


def test_venue_table_with_a_single_venue_has_no_z_and_no_flags():
    documents, clusters, topics, themes = compare_inputs(["NeurIPS"] * 12)
    table = make_venue_topics(documents, clusters, topics, themes, CompareConfig())
    assert table["z"].isna().all()
    assert set(table["flag"]) == {"none"}
    assert table.loc[table["level"] == "topic", "share"].sum() == pytest.approx(1.0)


# ---------------------------------------------------------------- edges, and the stage's run()


def test_flags_at_the_threshold_and_for_missing_z():
    z = [None, float("nan"), 1.5, -1.5, 1.49, -1.49]
    assert list(flags(z, 1.5)) == ["none", "none", "over", "under", "none", "none"]
    assert list(flags([float("nan")], 1.0)) == ["none"]


def test_log_odds_z_by_hand_and_for_empty_topics():
    # topic 0: 30 of venue A's 100 papers, 10 of B's 100; prior 0.5 x the topic's 40 papers
    z = log_odds_z(np.array([[30, 10], [70, 90]]), prior_scale=0.5)
    prior = np.array([20.0, 80.0])  # 0.5 x each topic's papers; 100 in all
    odds_a = (30 + 20) / (100 + 100 - 30 - 20)
    odds_b = (10 + 20) / (100 + 100 - 10 - 20)
    expected = (np.log(odds_a) - np.log(odds_b)) / np.sqrt(1 / (30 + 20) + 1 / (10 + 20))
    assert prior.sum() == 100 and z[0, 0] == pytest.approx(expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a topic without papers is 0, silently
        z = log_odds_z(np.array([[0, 0], [1, 0], [40, 60]]), 0.1)
    assert z[0].tolist() == [0.0, 0.0] and z[1, 0] > 0 > z[1, 1]
    assert np.isnan(log_odds_z(np.zeros((2, 2)), 0.1)).all()  # no papers at all


def test_venue_table_rows_labels_and_types():
    documents, clusters, topics, themes = compare_inputs(["ICML", "ICLR"] * 30)
    clusters.loc[:9, "topic"] = 0  # topic 0 mostly ICML: flagged
    clusters.loc[clusters["topic"] == 0, "topic"] = np.where(
        documents.loc[clusters["topic"] == 0, "venue"] == "ICML", 0, 1
    ).astype(np.int32)
    table = make_venue_topics(documents, clusters, topics, themes, CompareConfig())
    assert table.index.tolist() == list(range(len(table)))
    assert table["venue_papers"].dtype.kind == "i" and table["count"].dtype.kind == "i"
    assert all(isinstance(z, float) for z in table["z"])
    assert "over" in set(table["flag"]) and "under" in set(table["flag"])
    # a topic the topics table does not hold is named Unassigned and has no theme
    no_unassigned = topics[topics["topic"] >= 0].reset_index(drop=True)
    table = make_venue_topics(documents, clusters, no_unassigned, themes, CompareConfig())
    assert set(table.loc[table["id"] == -1, "label"]) == {"Unassigned"}
    assert set(table.loc[table["level"] == "theme", "id"]) == {-1, 0}
    single = make_venue_topics(*compare_inputs(["NeurIPS"] * 6), CompareConfig())
    assert all(z is None for z in single["z"])


def test_run_writes_the_table_with_its_lineage_and_logs_the_flags(tmp_path, caplog):
    venues = ["ICML"] * 20 + ["ICLR"] * 20
    paths = write_compare_inputs(tmp_path, venues)
    clusters = tables.read_table(paths["clusters"], schemas.CLUSTERS)
    clusters["topic"] = [0] * 16 + [1] * 4 + [1] * 12 + [-1] * 8  # 0 at ICML, -1 at ICLR
    write_build(tmp_path, clusters=clusters)
    out = tmp_path / "venue_topics.parquet"
    config = CompareConfig(z_threshold=2.0)
    with caplog.at_level(logging.INFO, logger="pipeline.compare"):
        compare.run(config, **paths, venue_topics=out, venue_years=tmp_path / "years.parquet")
    written = tables.read_table(out, schemas.VENUE_TOPICS)
    read = {
        name: tables.read_table(path, getattr(schemas, name.upper()))
        for name, path in paths.items()
    }
    expected = make_venue_topics(
        read["documents"], read["clusters"], read["topics"], read["themes"], config
    )
    pd.testing.assert_frame_equal(written, expected, check_dtype=False)
    assert tables.read_lineage(out) == tables.stage_lineage(config, **paths)
    over = written[(written["flag"] == "over") & (written["id"] >= 0)]
    lines = [r.getMessage() for r in caplog.records]
    assert sorted(lines) == sorted(
        f"{r.level} {r.id} over-represented at {r.venue} (z = {r.z:+.1f}): {r.label}"
        for r in over.itertuples()
    )
    assert "topic 0 over-represented at ICML" in caplog.text
    assert (written["flag"] == "over").sum() > len(over)  # the unassigned group is not logged
    caplog.clear()
    single = write_compare_inputs(tmp_path / "one", ["NeurIPS"] * 6)
    with caplog.at_level(logging.INFO, logger="pipeline.compare"):
        compare.run(
            config,
            **single,
            venue_topics=tmp_path / "one" / "v.parquet",
            venue_years=tmp_path / "one" / "y.parquet",
        )
    assert [r.getMessage() for r in caplog.records] == ["note: one venue: nothing to compare"]

"""Venue comparison: weighted log-odds z-scores with an informative Dirichlet prior."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas
from pipeline.compare import flags, log_odds_z, venue_table
from pipeline.config import CompareConfig


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


def _build(venues: list[str]):
    n = len(venues)
    documents = pd.DataFrame(
        {"doc_id": [f"d{i}" for i in range(n)], "venue": venues, "abstract": ["text"] * n}
    )
    topics_of = [i % 3 - 1 for i in range(n)]  # -1, 0, 1, -1, 0, 1, ...
    clusters = pd.DataFrame({"doc_id": documents["doc_id"], "topic": topics_of})
    topics = pd.DataFrame(
        {"topic": [-1, 0, 1], "label": ["Unassigned", "graphs", "transport"], "theme": [-1, 0, 0]}
    )
    themes = pd.DataFrame({"theme": [0, -1], "label": ["maths", "Unassigned"]})
    return documents, clusters, topics, themes


def test_venue_table_has_every_topic_and_theme_at_every_venue():
    documents, clusters, topics, themes = _build(["ICML", "ICLR"] * 30)
    table = venue_table(documents, clusters, topics, themes, CompareConfig(z_threshold=2.5))
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
    documents, clusters, topics, themes = _build(["NeurIPS"] * 12)
    table = venue_table(documents, clusters, topics, themes, CompareConfig())
    assert table["z"].isna().all()
    assert set(table["flag"]) == {"none"}
    assert table.loc[table["level"] == "topic", "share"].sum() == pytest.approx(1.0)

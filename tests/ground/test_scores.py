"""Topic scores: NPMI, diversity, outlier and size shares, agreement between runs, labels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline.scores import (
    adjusted_rand_agreement,
    assignment_figures,
    label_faults,
    npmi_coherence,
    npmi_pair,
    quality_figures,
    topic_diversity,
)
from pipeline.text import banned_words

# Four documents: a and b together twice, a alone once, c alone once.
DOCS = [{"a", "b"}, {"a", "b"}, {"a"}, {"c"}]


def test_npmi_of_a_hand_computed_pair():
    # p(a) = 3/4, p(b) = 2/4, p(a, b) = 2/4: log(0.5 / 0.375) / -log(0.5)
    expected = math.log(0.5 / 0.375) / -math.log(0.5)
    assert npmi_pair(3, 2, 2, 4) == pytest.approx(expected)
    assert npmi_coherence([["a", "b"]], DOCS) == [pytest.approx(expected)]


def test_npmi_bounds_never_together_always_together_and_short_lists():
    assert npmi_pair(2, 1, 0, 4) == -1.0  # never in the same document
    assert npmi_pair(4, 4, 4, 4) == 1.0  # in every document
    assert npmi_pair(2, 2, 2, 4) == pytest.approx(1.0)  # always together
    # a list's score is the mean over its pairs; pairs with c never meet
    (score,) = npmi_coherence([["a", "b", "c"]], DOCS)
    assert score == pytest.approx((npmi_pair(3, 2, 2, 4) - 1 - 1) / 3)
    assert math.isnan(npmi_coherence([["a"]], DOCS)[0])  # one term: no pair
    assert npmi_coherence([["a", "b", "c"]], DOCS, top_n=2) == npmi_coherence([["a", "b"]], DOCS)


def test_topic_diversity_counts_unique_terms():
    assert topic_diversity([["a", "b"], ["c", "d"]]) == 1.0
    assert topic_diversity([["a", "b"], ["a", "c"]]) == 0.75
    assert topic_diversity([list("abcdefghijkl"), list("abcdefghijkl")], top_n=10) == 0.5
    assert math.isnan(topic_diversity([]))


def test_assignment_figures_raw_and_final_outliers_and_largest_topic():
    topics = np.array([0, 0, 0, 1, 1, -1, 2, 2, 2, 2])
    raw_outlier = np.array([0, 1, 0, 0, 1, 1, 0, 0, 0, 0], dtype=bool)
    figures = assignment_figures(topics, raw_outlier)
    assert figures == {
        "papers": 10,
        "topics": 3,
        "outlier_share": 0.3,
        "unassigned_share": 0.1,
        "largest_topic_share": 0.4,
    }
    # without reassignment, the raw share is the final one
    assert assignment_figures(topics)["outlier_share"] == 0.1


def test_agreement_is_one_for_relabelled_runs_and_lower_when_they_differ():
    first = np.array([0, 0, 1, 1, 2, 2, -1])
    relabelled = np.array([5, 5, 3, 3, 1, 1, -1])
    assert adjusted_rand_agreement([first, relabelled])["ari_min"] == pytest.approx(1.0)
    moved = np.array([0, 0, 1, 1, 1, 2, 2])
    result = adjusted_rand_agreement([first, relabelled, moved])
    assert result["runs"] == 3
    # pairs: (first, relabelled) agree fully; both differ from `moved` alike
    assert result["ari_min"] == pytest.approx(result["ari_median"])
    assert 0 < result["ari_min"] < 1
    assert adjusted_rand_agreement([first]) == {"runs": 1}


@pytest.mark.parametrize(
    ("label", "faults"),
    [
        ("optimal transport, wasserstein", []),
        ("reinforcement learning", []),  # generic words inside a phrase are allowed
        ("a novel method for graphs", ["a", "for", "method", "novel"]),
        ("3_networks_the_of_gradient", ["of", "the"]),  # BERTopic's default label
    ],
)
def test_label_faults_name_stop_and_filler_words(label, faults):
    found = label_faults([label], banned_words())
    assert found.get(label, []) == faults


def test_quality_figures_of_topics_without_labels_or_scores():
    figures = quality_figures(
        topics=np.array([0, 0, 1, -1]),
        raw_outlier=None,
        term_lists={-1: ["x"], 0: ["a"], 1: ["b", "c"]},
        labels={0: "alpha, beta"},  # topic 1 has no label
        doc_terms=[{"a"}, {"b"}, {"c"}, set()],
        banned=banned_words(),
    )
    assert figures["npmi_mean"] == -1.0  # topic 1's pair never meets; topic 0 has no pair
    assert figures["labels_unique"] is True and figures["labels_with_stop_or_filler_words"] == 0
    assert figures["npmi_by_topic"] == [
        {"topic": 0, "label": "alpha, beta", "npmi": None},
        {"topic": 1, "label": "", "npmi": -1.0},
    ]
    none = quality_figures(np.array([-1]), None, {0: ["a"]}, {}, [set()], banned_words())
    assert none["npmi_mean"] is None and none["largest_topic_share"] == 0.0


def test_assignment_figures_of_one_paper_and_of_none():
    assert assignment_figures(np.array([0]))["largest_topic_share"] == 1.0
    assert assignment_figures(np.array([], dtype=int)) == {
        "papers": 0,
        "topics": 0,
        "outlier_share": 0.0,
        "unassigned_share": 0.0,
        "largest_topic_share": 0.0,
    }


def test_label_faults_split_at_commas_without_spaces():
    assert label_faults(["graph,the"], banned_words()) == {"graph,the": ["the"]}


def test_npmi_mean_is_the_mean_over_every_scored_topic():
    """Topics with different NPMI: the mean is over all of them (not the first, not the best)."""
    docs = [{"a", "b"}, {"a", "b"}, {"c"}, {"d"}, {"c", "d"}, {"e"}, {"f"}]
    figures = quality_figures(
        topics=np.array([0, 1, 2]),
        raw_outlier=None,
        term_lists={0: ["a", "b"], 1: ["c", "d"], 2: ["e", "f"]},
        labels={},
        doc_terms=docs,
        banned=banned_words(),
    )
    scores = [npmi_coherence([terms], docs)[0] for terms in (["a", "b"], ["c", "d"], ["e", "f"])]
    assert len(set(scores)) == 3  # three different scores: first, best and mean all differ
    assert figures["npmi_mean"] == pytest.approx(sum(scores) / 3)
    assert [row["npmi"] for row in figures["npmi_by_topic"]] == pytest.approx(scores)


def test_quality_figures_take_the_raw_outliers_from_hdbscan():
    topics = np.array([0, 0, 1, 1, -1])
    raw = np.array([True, True, False, False, True])  # three left out by HDBSCAN, two placed
    figures = quality_figures(topics, raw, {0: ["a"], 1: ["b"]}, {0: "a", 1: "b"}, [{"a"}], set())
    assert figures["outlier_share"] == pytest.approx(0.6)
    assert figures["unassigned_share"] == pytest.approx(0.2)
    same = quality_figures(topics, None, {0: ["a"], 1: ["b"]}, {0: "a", 1: "b"}, [{"a"}], set())
    assert same["outlier_share"] == pytest.approx(0.2)

"""Topic, theme and area labels: noun phrases, told from the neighbours, composites of heads."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.config import LabelConfig
from pipeline.stages.label.areas import area_count, assign_areas
from pipeline.stages.label.contrast import (
    WordEvidence,
    contrast_terms,
    label_words,
    nearest_groups,
)
from pipeline.stages.label.counts import count_chunk
from pipeline.stages.label.names import Label, topic_labels
from pipeline.stages.label.themes import composite_label, group_labels
from pipeline.text import term_analyzer
from tests.support.label_samples import unit_vectors


def test_nearest_groups_are_the_most_similar_others():
    centroids = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]], dtype=float)
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    near = nearest_groups(centroids, 1)
    assert [n.tolist() for n in near] == [[1], [0], [3], [2]]


def _corpus():
    """Three topics: 0 and 1 both about transport, 2 about graphs; 0 alone says sinkhorn."""
    texts = (
        ["Optimal transport with sinkhorn iterations. Entropic barycenters."] * 6
        + ["Optimal transport for domain shift. Wasserstein flows of measures."] * 6
        + ["Graph neural networks by message passing. Node classification."] * 6
    )
    titles = ["Sinkhorn barycenters"] * 6 + ["Wasserstein flows"] * 6 + ["Message passing"] * 6
    groups = np.repeat([0, 1, 2], 6)
    return texts, titles, groups


def test_contrast_terms_tell_a_topic_from_its_neighbours():
    texts, titles, groups = _corpus()
    counts, title_counts = count_chunk(texts, groups, 3), count_chunk(titles, groups, 3)
    scored = contrast_terms(counts, title_counts, {0: [1], 1: [0], 2: [0]}, 0.05)
    terms0 = [t for t, _ in scored[0]]
    # what topic 1 says as often is no candidate: only what tells 0 from 1
    assert "optimal transport" not in terms0
    assert "sinkhorn" in terms0 and "wasserstein" not in terms0
    score = dict(scored[0])
    assert score["sinkhorn"] > score["entropic barycenters"]  # its titles say it too


def test_a_label_names_words_its_papers_use_and_its_neighbours_do_not():
    texts, titles, groups = _corpus()
    counts, title_counts = count_chunk(texts, groups, 3), count_chunk(titles, groups, 3)
    neighbours = {0: [1], 1: [0], 2: [0, 1]}
    scored = contrast_terms(counts, title_counts, neighbours, 0.05)
    evidence = WordEvidence(texts, term_analyzer(3))
    papers_of = {g: np.flatnonzero(groups == g) for g in (0, 1, 2)}
    labels = topic_labels(scored, evidence, papers_of, neighbours, [0, 1, 2], 5)
    assert "sinkhorn" in labels[0].text and "wasserstein" not in labels[0].text
    assert "wasserstein" in labels[1].text or "domain shift" in labels[1].text
    assert labels[2].head in {"graph neural networks", "message passing", "node classification"}
    assert len({label.head for label in labels.values()}) == 3
    for label in labels.values():
        words = label.text.replace(",", " ").split()
        assert 2 <= len(words) <= 5, label
    # the evidence ranks a label of the topic's words above one of its neighbour's
    inside, outside = papers_of[0], papers_of[1]
    own = evidence.score(label_words("sinkhorn iterations"), inside, outside)
    other = evidence.score(label_words("wasserstein flows"), inside, outside)
    assert own > other


def test_a_topic_with_nothing_of_its_own_gets_a_name():
    texts = ["kernel ridge regression spline smoothing"] * 4
    groups = np.array([0, 0, 1, 1])
    counts = count_chunk(texts, groups, 3)
    scored = contrast_terms(counts, counts, {0: [1], 1: [0]}, 0.05)
    evidence = WordEvidence(texts, term_analyzer(3))
    papers_of = {0: np.array([0, 1]), 1: np.array([2, 3])}
    labels = topic_labels(scored, evidence, papers_of, {0: [1], 1: [0]}, [0, 1], 5)
    assert labels == {0: Label("Topic 0", ""), 1: Label("Topic 1", "")}


def test_composite_labels_factor_out_the_shared_phrase():
    heads = [
        "offline reinforcement learning",
        "embodied agents",
        "multi-agent reinforcement learning",
    ]
    assert (
        composite_label("reinforcement learning", heads)
        == "reinforcement learning: offline, embodied agents, multi-agent"
    )
    # a part keeps words of the shared phrase unless it holds all of them
    assert (
        composite_label(
            "contrastive learning",
            ["contrastive representation learning", "reinforcement learning"],
        )
        == "contrastive learning: representation, reinforcement learning"
    )
    # ... or less a run of two or more words it shares with it
    assert (
        composite_label("time series data", ["time series forecasting", "time series imputation"])
        == "time series data: forecasting, imputation"
    )
    assert composite_label(None, heads[:2]) == "offline reinforcement learning, embodied agents"
    assert composite_label("graph", ["graph"]) == "graph"
    # a part that the shared phrase leaves a bare adjective names no topic: no such label
    assert composite_label("language models", ["large language models", "code models"]) == ""


def test_a_theme_is_named_by_the_phrase_its_topics_share_and_their_heads():
    texts = (
        ["Offline reinforcement learning from logged data."] * 5
        + ["Multi-agent reinforcement learning with cooperation."] * 5
        + ["Image segmentation with convolutional networks."] * 5
        + ["Object detection with bounding boxes."] * 5
    )
    groups = np.repeat([0, 1, 2, 3], 5)
    counts = count_chunk(texts, groups, 3)
    evidence = WordEvidence(texts, term_analyzer(3))
    papers_of = {g: np.flatnonzero(groups == g) for g in range(4)}
    heads = {
        0: "offline reinforcement learning",
        1: "multi-agent reinforcement learning",
        2: "image segmentation",
        3: "object detection",
    }
    labels = {t: Label(f"{head}, data", head) for t, head in heads.items()}
    labels = group_labels(
        counts, counts, {0: [0, 1], 1: [2, 3]}, labels, (evidence, papers_of), 0.125
    )
    assert labels[0].text == "reinforcement learning: offline, multi-agent"
    assert labels[0].head == "reinforcement learning"
    assert labels[1].text == "image segmentation, object detection"  # nothing shared


@pytest.mark.parametrize(
    ("papers", "themes", "topics", "areas"),
    [
        (3_401, 10, 38, 0),  # a small corpus: two levels
        (25_000, 20, 90, 5),  # many papers
        (9_000, 20, 120, 5),  # many topics
        (25_000, 5, 20, 0),  # too few themes to group
        (25_000, 8, 30, 3),
        (200_000, 50, 400, 8),
    ],
)
def test_areas_only_in_a_large_corpus(papers, themes, topics, areas):
    assert area_count(papers, themes, topics, LabelConfig()) == areas


def test_areas_group_the_themes_whose_papers_lie_close():
    topics = np.repeat(np.arange(8), 10)
    themes = {t: t // 2 for t in range(8)}  # four themes of two topics
    vectors = unit_vectors(len(topics), topics // 4)  # themes 0, 1 close; 2, 3 close
    areas = assign_areas(vectors, topics, themes, 2)
    assert sorted(areas) == [0, 1, 2, 3]
    assert areas[0] == areas[1] and areas[2] == areas[3] and areas[0] != areas[2]
    assert assign_areas(vectors, topics, themes, 0) == {}

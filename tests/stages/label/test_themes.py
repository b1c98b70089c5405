"""Themes: how topics are grouped, and the telling terms and labels that name a theme."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from pipeline import schemas
from pipeline.config import LabelConfig
from pipeline.stages.label import assign_themes, make_topics, theme_count
from pipeline.stages.label.counts import count_chunk
from pipeline.stages.label.themes import telling_terms
from tests.support import tables as make
from tests.support.label_samples import unit_vectors as _vectors


def _label_both(documents, clusters, config=None, vectors=None):
    vectors = _vectors(len(documents)) if vectors is None else vectors
    topics, themes = make_topics(documents, clusters, vectors, config or LabelConfig())
    assert list(themes.columns) == schemas.THEMES.columns
    return topics, themes


@pytest.mark.parametrize(
    ("n_topics", "setting", "themes"),
    [
        (41, "auto", 10),
        (80, "auto", 20),
        (200, "auto", 20),
        (20, "auto", 8),
        (16, "auto", 8),
        (10, "auto", 5),  # too few topics for 8 themes: half of them
        (5, "auto", 2),
        (3, "auto", 3),  # one level: each topic its own theme
        (1, "auto", 1),
        (41, 12, 12),
        (10, 12, 5),
    ],
)
def test_theme_count_degrades_with_few_topics(n_topics, setting, themes):
    assert theme_count(n_topics, setting) == themes


def test_every_topic_is_in_one_theme_numbered_by_size(caplog):
    topics_of = np.repeat(np.arange(12), np.arange(12, 0, -1))  # topic 0 largest
    vectors = _vectors(len(topics_of), topics_of // 2)  # topics 2k and 2k+1 lie close
    with caplog.at_level(logging.INFO, logger="pipeline.label"):
        themes = assign_themes(vectors, topics_of, LabelConfig())
    assert sorted(themes) == list(range(12))
    assert sorted(set(themes.values())) == list(range(6))
    assert "note: only 12 topics: 6 themes" in caplog.text
    for k in range(0, 12, 2):
        assert themes[k] == themes[k + 1]
    sizes = {}
    for topic, theme in themes.items():
        sizes[theme] = sizes.get(theme, 0) + 12 - topic
    assert [sizes[t] for t in range(6)] == sorted(sizes.values(), reverse=True)


def test_many_topics_get_labelled_themes():
    words = [
        "sinkhorn barycenters",
        "graph convolutions",
        "policy gradients",
        "protein folding",
        "speech recognition",
        "image segmentation",
        "bandit regret",
        "differential privacy",
    ]
    abstracts, topics_of = [], []
    for topic in range(16):
        for k in range(3):
            abstracts.append(f"{words[topic // 2]} with variant{topic}. Case {k}.")
            topics_of.append(topic)
    documents = make.documents(abstracts, venues=["ICML", "ICLR"] * 24)
    vectors = _vectors(len(abstracts), np.array(topics_of) // 2)  # topics 2k, 2k+1 lie close
    clusters = make.clusters(documents["doc_id"], topics_of)
    topics, themes = _label_both(documents, clusters, vectors=vectors)
    assert topics["theme"].nunique() == 8 and len(themes) == 8
    assert themes["label"].is_unique
    theme_label = dict(zip(themes["theme"], themes["label"], strict=True))
    for row in topics.itertuples():  # a theme is named by what its two topics share
        assert words[row.topic // 2] in theme_label[row.theme], row


def test_telling_terms_rank_share_times_log_lift():
    # 10 papers in group 0, 10 in group 1; ranks worked out by hand
    inside = (
        ["quantum kernels everywhere"] * 10  # share 1.0 here, 0 elsewhere: log(1 / (1/11))
    )
    texts = [f"{t}. sparse coding" if i < 6 else t for i, t in enumerate(inside)]  # 0.6 here
    texts[0] += ". rare gadget"  # one paper: under the 10% share (and under two papers)
    outside = ["tensor sketches. sparse coding"] * 5 + ["tensor sketches"] * 5  # 0.5 elsewhere
    groups = np.array([0] * 10 + [1] * 10)
    found = telling_terms(count_chunk(texts + outside, groups, 3), min_share=0.1, n_terms=10)
    terms = [t for t, _ in found[0]]
    assert terms[:2] == ["quantum kernels", "sparse coding"]  # the phrase said once, not its words
    assert "rare gadget" not in terms and "tensor sketches" not in terms
    score = dict(found[0])
    assert score["quantum kernels"] == pytest.approx(1.0 * np.log(1.0 / (1 / 11)), abs=1e-6)
    assert score["sparse coding"] == pytest.approx(0.6 * np.log(0.6 / (6 / 11)), abs=1e-6)
    assert [t for t, _ in found[1]][0] == "tensor sketches"


def test_telling_terms_skip_terms_commoner_elsewhere_and_break_ties_by_term():
    texts = ["beta widget. alpha widget"] * 4 + ["beta widget"] * 4 + ["alpha widget"] * 4
    groups = np.array([0] * 4 + [1] * 8)
    found = telling_terms(count_chunk(texts, groups, 3), min_share=0.1, n_terms=10)
    assert [t for t, _ in found[0]] == ["alpha widget", "beta widget"]  # same score: by term
    nothing = count_chunk(["the of", "and"], np.array([0, 1]), 3)
    assert telling_terms(nothing, 0.1, 10) == {0: [], 1: []}


def test_a_theme_is_named_by_what_its_topics_share_not_its_largest_topics_words():
    """Topic 0 repeats its own phrase in every paper; every paper of both topics of the theme
    uses "spectral graph" once. Term frequency (c-TF-IDF) would put topic 0's phrase first
    among the theme's terms; the share of papers puts what both topics share first."""
    abstracts, topics_of = [], []
    parts = {0: "heat kernels " * 6, 1: "cheeger cuts", 2: "policy gradients", 3: "value functions"}
    shared = {0: "spectral graph", 1: "spectral graph", 2: "reward shaping", 3: "reward shaping"}
    for topic, size in [(0, 8), (1, 4), (2, 8), (3, 4)]:
        for k in range(size):
            abstracts.append(f"{parts[topic].strip()}. {shared[topic]} case{k}.")
            topics_of.append(topic)
    topics_of += list(range(4, 8))  # four more small topics so that themes form
    abstracts += [f"filler topic{t}. lonely words{t}" for t in range(4, 8)]
    documents = make.documents(abstracts)
    group = np.array([t // 2 if t < 4 else t - 2 for t in topics_of])
    _, themes = _label_both(
        documents,
        make.clusters(documents["doc_id"], topics_of),
        vectors=_vectors(len(abstracts), group),
    )
    named = {tuple(sorted(row.topics)): row for row in themes.itertuples()}
    assert named[(0, 1)].terms[0] == "spectral graph", named
    assert named[(2, 3)].terms[0] == "reward shaping", named
    # the label names both topics (each paper's words pick it), after the phrase they share
    assert named[(0, 1)].label == "spectral graph: heat kernels, cheeger cuts"
    assert named[(2, 3)].label == "reward shaping: policy gradients, value functions"

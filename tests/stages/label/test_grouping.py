"""Which topics form a theme: Ward on embeddings beside word profiles, and the cohesion moves."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from pipeline.config import LabelConfig
from pipeline.scores import doc_term_sets, npmi_coherence
from pipeline.stages.label import grouping
from pipeline.stages.label.counts import count_chunk
from pipeline.stages.label.grouping import (
    Cooccurrence,
    assign_themes,
    cohesive_themes,
    word_profiles,
)
from pipeline.text import term_analyzer

WORDS = {0: "sinkhorn barycenters", 1: "policy gradients", 2: "sinkhorn barycenters"}


def _papers(words: dict[int, str], per_topic: int = 6):
    texts, topics = [], []
    for topic, phrase in words.items():
        for k in range(per_topic):
            texts.append(f"{phrase} case{topic}x{k}. extra words{k}")
            topics.append(topic)
    return texts, np.array(topics)


def test_word_profiles_weigh_shares_by_rarity_and_have_unit_length():
    texts, topics = _papers({0: "alpha beta", 1: "alpha gamma"}, per_topic=4)
    counts = count_chunk(texts, topics, 3)
    profile = word_profiles(counts, np.array([0, 1]))
    np.testing.assert_allclose(np.linalg.norm(profile, axis=1), 1.0)
    column = {t: i for i, t in enumerate(counts.vocabulary.tolist())}
    assert profile[0, column["alpha"]] == 0.0  # every paper uses it: idf 0
    assert profile[0, column["beta"]] > 0 and profile[1, column["beta"]] == 0


def test_words_join_topics_whose_embeddings_alone_do_not_tell_them_apart():
    """Four topics whose mean embeddings pair 0 with 1 and 2 with 3 only faintly; their papers'
    words pair 0 with 2 and 1 with 3. The embeddings alone follow the faint pairing; beside
    the word profiles the words decide."""
    words = {0: "sinkhorn barycenters", 1: "policy gradients"}
    words |= {2: "sinkhorn barycenters", 3: "policy gradients"}
    texts, topics = _papers(words)
    rng = np.random.default_rng(0)
    base = rng.normal(size=16)
    lean = {0: 1, 1: 1, 2: -1, 3: -1}
    vectors = np.stack([base + 0.05 * lean[t] * np.eye(16)[0] for t in topics])
    vectors += rng.normal(scale=1e-4, size=vectors.shape)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    alone = assign_themes(vectors, topics, LabelConfig())
    assert alone[0] == alone[1] and alone[2] == alone[3]
    both = assign_themes(vectors, topics, LabelConfig(), count_chunk(texts, topics, 3))
    assert both[0] == both[2] and both[1] == both[3] and both[0] != both[1]


def test_cooccurrence_npmi_is_the_metrics_npmi():
    texts = ["alpha beta", "alpha beta gamma", "gamma delta", "alpha delta", "beta"]
    analyzer = term_analyzer(3)
    vocabulary = sorted({t for text in texts for t in analyzer(text)})
    rows = [[int(t in set(analyzer(text))) for t in vocabulary] for text in texts]
    scorer = Cooccurrence(sparse.csr_matrix(np.array(rows)), vocabulary)
    terms = ["alpha", "beta", "gamma", "delta"]
    expected = npmi_coherence([terms], doc_term_sets(texts, analyzer))[0]
    assert scorer.npmi(terms) == pytest.approx(expected)
    assert np.isnan(scorer.npmi(["alpha", "unknown"]))


def _cohesion(scores: dict[frozenset, float]):
    return lambda members: scores.get(members, 0.3)


def test_an_incoherent_theme_gives_up_the_topic_to_a_theme_it_lies_near():
    """Theme 0 = topics 0, 1, 2 scores 0.02; without topic 2 it scores 0.3. Topic 2 lies near
    theme 1 (topics 3, 4) and theme 2 (topics 5, 6); joining theme 1 scores 0.25, theme 2 0.12:
    it joins theme 1."""
    themes = {0: 0, 1: 0, 2: 0, 3: 1, 4: 1, 5: 2, 6: 2}
    axes = np.eye(4)
    centres = {0: axes[0], 1: axes[0], 2: (axes[0] + axes[1] + axes[2]) / np.sqrt(3)}
    centres |= {3: axes[1], 4: axes[1], 5: axes[2], 6: axes[2]}
    scores = {
        frozenset({0, 1, 2}): 0.02,
        frozenset({3, 4, 2}): 0.25,
        frozenset({5, 6, 2}): 0.12,
        frozenset({0, 2}): 0.0,
        frozenset({1, 2}): 0.0,
    }
    moved = cohesive_themes(themes, centres, _cohesion(scores))
    assert moved == {**themes, 2: 1}


def test_no_topic_moves_to_a_theme_further_than_its_own_nor_when_every_theme_coheres():
    themes = {0: 0, 1: 0, 2: 0, 3: 1, 4: 1}
    axes = np.eye(3)
    centres = {0: axes[0], 1: axes[0], 2: (2 * axes[0] + axes[1]) / np.sqrt(5)}
    centres |= {3: axes[1], 4: axes[1]}
    scores = {frozenset({0, 1, 2}): 0.02, frozenset({3, 4, 2}): 0.9}
    # topic 2 lies nearer its own theme (0.89) than theme 1 (0.45): it stays
    assert cohesive_themes(themes, centres, _cohesion(scores)) == themes
    scores[frozenset({0, 1, 2})] = 0.1  # at the floor: nothing to do
    centres[2] = axes[1]
    assert cohesive_themes(themes, centres, _cohesion(scores)) == themes


def test_moves_stop_after_the_most_allowed(monkeypatch):
    monkeypatch.setattr(grouping, "MAX_MOVES", 0)
    themes = {0: 0, 1: 0, 2: 0, 3: 1, 4: 1}
    centres = {t: np.eye(2)[0] for t in themes}
    assert cohesive_themes(themes, centres, _cohesion({frozenset({0, 1, 2}): -0.5})) == themes

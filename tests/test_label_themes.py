"""Theme terms and labels name what a theme's topics share (pure core, tiny corpora)."""

from __future__ import annotations

import numpy as np

from pipeline.config import LabelConfig
from pipeline.label import theme_labels
from pipeline.label.themes import theme_candidates, theme_terms

# four topics in two themes: graphs (topics 0, 1) and reinforcement learning (2, 3)
PAPERS = {
    0: ["graph neural networks pass messages along edges, message passing on graph neural "
        "networks"] * 4,
    1: ["graph neural networks for molecules predict molecules properties"] * 3
       + ["molecules and proteins through graph neural networks"],
    2: ["offline reinforcement learning from logged data, offline policies"] * 4,
    3: ["reinforcement learning with bandits explores arms", "bandits regret"] * 2,
}  # fmt: skip
THEMES = {0: 0, 1: 0, 2: 1, 3: 1}
TOPIC_TERMS = {
    0: ["message passing", "edges", "graph neural networks"],
    1: ["molecules", "proteins", "graph neural networks"],
    2: ["offline reinforcement learning", "logged data", "policies"],
    3: ["bandits", "regret", "arms"],
}
TOPIC_LABELS = {0: "message passing, edges", 1: "molecules, proteins",
                2: "offline reinforcement learning", 3: "bandits, regret"}  # fmt: skip


def _corpus():
    texts = [text for topic in PAPERS for text in PAPERS[topic]]
    topics = np.array([topic for topic in PAPERS for _ in PAPERS[topic]])
    return texts, topics


def test_candidates_are_the_topics_label_terms_first_then_their_terms():
    candidates = theme_candidates(THEMES, TOPIC_TERMS, TOPIC_LABELS)
    assert candidates[0] == ["message passing", "edges", "molecules", "proteins",
                             "graph neural networks"]  # fmt: skip
    assert candidates[1][:3] == ["offline reinforcement learning", "bandits", "regret"]


def test_a_theme_is_named_by_what_its_topics_share():
    texts, topics = _corpus()
    terms = theme_terms(texts, topics, THEMES, TOPIC_TERMS, TOPIC_LABELS, LabelConfig())
    # every graph paper says "graph neural networks"; "message passing" only topic 0's
    assert terms[0][0] == "graph neural networks"
    assert terms[0].index("graph neural networks") < terms[0].index("message passing")
    assert set(terms[1]) <= {t for t in TOPIC_TERMS[2] + TOPIC_TERMS[3]}
    labels, named = theme_labels(texts, topics, TOPIC_TERMS, TOPIC_LABELS, THEMES, LabelConfig())
    assert labels[0].startswith("graph neural networks")
    assert labels[0] != labels[1] and named[0] == terms[0]


def test_unassigned_papers_keep_their_topics_terms_and_no_term_means_no_terms():
    texts, topics = _corpus()
    topics = topics.copy()
    topics[-1] = -1
    topic_terms = {**TOPIC_TERMS, -1: ["regret"]}
    _, named = theme_labels(texts, topics, topic_terms, TOPIC_LABELS, THEMES, LabelConfig())
    assert named[-1] == ["regret"]
    empty = theme_terms(texts, topics, THEMES, {t: [] for t in THEMES}, {}, LabelConfig())
    assert empty == {0: [], 1: []}


def test_one_level_keeps_each_topics_label():
    texts, topics = _corpus()
    own = {t: t for t in THEMES}
    labels, named = theme_labels(texts, topics, TOPIC_TERMS, TOPIC_LABELS, own, LabelConfig())
    assert labels == TOPIC_LABELS and named == TOPIC_TERMS

"""The label check: BM25 of each paper against every label (metrics.json's label_check)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline import tables
from pipeline.stages import metrics
from pipeline.stages.metrics import label_check, make_metrics
from pipeline.stages.metrics.label_check import fold, reciprocal_ranks, words
from tests.support import tables as make

TRANSPORT = [
    "Optimal transport with Sinkhorn iterations.",
    "Sinkhorn barycenters: optimal transport of measures.",
    "Entropic optimal transport plans.",
]
GRAPHS = [
    "Graph neural networks pass messages between nodes.",
    "Message passing on graphs: over-smoothing of node features.",
    "Graph transformers classify nodes.",
]


def _build(labels: list[str], theme_labels: dict[int, str] | None = None) -> dict:
    """Six papers in two topics (transport, graphs) and an unassigned one; each topic its own
    theme unless `theme_labels` (then both in theme 0)."""
    documents = make.documents([*TRANSPORT, *GRAPHS, "Quantum annealing schedules."])
    clusters = make.clusters(documents["doc_id"], [0, 0, 0, 1, 1, 1, -1])
    themes_of = [-1, 0, 1] if theme_labels is None else [-1, 0, 0]
    topics = make.topics([-1, 0, 1], labels=["Unassigned", *labels], themes=themes_of, sizes=3)
    themes = make.themes_of(topics, labels=theme_labels or dict(enumerate(labels)))
    return {"documents": documents, "clusters": clusters, "topics": topics, "themes": themes}


def _check(frames: dict) -> dict:
    papers = tables.join_papers(frames["documents"], frames["clusters"])
    return label_check.make_label_check(papers, frames["topics"], frames["themes"])


def test_a_label_naming_its_papers_words_scores_above_one_that_does_not():
    good = _check(_build(["optimal transport", "graph neural networks"]))
    assert good["papers"] == 6  # the unassigned paper is not scored
    assert good["topics"] == {"labels": 2, "top1": 1.0, "mrr": 1.0, "chance": 0.5}
    # the transport topic named by words none of its papers use: its papers match neither
    bad = _check(_build(["protein folding", "graph neural networks"]))
    by_topic = {row["topic"]: row for row in bad["by_topic"]}
    assert by_topic[0]["top1"] == 0.0 and by_topic[1]["top1"] == 1.0
    assert bad["topics"]["top1"] == 0.5 and bad["topics"]["mrr"] == pytest.approx(0.75)
    # the same papers' scores: its own label above the unrelated one, paper by paper
    rr = reciprocal_ranks(TRANSPORT, np.zeros(3), ["optimal transport", "protein folding"])
    assert rr.tolist() == [1.0, 1.0, 1.0]
    rr = reciprocal_ranks(TRANSPORT, np.ones(3), ["optimal transport", "protein folding"])
    assert rr.tolist() == [0.5, 0.5, 0.5]


def test_a_tie_is_a_miss_and_ranks_below_every_label_it_ties():
    # the same label twice: neither is the unique best, each ranks second
    rr = reciprocal_ranks(TRANSPORT, np.zeros(3), ["optimal transport", "transport optimal"])
    assert rr.tolist() == [0.5, 0.5, 0.5]
    # no word shared with any of three labels: all score 0, rank 3
    rr = reciprocal_ranks(["Quantum annealing."], np.array([1]), ["graph", "transport", "bandit"])
    assert rr.tolist() == [pytest.approx(1 / 3)]


def test_the_reciprocal_rank_of_a_papers_own_label():
    texts = ["graph graph graph transport transport bandit"]
    labels = ["graph", "transport", "bandit", "protein"]  # more of a word: a higher score
    ranks = [1 / reciprocal_ranks(texts, np.array([k]), labels)[0] for k in range(4)]
    assert ranks == [1, 2, 3, 4]  # protein, scoring 0, ties nothing above it
    figures = label_check.match_figures(
        texts * 2, ["b", "t"], dict(zip("gtbp", labels, strict=True))
    )
    assert figures["mrr"] == pytest.approx((1 / 3 + 1 / 2) / 2) and figures["top1"] == 0.0
    assert figures["labels"] == 4 and figures["chance"] == 0.25


def test_each_label_word_counts_once():
    assert label_check.query_words("Transport, transports and transport") == ["transport", "and"]
    # counted twice, the first label would score double: counted once, the two tie
    rr = reciprocal_ranks(
        ["transport of graphs"], np.array([0]), ["transport transport", "transport"]
    )
    assert rr.tolist() == [0.5]


@pytest.mark.parametrize(
    ("word", "folded"),
    [
        ("networks", "network"),
        ("bandits", "bandit"),
        ("policies", "policy"),
        ("loss", "loss"),
        ("corpus", "corpus"),
        ("analysis", "analysis"),
        ("has", "has"),  # three letters: left alone
        ("ties", "tie"),  # four: the -s rule, not -ies
        ("graph", "graph"),
    ],
)
def test_plurals_fold_by_one_stated_rule(word, folded):
    assert fold(word) == folded


def test_words_are_lower_cased_letters_folded_on_both_sides():
    found = words("Graph Neural Networks (GNNs) in 3D, x2 and t-SNE")
    assert found == ["graph", "neural", "network", "gnn", "in", "and", "sne"]
    # a label in the singular matches papers in the plural, and the other way round
    texts = ["Policies of bandits.", "Graphs of nodes."]
    rr = reciprocal_ranks(texts, np.array([0, 1]), ["policy bandit", "graph node"])
    assert rr.tolist() == [1.0, 1.0]


def test_chinese_and_japanese_runs_are_cut_into_words():
    """A run of CJK characters is several words, as the label stage's tokeniser cuts it: a
    label naming one of them matches the paper, where one word per run never could."""
    assert words("强化学习的策略优化") == ["强化", "学习", "策略", "优化"]
    assert words("深層学習モデルの訓練") == ["深層学習", "モデル", "訓練"]
    texts = ["基于强化学习的策略优化方法", "图神经网络的节点分类"]
    rr = reciprocal_ranks(texts, np.array([0, 1]), ["策略优化", "节点分类"])
    assert rr.tolist() == [1.0, 1.0]


def test_themes_are_checked_with_their_own_labels():
    found = _check(_build(["optimal transport", "graph"], theme_labels={0: "transport, graphs"}))
    assert found["themes"] == {"labels": 1, "top1": 1.0, "mrr": 1.0, "chance": 1.0}
    split = _check(_build(["optimal transport", "graph"]))  # one theme per topic, as labelled
    assert split["themes"]["labels"] == 2 and split["themes"]["top1"] == 1.0


def test_bertopic_names_are_the_top_words_of_its_c_tf_idf():
    texts = [
        "the transport transport optimal",
        "transport sinkhorn",
        "the graph graph node",
        "the quantum",
    ]
    names = label_check.bertopic_names(texts, [0, 0, 1, -1])
    # class 0: the 1, transport 3, optimal 1, sinkhorn 1 (6 words); the average class holds 4
    # words; idf log(1 + 4 / frequency in all classes): the 3, transport 3, the others 1
    weights = {"transport": 3 / 6 * np.log(1 + 4 / 3), "optimal": 1 / 6 * np.log(5)}
    weights["the"] = 1 / 6 * np.log(1 + 4 / 3)
    assert weights["transport"] > weights["optimal"] > weights["the"]
    # four words by weight; optimal and sinkhorn tie: the first in the vocabulary first
    assert names == {
        -1: "quantum the",
        0: "transport optimal sinkhorn the",
        1: "graph node the",
    }


def test_bertopic_names_of_papers_without_an_ascii_word_are_empty():
    # BERTopic's preprocessing keeps ASCII letters and digits only: nothing is left to count
    assert label_check.bertopic_names(["强化学习的策略。", "图神经网络。"], [0, 1]) == {
        0: "",
        1: "",
    }


def test_bertopic_names_weigh_words_as_bertopic_itself_does():
    """On the same topics BERTopic (its clustering bypassed) gives each topic's top four words
    the same weights (the order of equal weights is BERTopic's argpartition's, not fixed)."""
    from bertopic import BERTopic
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction

    texts = [
        "Optimal transport: the Sinkhorn iterations of transport.",
        "Transport plans, optimal and entropic; Sinkhorn's transport.",
        "The graph's nodes: graph neural networks on a graph.",
        "Message passing on graphs, graph by graph, node by node.",
        "Multi-objective optimization of the Pareto front; Pareto sets.",
        "Off-topic words: the quantum annealing of the annealing schedules.",
    ]
    topics = [0, 0, 1, 1, 2, -1]
    model = BERTopic(
        embedding_model=None,
        umap_model=BaseDimensionalityReduction(),
        hdbscan_model=BaseCluster(),
        top_n_words=30,  # every tied word among them
    )
    model.fit_transform(texts, embeddings=np.zeros((len(texts), 2)), y=np.array(topics))
    names = label_check.bertopic_names(texts, topics)
    assert sorted(names) == sorted(model.topic_labels_)
    for topic, name in names.items():
        theirs = dict(model.get_topic(topic))
        top = [weight for _, weight in model.get_topic(topic)[:4]]
        assert [theirs[w] for w in name.split()] == pytest.approx(top)
        assert name.split()[0] == model.topic_labels_[topic].split("_")[1]  # a unique best
    assert "multiobjective" in names[2]  # BERTopic's own preprocessing: letters and digits only


def test_metrics_json_holds_the_check_and_keeps_it_with_the_term_figures():
    frames = _build(["optimal transport", "graph neural networks"])
    figures = make_metrics(**frames)
    check = figures["label_check"]
    assert set(check) == {"papers", "topics", "themes", "bertopic_names", "by_topic"}
    assert check["topics"]["top1"] == 1.0 and check["bertopic_names"]["labels"] == 2
    assert [row["topic"] for row in check["by_topic"]] == [0, 1]
    assert check["by_topic"][0]["bertopic_name"] == "optimal transport sinkhorn barycenters"
    known = {k: figures[k] for k in metrics.TERM_FIGURES}
    assert "label_check" in known  # a function of the label stage's basis, as NPMI is
    assert make_metrics(**frames, known=known)["label_check"] == check

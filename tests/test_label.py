"""Label stage: c-TF-IDF terms per topic, short labels, per-venue counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.config import LabelConfig
from pipeline.errors import PipelineError
from pipeline.label import UNASSIGNED_LABEL, label_topics, short_label, stop_words

TRANSPORT = [
    "Optimal transport with the Wasserstein distance: we propose a Sinkhorn method for optimal "
    "transport where $\\alpha$ controls entropy. Code: https://github.com/someone/otcode",
    "Entropic optimal transport and Wasserstein barycenters via Sinkhorn iterations give a "
    "\\textit{coupling} of measures",
    "Sliced Wasserstein distances approximate optimal transport couplings between measures",
]
GRAPHS = [
    "Graph neural networks use message passing over the nodes and edges of a graph "
    "(see www.graphsite.org/paper)",
    "Message passing graph neural networks suffer oversmoothing on graphs with node features",
    "Expressive graph neural networks beyond message passing for node classification",
]
OUTLIER = ["Quantum annealing schedules for combinatorial scheduling"]


def _documents(abstracts, venues, titles=None) -> pd.DataFrame:
    n = len(abstracts)
    return pd.DataFrame(
        {
            "doc_id": [f"p{i}" for i in range(n)],
            "venue": venues,
            "year": [2025] * n,
            "title": pd.Series(titles or [None] * n, dtype=object),
            "abstract": abstracts,
            "source": ["a.txt"] * n,
            "source_id": pd.Series([None] * n, dtype=object),
            "url": pd.Series([None] * n, dtype=object),
        }
    )


def _clusters(doc_ids, topics) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": doc_ids,
            "topic": np.asarray(topics, dtype=np.int32),
            "x": np.zeros(len(doc_ids), dtype=np.float32),
            "y": np.zeros(len(doc_ids), dtype=np.float32),
        }
    )


@pytest.fixture(scope="module")
def labelled():
    venues = ["ICML", "ICLR", "ICML", "ICML", "ICLR", "ICLR", "ICML"]
    titles = [None, "Entropic OT barycenters", None, None, None, "Expressive GNNs", None]
    documents = _documents(TRANSPORT + GRAPHS + OUTLIER, venues, titles)
    # clusters in a different row order than documents: the merge must not depend on it
    clusters = _clusters(documents["doc_id"].tolist()[::-1], [0, 0, 0, 1, 1, 1, -1][::-1])
    return documents, clusters, label_topics(documents, clusters, LabelConfig())


def _row(topics: pd.DataFrame, topic: int) -> dict:
    rows = topics[topics["topic"] == topic].to_dict("records")
    assert len(rows) == 1
    return rows[0]


def test_one_row_per_topic_with_unassigned_label(labelled):
    _, _, topics = labelled
    assert topics["topic"].tolist() == [-1, 0, 1]
    assert _row(topics, -1)["label"] == UNASSIGNED_LABEL
    assert topics["label"].is_unique
    assert all(label and label != UNASSIGNED_LABEL for label in topics["label"][1:])


def test_terms_are_best_first_and_phrase_wins_the_label(labelled):
    _, _, topics = labelled
    transport, graphs = _row(topics, 0), _row(topics, 1)
    assert {"optimal transport", "wasserstein", "sinkhorn"} <= set(transport["terms"])
    assert {"graph", "message passing", "graph neural"} <= set(graphs["terms"])
    # best first: words every paper of the topic uses outrank words seen once or twice
    assert transport["terms"][0] in {"optimal", "optimal transport", "transport", "wasserstein"}
    assert transport["terms"].index("wasserstein") < transport["terms"].index("approximate")
    assert graphs["terms"][0] in {"graph", "graph neural", "message passing"}
    assert graphs["terms"].index("graph") < graphs["terms"].index("expressive")
    # no term is shared between the two topics' labels
    label_words = [set(label.replace(",", " ").split()) for label in topics["label"][1:]]
    assert not label_words[0] & label_words[1]
    assert "optimal transport" in transport["label"].split(", ")
    assert "optimal" not in transport["label"].split(", ")
    assert "transport" not in transport["label"].split(", ")
    assert len(transport["label"].split(", ")) <= LabelConfig().label_terms
    assert len(transport["terms"]) <= LabelConfig().n_terms


def test_venue_counts_sum_to_size(labelled):
    _, _, topics = labelled
    assert sorted(c for c in topics.columns if c.startswith("count_")) == [
        "count_ICLR",
        "count_ICML",
    ]
    expected = {-1: (0, 1, 1), 0: (1, 2, 3), 1: (2, 1, 3)}  # ICLR, ICML, size
    for topic, (iclr, icml, size) in expected.items():
        row = _row(topics, topic)
        assert (row["count_ICLR"], row["count_ICML"], row["size"]) == (iclr, icml, size)
    assert (topics["count_ICLR"] + topics["count_ICML"]).tolist() == topics["size"].tolist()


def test_terms_hold_no_stop_words_filler_latex_or_urls(labelled):
    documents, clusters, _ = labelled
    topics = label_topics(documents, clusters, LabelConfig(n_terms=50))  # every term, not top 10
    banned = set(stop_words())
    assert {"the", "propose", "method", "we", "code"} <= banned
    words = {w for terms in topics["terms"] for term in terms for w in term.split()}
    assert words, "expected some terms"
    assert not words & banned
    for leaked in ("alpha", "textit", "https", "github", "someone", "otcode", "graphsite", "www"):
        assert leaked not in words, f"{leaked!r} leaked into the terms"


def test_identical_vocabularies_still_get_unique_labels():
    abstracts = ["kernel ridge regression spline smoothing"] * 4
    documents = _documents(abstracts, ["ICML"] * 4)
    topics = label_topics(documents, _clusters(documents["doc_id"], [0, 0, 1, 1]), LabelConfig())
    assert topics["topic"].tolist() == [0, 1]
    assert topics["label"].is_unique
    assert topics["label"].str.len().min() > 0


def test_clusters_naming_unknown_papers_are_refused():
    documents = _documents(GRAPHS, ["ICML"] * 3)
    clusters = _clusters(["p0", "p1", "stranger"], [0, 0, 0])
    with pytest.raises(PipelineError, match="do not match"):
        label_topics(documents, clusters, LabelConfig())


def test_hyphenated_filler_is_not_a_term():
    abstracts = [
        "State-of-the-art wasserstein barycenters with sinkhorn",
        "A state-of-the-art sinkhorn solver for wasserstein transport",
        "Graph message passing over nodes",
        "Graph message passing for node labels",
    ]
    documents = _documents(abstracts, ["ICML"] * 4)
    topics = label_topics(documents, _clusters(documents["doc_id"], [0, 0, 1, 1]), LabelConfig())
    terms = [term for row in topics["terms"] for term in row]
    assert "state-of-the-art" not in terms


# --- short_label ---------------------------------------------------------------------------


def test_short_label_phrase_absorbs_its_words():
    # phrase first: its single words are skipped
    assert (
        short_label(["optimal transport", "optimal", "transport", "wasserstein", "sinkhorn"], 3)
        == "optimal transport, wasserstein, sinkhorn"
    )
    # words first: the phrase replaces both, freeing a slot for the next term
    assert (
        short_label(["optimal", "transport", "optimal transport", "wasserstein"], 2)
        == "optimal transport, wasserstein"
    )
    # a phrase that only partly overlaps a picked term does not replace it
    assert short_label(["optimal transport", "transport plan", "sinkhorn"], 3) == (
        "optimal transport, sinkhorn"
    )


@pytest.mark.parametrize("n_terms", [1, 2, 3, 5])
def test_short_label_respects_n_terms(n_terms):
    terms = ["graph", "message passing", "oversmoothing", "expressive", "node", "edges"]
    label = short_label(terms, n_terms)
    assert label.split(", ") == terms[:n_terms]
    assert short_label([], n_terms) == ""

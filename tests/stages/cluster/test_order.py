"""Cluster stage: the same papers give the same topics and map positions whatever the order of
the rows (the fit, the sample fit and the placing run in doc_id order)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.config import ClusterConfig
from pipeline.stages.cluster import in_id_order, make_clusters
from tests.support import tables as make

SIZES = (60, 50, 40, 30)  # 180 papers: above the smallest fit_max_papers (100), so a sample fit


def _corpus() -> tuple[pd.DataFrame, np.ndarray]:
    """Unit vectors around four centres, with doc_ids that do not sort in row order."""
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(len(SIZES), 384))
    truth = rng.permutation(np.repeat(np.arange(len(SIZES)), SIZES))
    vectors = centres[truth] / 8 + rng.normal(scale=0.03, size=(len(truth), 384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"{h:016x}" for h in rng.integers(0, 2**63, size=len(truth))]
    venues = np.where(truth % 2 == 0, "ICML", "ICLR").tolist()
    return make.documents(doc_ids=ids, venues=venues), vectors.astype(np.float32)


def _shuffled(documents: pd.DataFrame, vectors: np.ndarray, seed: int):
    order = np.random.default_rng(seed).permutation(len(documents))
    return documents.iloc[order].reset_index(drop=True), vectors[order]


def _by_id(clusters: pd.DataFrame) -> pd.DataFrame:
    return clusters.sort_values("doc_id").reset_index(drop=True)


def test_rows_are_taken_in_doc_id_order():
    documents = make.documents(doc_ids=["c", "a", "d", "b"])
    assert in_id_order(documents, np.array([0, 1, 3])).tolist() == [1, 3, 0]
    assert in_id_order(documents, np.arange(0)).tolist() == []


@pytest.mark.slow  # UMAP + HDBSCAN, three fits of each kind
@pytest.mark.parametrize("fit_max_papers", [50_000, 100])  # a full fit; a sample fit + placing
def test_shuffled_rows_give_the_same_topic_and_position_per_paper(fit_max_papers):
    documents, vectors = _corpus()
    config = ClusterConfig(random_state=5, fit_max_papers=fit_max_papers)
    first = make_clusters(documents, vectors, config, "test encoder").clusters
    assert first["doc_id"].tolist() == documents["doc_id"].tolist()  # the documents' order
    assert (first["placed"] == "assigned").any() == (fit_max_papers < len(documents))
    assert first["topic"].nunique() >= 3
    for seed in (1, 2):
        papers, shuffled = _shuffled(documents, vectors, seed)
        again = make_clusters(papers, shuffled, config, "test encoder").clusters
        assert again["doc_id"].tolist() == papers["doc_id"].tolist()
        pd.testing.assert_frame_equal(_by_id(again), _by_id(first))


@pytest.mark.slow  # UMAP + HDBSCAN
def test_papers_added_in_any_order_are_placed_alike():
    documents, vectors = _corpus()
    config = ClusterConfig(random_state=5)
    base = make_clusters(documents.iloc[:150], vectors[:150], config, "test encoder")
    placed = []
    for seed in (1, 2):
        papers, shuffled = _shuffled(documents, vectors, seed)
        grown = make_clusters(papers, shuffled, config, "x", base.model, base.clusters)
        assert not grown.refitted
        placed.append(_by_id(grown.clusters))
    pd.testing.assert_frame_equal(placed[0], placed[1])
    assert (placed[0]["placed"] == "added").sum() == 30

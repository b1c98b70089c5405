"""Cluster stage: auto parameters, and real UMAP + HDBSCAN + BERTopic on synthetic embeddings.

UMAP compiles with numba on its first fit in a process (10-20 s), so the blob corpus is
clustered once per module (twice, for the determinism check) and shared by the tests.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from sklearn.metrics import adjusted_rand_score

from pipeline.cluster import cluster_documents, resolve_params
from pipeline.config import ClusterConfig
from pipeline.errors import PipelineError

BLOB_SIZES = (45, 35, 25, 15)  # unequal, so numbering by size is observable
BLOB_WORDS = (
    ["transport", "wasserstein", "coupling", "sinkhorn", "barycenter"],
    ["graph", "message", "node", "edge", "neighbourhood"],
    ["reward", "policy", "agent", "bandit", "exploration"],
    ["protein", "molecule", "docking", "ligand", "binding"],
)


def _documents(abstracts: list[str], venue: str = "ICML") -> pd.DataFrame:
    n = len(abstracts)
    return pd.DataFrame(
        {
            "doc_id": [f"p{i:03d}" for i in range(n)],
            "venue": [venue] * n,
            "year": [2025] * n,
            "title": pd.Series([None] * n, dtype=object),
            "abstract": abstracts,
            "source": ["synthetic.txt"] * n,
            "source_id": pd.Series([None] * n, dtype=object),
            "url": pd.Series([None] * n, dtype=object),
        }
    )


def _blobs():
    """~120 unit vectors in 384-d around 4 random, well-separated centres, with texts."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(len(BLOB_SIZES), 384))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    truth = np.repeat(np.arange(len(BLOB_SIZES)), BLOB_SIZES)
    order = rng.permutation(len(truth))  # interleave the blobs in document order
    truth = truth[order]
    vectors = centres[truth] + rng.normal(scale=0.02, size=(len(truth), 384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [" ".join(rng.choice(BLOB_WORDS[b], size=12)) for b in truth]
    return _documents(texts), vectors.astype(np.float32), truth


@pytest.fixture(scope="module")
def blob_runs():
    documents, vectors, truth = _blobs()
    config = ClusterConfig(random_state=7)
    ids = documents["doc_id"].tolist()
    first = cluster_documents(documents, ids, vectors, config)
    second = cluster_documents(documents.copy(), list(ids), vectors.copy(), config)
    return documents, truth, first, second


# --- resolve_params -------------------------------------------------------------------------


def test_auto_min_cluster_size_scales_with_corpus():
    config = ClusterConfig()
    assert resolve_params(76, config).min_cluster_size == 6
    assert resolve_params(3401, config).min_cluster_size == 26
    sizes = [resolve_params(n, config).min_cluster_size for n in range(2, 20001, 37)]
    assert sizes == sorted(sizes), "min_cluster_size must not shrink as the corpus grows"
    assert sizes[-1] > sizes[0]
    for n in (10, 76, 3401):
        params = resolve_params(n, config)
        assert 1 <= params.min_samples <= params.min_cluster_size


def test_explicit_params_are_kept_and_neighbours_stay_below_corpus_size():
    config = ClusterConfig(n_neighbors=12, min_cluster_size=9, min_samples=4)
    params = resolve_params(500, config)
    assert (params.n_neighbors, params.min_cluster_size, params.min_samples) == (12, 9, 4)
    # UMAP needs n_neighbors < n: tiny corpora cap it, whether auto or explicit
    for n in range(8, 40):
        for cfg in (ClusterConfig(), ClusterConfig(n_neighbors=50)):
            params = resolve_params(n, cfg)
            assert 2 <= params.n_neighbors < n
            assert 2 <= params.min_cluster_size <= n


@pytest.mark.parametrize("setting", [{"n_neighbors": 1}, {"min_samples": 0}])
def test_unusable_explicit_params_are_refused_or_repaired(setting):
    try:
        config = ClusterConfig(**setting)
    except ValidationError:
        return  # refused at load: fine
    params = resolve_params(200, config)
    assert params.n_neighbors >= 2  # UMAP: "n_neighbors must be greater than 1"
    assert params.min_samples >= 1  # HDBSCAN: min_samples must be positive


# --- cluster_documents on synthetic blobs ---------------------------------------------------


def test_blobs_are_recovered_as_topics(blob_runs):
    documents, truth, clusters, _ = blob_runs
    assert list(clusters.columns) == ["doc_id", "topic", "x", "y"]
    assert clusters["doc_id"].tolist() == documents["doc_id"].tolist()
    topics = clusters["topic"].to_numpy()
    assigned = topics != -1
    assert assigned.mean() >= 0.9
    assert sorted(set(topics[assigned].tolist())) == [0, 1, 2, 3]
    assert adjusted_rand_score(truth[assigned], topics[assigned]) >= 0.9


def test_topics_are_numbered_by_size_and_coordinates_are_finite(blob_runs):
    _, _, clusters, _ = blob_runs
    sizes = clusters.loc[clusters["topic"] >= 0, "topic"].value_counts().sort_index()
    assert sizes.index.tolist() == list(range(len(sizes)))
    assert sizes.is_monotonic_decreasing, f"topic 0 must be the largest: {sizes.to_dict()}"
    assert clusters["topic"].dtype == np.int32
    for axis in ("x", "y"):
        assert clusters[axis].dtype == np.float32
        assert np.isfinite(clusters[axis]).all()
    assert clusters[["x", "y"]].std().min() > 0  # a real layout, not a collapsed one


def test_same_random_state_gives_identical_output(blob_runs):
    _, _, first, second = blob_runs
    pd.testing.assert_frame_equal(first, second, check_exact=True)


@pytest.mark.parametrize("n", [3, 1])
def test_tiny_corpus_gives_one_topic(n):
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(n, 384))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    documents = _documents([f"abstract number {i} about things" for i in range(n)])
    clusters = cluster_documents(documents, documents["doc_id"].tolist(), vectors, ClusterConfig())
    assert clusters["topic"].tolist() == [0] * n
    assert clusters["doc_id"].tolist() == documents["doc_id"].tolist()
    assert np.isfinite(clusters[["x", "y"]].to_numpy()).all()


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda ids: ids[::-1], id="reordered"),
        pytest.param(lambda ids: ids[:-1], id="missing"),
        pytest.param(lambda ids: ids[:-1] + ["other"], id="different"),
    ],
)
def test_mismatched_doc_ids_are_refused(mangle):
    documents = _documents(["one abstract here", "two abstract here", "three abstract here"])
    ids = mangle(documents["doc_id"].tolist())
    vectors = np.eye(len(ids), 384, dtype=np.float32)
    with pytest.raises(PipelineError, match="do not match"):
        cluster_documents(documents, ids, vectors, ClusterConfig())

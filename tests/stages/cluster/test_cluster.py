"""Cluster stage: auto parameters, and real UMAP + HDBSCAN + BERTopic on synthetic embeddings
(a blob corpus clustered once per module, twice for the determinism check: UMAP compiles)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from sklearn.metrics import adjusted_rand_score

from pipeline import schemas, tables
from pipeline.centroids import ward_groups, weighted_centroids
from pipeline.config import ClusterConfig
from pipeline.errors import PipelineError
from pipeline.neighbours import nearest_neighbours
from pipeline.stages import cluster
from pipeline.stages.cluster import fit as cluster_fit
from pipeline.stages.cluster import make_clusters
from pipeline.stages.cluster.fit import (
    assign_topics,
    core_weights,
    merge_topics,
    number_by_size,
    reassign_outliers,
    refine_topics,
    resolve_params,
    settle_topics,
    smooth_topics,
    split_large_topics,
    umap_epochs,
    without_self,
)
from tests.support import tables as make

BLOB_SIZES = (45, 35, 25, 15)  # unequal, so numbering by size is observable
BLOB_WORDS = (
    ["transport", "wasserstein", "coupling", "sinkhorn", "barycenter"],
    ["graph", "message", "node", "edge", "neighbourhood"],
    ["reward", "policy", "agent", "bandit", "exploration"],
    ["protein", "molecule", "docking", "ligand", "binding"],
)


def _documents(abstracts: list[str]) -> pd.DataFrame:
    ids = [f"p{i:03d}" for i in range(len(abstracts))]
    return make.documents(abstracts, doc_ids=ids, sources="synthetic.txt")


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


def _cluster(documents, vectors, config) -> pd.DataFrame:
    return make_clusters(documents, vectors, config, "test encoder").clusters


@pytest.fixture(scope="module")
def blob_runs():
    documents, vectors, truth = _blobs()
    config = ClusterConfig(random_state=7)
    first = _cluster(documents, vectors, config)
    second = _cluster(documents.copy(), vectors.copy(), config)
    return documents, truth, first, second


# --- resolve_params -------------------------------------------------------------------------


def test_auto_min_cluster_size_scales_with_corpus():
    config = ClusterConfig()
    assert resolve_params(76, config).min_cluster_size == 5
    assert resolve_params(3401, config).min_cluster_size == 17
    assert resolve_params(3401, config).min_samples == 8
    assert resolve_params(76, config).n_neighbors == 15
    assert resolve_params(3401, config).n_neighbors == 30
    assert umap_epochs(3401, config) == 400 and umap_epochs(4999, config) == 400
    assert umap_epochs(5000, config) == 200 and umap_epochs(50_000, config) == 200
    assert umap_epochs(999, config) is None  # UMAP's own choice in small corpora
    assert umap_epochs(3401, ClusterConfig(n_epochs=1500)) == 1500
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


@pytest.mark.parametrize(
    ("setting", "key"),
    [
        ({"n_neighbors": 1}, "n_neighbors"),  # UMAP: "n_neighbors must be greater than 1"
        ({"min_cluster_size": 1}, "min_cluster_size"),
        ({"min_samples": 0}, "min_samples"),  # HDBSCAN: min_samples must be positive
    ],
)
def test_unusable_explicit_params_are_refused_at_load(setting, key):
    with pytest.raises(ValidationError, match=key):
        ClusterConfig(**setting)


# --- make_clusters on synthetic blobs ---------------------------------------------------


@pytest.mark.slow  # UMAP + HDBSCAN
def test_blobs_are_recovered_as_topics(blob_runs):
    documents, truth, clusters, _ = blob_runs
    assert list(clusters.columns) == schemas.CLUSTERS.columns
    assert clusters["raw_outlier"].dtype == bool
    assert set(clusters["placed"]) == {"fit"}
    # a paper HDBSCAN left out is either reassigned or still unassigned; never the reverse
    assert not (clusters["topic"].eq(-1) & ~clusters["raw_outlier"]).any()
    assert clusters["doc_id"].tolist() == documents["doc_id"].tolist()
    topics = clusters["topic"].to_numpy()
    assigned = topics != -1
    assert assigned.mean() >= 0.9
    assert sorted(set(topics[assigned].tolist())) == [0, 1, 2, 3]
    assert adjusted_rand_score(truth[assigned], topics[assigned]) >= 0.9


@pytest.mark.slow  # UMAP + HDBSCAN
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


@pytest.mark.slow  # UMAP + HDBSCAN
def test_same_random_state_gives_identical_output(blob_runs):
    _, _, first, second = blob_runs
    pd.testing.assert_frame_equal(first, second, check_exact=True)


@pytest.mark.parametrize("n", [3, 1])
def test_tiny_corpus_gives_one_topic(n):
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(n, 384))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    documents = _documents([f"abstract number {i} about things" for i in range(n)])
    clusters = _cluster(documents, vectors, ClusterConfig())
    assert clusters["topic"].tolist() == [0] * n
    assert clusters["doc_id"].tolist() == documents["doc_id"].tolist()
    assert np.isfinite(clusters[["x", "y"]].to_numpy()).all()


def test_embeddings_of_other_papers_are_refused():
    documents = _documents(["one abstract here", "two abstract here", "three abstract here"])
    with pytest.raises(PipelineError, match="do not match"):
        _cluster(documents, np.eye(2, 384, dtype=np.float32), ClusterConfig())


# --- reassignment, splitting, merging, numbering (pure functions on tiny inputs) ------------


def _unit(rows) -> np.ndarray:
    vectors = np.asarray(rows, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_outliers_join_a_topic_only_when_similar_enough():
    # topic 0 along x, topic 1 along y; outliers: near x (cos ~0.99), between x and y (~0.74
    # to topic 0, ~0.71 to topic 1) and opposite x (cos -1 to topic 0, ~0 to topic 1)
    vectors = _unit(
        [[1, 0, 0], [1, 0.1, 0], [0, 1, 0], [0, 1, 0.1], [1, 0.1, 0.05], [1, 1, 0], [-1, 0, 0]]
    )
    topics = np.array([0, 0, 1, 1, -1, -1, -1])
    assert reassign_outliers(topics, vectors, 0.9).tolist() == [0, 0, 1, 1, 0, -1, -1]
    assert reassign_outliers(topics, vectors, 0.7).tolist() == [0, 0, 1, 1, 0, 0, -1]
    assert reassign_outliers(topics, vectors, 0.0).tolist()[6] == 1  # threshold 0: cos ~0 joins
    assert reassign_outliers(topics, vectors, 1.0).tolist() == topics.tolist()
    assert (reassign_outliers(np.array([-1, -1]), vectors[:2], 0.0) == -1).all()  # no topic


def test_large_topics_are_split_into_parts_of_about_the_cap():
    rng = np.random.default_rng(0)
    centres = _unit(rng.normal(size=(3, 16)))
    vectors = _unit(np.repeat(centres, 20, axis=0) + rng.normal(scale=0.05, size=(60, 16)))
    one_topic = np.zeros(60, dtype=np.int32)  # three real groups hidden in one topic
    split = split_large_topics(one_topic, vectors, max_size=25, min_part=5, random_state=0)
    assert sorted(np.bincount(split).tolist()) == [20, 20, 20]
    for group in range(3):  # each part is one of the hidden groups
        assert len(set(split[group * 20 : (group + 1) * 20].tolist())) == 1
    # topics under the cap are left alone, and so is one whose parts would be too small
    assert (split_large_topics(one_topic, vectors, 60, 5, 0) == 0).all()
    assert (split_large_topics(one_topic, vectors, 25, 21, 0) == 0).all()


def test_numbering_by_size_and_merging_similar_topics():
    topics = np.array([7, 7, 3, 3, 3, -1, 9])
    assert number_by_size(topics).tolist() == [1, 1, 0, 0, 0, -1, 2]
    assert number_by_size(np.array([5, 2, -1])).tolist() == [1, 0, -1]  # ties: lower id first
    vectors = _unit([[1, 0], [1, 0.1], [1, 0.2], [0, 1], [0.1, 1], [0.5, 0.5], [1, 0.05]])
    merged = merge_topics(np.array([0, 0, 1, 2, 2, -1, 1]), vectors, 2)
    assert merged[0] == merged[2] != merged[3] and merged[5] == -1  # 0 and 1 point alike
    assert ward_groups(_unit([[1, 0], [0, 1]]), 5).tolist() == [0, 1]  # fewer than asked


def test_refining_moves_papers_to_the_nearest_topic_centre_and_keeps_outliers_out():
    # paper 2 sits on topic 0's side but was put in topic 1; paper 5 is unassigned
    vectors = _unit([[1, 0, 0], [1, 0.1, 0], [1, 0.2, 0], [0, 1, 0], [0, 1, 0.1], [1, 0, 0.1]])
    topics = np.array([0, 0, 1, 1, 1, -1])
    assert refine_topics(topics, vectors).tolist() == [0, 0, 0, 1, 1, -1]
    assert refine_topics(topics, vectors, rounds=0).tolist() == topics.tolist()
    assert (refine_topics(np.full(6, -1), vectors) == -1).all()  # no topic: nothing to do


def test_neighbour_tables_lose_the_paper_itself():
    # UMAP-style tables list the paper itself (usually first): it is dropped wherever it is
    table = np.array([[0, 3, 2, 1], [2, 1, 0, 3], [3, 0, 1, 2], [0, 1, 2, 3]])
    assert without_self(table, 3).tolist() == [[3, 2, 1], [2, 0, 3], [3, 0, 1], [0, 1, 2]]


def test_neighbourhood_vote_fixes_isolated_papers_and_keeps_outliers():
    # two groups of 5 (each paper's neighbours: the other 4 of its group, and one across);
    # paper 4 is labelled 1 but all its neighbours say 0; paper 9 is unassigned
    group_a, group_b = list(range(5)), list(range(5, 10))
    neighbours = np.array(
        [[j for j in group_a if j != i] + [5] for i in group_a]
        + [[j for j in group_b if j != i] + [0] for i in group_b]
    )
    topics = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, -1])
    smoothed = smooth_topics(topics, neighbours)
    assert smoothed.tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1, -1]
    # no majority (2 of 5 say 0, 2 say 1, 1 says 3): the paper keeps its topic
    split = np.array([0, 0, 1, 1, 2, 3, 3, 3, 3, 3])
    assert smooth_topics(split, neighbours)[4] == 2
    assert (smooth_topics(np.full(10, -1), neighbours) == -1).all()
    # UMAP's tables mark the neighbours of disconnected points -1: those do not vote
    cut = neighbours.copy()
    cut[4, :3] = -1  # paper 4 keeps one vote for topic 0 of two cast: no majority of 5
    last_in_0 = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 0])  # (read as an index, -1 would vote 0)
    assert smooth_topics(last_in_0, cut)[4] == 1


def test_core_weights_are_the_share_of_neighbours_in_the_topic_to_the_fourth():
    topics = np.array([0, 0, 0, 1, 1])
    neighbours = np.array([[1, 2], [0, 3], [3, 4], [4, 0], [3, -1]])  # -1: no neighbour there
    assert core_weights(topics, neighbours).tolist() == [1.0, 0.5**4, 0.0, 0.5**4, 0.5**4]
    assert core_weights(topics, np.zeros((5, 0), dtype=int)).tolist() == [1.0] * 5


def test_settled_topics_are_the_nearest_firm_centre_or_none():
    rng = np.random.default_rng(3)
    centres = _unit(rng.normal(size=(3, 16)))
    truth = np.repeat([0, 1, 2], 30)
    vectors = _unit(centres[truth] + rng.normal(scale=0.15, size=(90, 16)))
    start = truth.copy()
    start[rng.choice(90, 15, replace=False)] = rng.integers(0, 3, 15)  # some on the wrong side
    neighbours = nearest_neighbours(vectors, 5)[0]
    settled = settle_topics(start, vectors, neighbours, threshold=0.0)
    assert adjusted_rand_score(truth, settled) > 0.95
    # a fixed point: every paper is in the topic whose weighted centre is nearest
    ids, firm = weighted_centroids(vectors, settled, core_weights(settled, neighbours))
    assert (ids[(vectors @ firm.T).argmax(axis=1)] == settled).all()
    assert (settle_topics(start, vectors, neighbours, threshold=1.01) == -1).all()


# --- assign_topics' steps after HDBSCAN (HDBSCAN's verdict given: no UMAP) ------------------


def _groups(sizes, near: dict[int, int] | None = None) -> np.ndarray:
    """Unit vectors in tight groups of the given sizes, far apart except that group k of
    `near` (k -> j) lies near group j."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(len(sizes), 16))
    for k, j in (near or {}).items():
        centres[k] = centres[j] + rng.normal(scale=0.4, size=16)
    rows = np.repeat(centres, sizes, axis=0) + rng.normal(scale=0.03, size=(sum(sizes), 16))
    return _unit(rows)


def _hdbscan_says(monkeypatch, raw, knn=None) -> None:
    """HDBSCAN's topics, as hdbscan_topics would return them (and, given `knn`, the fit's
    neighbour graph)."""
    found = np.asarray(raw, dtype=np.int32)
    monkeypatch.setattr(cluster_fit, "hdbscan_topics", lambda vectors, config, graph: found)
    if knn is not None:
        graph = cluster_fit.Graph(knn, np.zeros(knn.shape, dtype=np.float32))
        monkeypatch.setattr(cluster_fit, "graph_for", lambda vectors, config: graph)


def _sizes(topics: np.ndarray) -> list[int]:
    return np.bincount(topics[topics >= 0]).tolist()


@pytest.mark.parametrize(
    ("min_cluster_size", "share", "sizes"),
    [
        # over 10 x min_cluster_size (50) is split, unless a part would hold under 2 x 5 papers
        (5, 0.06, [60, 50, 30, 30, 30]),
        # over the share (40 of 200 papers) is split, parts of 2 x 2 papers allowed
        (2, 0.2, [52, 30, 30, 30, 25, 25, 8]),
    ],
)
def test_topics_are_split_above_the_share_and_ten_times_the_smallest(
    monkeypatch, min_cluster_size, share, sizes
):
    # topic 0: two groups of 30; topic 1: two of 25; topic 2: 52 and 8 beside it; topic 3: 30
    vectors = _groups([30, 30, 25, 25, 52, 8, 30], near={5: 4})
    _hdbscan_says(monkeypatch, np.repeat([0, 0, 1, 1, 2, 2, 3], [30, 30, 25, 25, 52, 8, 30]))
    config = ClusterConfig(min_cluster_size=min_cluster_size, max_topic_share=share)
    topics, raw_outlier, _ = assign_topics(vectors, config)
    assert _sizes(topics) == sizes and not raw_outlier.any()


@pytest.mark.parametrize(
    ("min_cluster_size", "voters"),
    [(2, None), (3, None), (4, 3), (5, 4), (40, 15)],  # min(15, smallest - 1, papers - 1)
)
def test_neighbourhood_vote_takes_fewer_voters_than_the_smallest_topic_and_needs_three(
    monkeypatch, min_cluster_size, voters
):
    vectors = _groups([12, 12])
    _hdbscan_says(monkeypatch, [0] * 12 + [1] * 12)
    seen = []
    vote = cluster_fit.smooth_topics
    monkeypatch.setattr(
        cluster_fit, "smooth_topics", lambda topics, nb: seen.append(nb.shape) or vote(topics, nb)
    )
    config = ClusterConfig(min_cluster_size=min_cluster_size, max_topic_share=1.0)
    topics, *_ = assign_topics(vectors, config)
    assert seen == [(24, voters or 0)]  # no voter, no vote
    assert _sizes(topics) == [12, 12]


def test_vote_reuses_the_fits_neighbour_graph(monkeypatch):
    """The vote reuses the fit's neighbour graph (each paper first among its own) instead of
    searching again, where it is wide enough."""
    vectors = _groups([12, 12])
    rng = np.random.default_rng(0)
    knn = np.array([[i, *rng.permutation([j for j in range(24) if j != i])[:8]] for i in range(24)])
    _hdbscan_says(monkeypatch, [0] * 12 + [1] * 12, knn)
    seen = []
    monkeypatch.setattr(cluster_fit, "smooth_topics", lambda topics, nb: seen.append(nb) or topics)

    def no_search(*args, **kwargs):
        raise AssertionError("searched again although the fit's graph was there")

    monkeypatch.setattr(cluster_fit, "nearest_neighbours", no_search)
    config = ClusterConfig(min_cluster_size=5, max_topic_share=1.0)
    assign_topics(vectors, config)
    np.testing.assert_array_equal(seen[0], knn[:, 1:5])  # 4 voters, the paper itself left out
    # a graph no wider than the voters needed: exact search
    _hdbscan_says(monkeypatch, [0] * 12 + [1] * 12, knn[:, :4])
    with pytest.raises(AssertionError, match="searched again"):
        assign_topics(vectors, config)


def test_max_topics_merges_the_most_similar_topics(monkeypatch):
    vectors = _groups([20, 16, 12, 10], near={1: 0, 3: 2})  # topics 0 and 1 alike, 2 and 3
    raw = np.repeat([0, 1, 2, 3], [20, 16, 12, 10])
    _hdbscan_says(monkeypatch, raw)
    topics, *_ = assign_topics(vectors, ClusterConfig(max_topic_share=1.0))
    assert _sizes(topics) == [20, 16, 12, 10]
    merged, *_ = assign_topics(vectors, ClusterConfig(max_topics=2, max_topic_share=1.0))
    assert merged.tolist() == [0] * 36 + [1] * 22  # numbered by size, largest first


def test_run_refuses_embeddings_of_other_documents(tmp_path):
    documents = make.documents(["An abstract long enough to count."], sources="a.txt:1")
    old, new = tmp_path / "old.parquet", tmp_path / "documents.parquet"
    tables.write_table(documents, old, schemas.DOCUMENTS, tables.make_lineage("old", {}))
    tables.write_table(documents, new, schemas.DOCUMENTS, tables.make_lineage("new", {}))
    embeddings = tmp_path / "embeddings.parquet"
    lineage = tables.stage_lineage("embed", documents=old)
    tables.write_embeddings(["p0"], np.ones((1, 384), dtype=np.float32), embeddings, lineage)
    out = tmp_path / "clusters.parquet"
    with pytest.raises(PipelineError, match=f"{embeddings} was built from a different {new}"):
        cluster.run(ClusterConfig(), new, embeddings, out)
    assert not out.exists()
    tables.write_embeddings(  # embeddings of these documents: clustered
        ["p0"],
        np.ones((1, 384), dtype=np.float32),
        embeddings,
        tables.stage_lineage("embed", documents=new),
    )
    cluster.run(ClusterConfig(), new, embeddings, out)
    assert tables.read_table(out, schemas.CLUSTERS)["topic"].tolist() == [0]


@pytest.mark.slow  # a small UMAP fit (numba compiled once per process)
def test_one_neighbour_graph_lists_each_paper_first_then_its_exact_neighbours():
    """The fit's graph (both UMAP fits and the vote use it): each paper first at distance 0,
    then its nearest papers by cosine, as the exact search finds them; HDBSCAN on the UMAP
    made from it finds the groups."""
    vectors = _groups([60] * 4)
    config = ClusterConfig(n_epochs=50, n_neighbors=10, n_components=2, min_cluster_size=20)
    graph = cluster_fit.graph_for(vectors, config)
    # wide enough for UMAP's 10 neighbours and the vote's 15 (and the paper itself)
    assert graph.indices.shape == (240, 16) and (graph.indices[:, 0] == np.arange(240)).all()
    assert (graph.distances[:, 0] == 0).all()
    exact, similarity = cluster_fit.nearest_neighbours(vectors, 15)
    np.testing.assert_array_equal(graph.indices[:, 1:], exact)
    np.testing.assert_allclose(graph.distances[:, 1:], 1 - similarity, atol=1e-6)
    topics = cluster_fit.hdbscan_topics(vectors, config, graph)
    assert len(set(topics.tolist()) - {-1}) == 4
    assert graph.indices[0, 0] == 0  # UMAP was handed copies: the graph is unchanged

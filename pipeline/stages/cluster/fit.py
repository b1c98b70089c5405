"""The cluster stage's fit: topics and map positions for the papers a model is fitted on.

UMAP + HDBSCAN on the precomputed embeddings, as BERTopic's fit runs them, on one neighbour
graph computed once for both UMAP fits and the neighbourhood vote. Then, on the embeddings
themselves: HDBSCAN's outliers that are close enough to a topic join it, topics above
`max_topic_share` of the corpus are split (k-means), the borders are settled by
nearest-centroid rounds and a vote of each paper's neighbours, and `max_topics` caps the
count. Every random choice is seeded through `random_state`
(the rest is deterministic), and the parameters left on "auto" scale with the corpus, so 76 and
3,401 papers both give usable topics.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline import progress
from pipeline.centroids import topic_centroids, ward_groups, weighted_centroids
from pipeline.config import ClusterConfig
from pipeline.neighbours import nearest_neighbours, similar_papers

log = logging.getLogger("pipeline.cluster")

MIN_PAPERS_TO_CLUSTER = 8  # below this, UMAP/HDBSCAN have nothing to find: one topic
REFINE_ROUNDS = 5  # nearest-centroid rounds after HDBSCAN (most changes happen in the first 2)
SMOOTH_NEIGHBOURS = 15  # neighbours that vote in smooth_topics (fewer in small corpora)
MIN_VOTERS = 3  # no vote with fewer neighbours
SMOOTH_ROUNDS = 10  # vote rounds at most (it settles in 3-6 on the 3,401 papers)
SETTLE_ROUNDS = 50  # rounds on the topics' firm centres at most (about 10 on the 3,401 papers)
CORE_POWER = 4  # a paper's weight in its topic's centre: its neighbours' share in it, ** this
# The map's 2-D UMAP from 1,000 papers: UMAP's own choice from 10,000. On the 3,401 ICLR + ICML
# 2023 papers its 500 epochs took 3.3 s more and drew the same islands (screenshots compared).
MAP_EPOCHS = 200


@dataclass(frozen=True)
class ClusterParams:
    n_neighbors: int
    min_cluster_size: int
    min_samples: int


def resolve_params(n_papers: int, config: ClusterConfig) -> ClusterParams:
    """Turn 'auto' settings into numbers for a corpus of `n_papers`.

    n_neighbors is n/100 between 15 and 30: more neighbours give UMAP a more global view, and
    topics that change less from one seed to the next (3,401 papers: 30). min_cluster_size grows
    like n**0.35 (76 papers -> 5, 3,401 -> 17, 100k -> 56), so topic counts stay scannable;
    min_samples at half of it keeps HDBSCAN from declaring a quarter of the corpus noise, as
    BERTopic's default (min_samples = min_cluster_size) does.
    """
    max_neighbors = max(2, n_papers - 1)
    n_neighbors = (
        min(30, max(15, round(n_papers / 100)))
        if config.n_neighbors == "auto"
        else config.n_neighbors
    )
    min_cluster_size = (
        max(3, round(n_papers**0.35))
        if config.min_cluster_size == "auto"
        else config.min_cluster_size
    )
    min_cluster_size = max(2, min(min_cluster_size, n_papers))
    min_samples = (
        max(1, round(min_cluster_size / 2)) if config.min_samples == "auto" else config.min_samples
    )
    return ClusterParams(min(n_neighbors, max_neighbors), min_cluster_size, min_samples)


def neighbour_graph(vectors: np.ndarray, k: int, random_state: int) -> Graph:
    """Each paper's k nearest papers by cosine, itself first at distance 0, in UMAP's format:
    the one graph both UMAP fits and the neighbourhood vote use. Exact (a blocked matrix
    product) up to neighbours.EXACT_MAX papers, pynndescent's seeded graph above. Computed here
    because UMAP would search twice, and below 4,096 papers it computes every pair's distance
    through a Python callback (most of the stage's time at 3,401 papers)."""
    others, similarity = similar_papers(vectors, max(k - 1, 1), random_state=random_state)
    n = len(vectors)
    indices = np.hstack([np.arange(n)[:, None], others]).astype(np.int64)
    distances = np.hstack([np.zeros((n, 1)), 1.0 - np.clip(similarity, -1.0, 1.0)])
    return Graph(indices[:, :k], np.maximum(distances, 0.0).astype(np.float32)[:, :k])


@dataclass(frozen=True)
class Graph:
    """A neighbour table: (n, k) indices with each paper first, and cosine distances."""

    indices: np.ndarray
    distances: np.ndarray


def _umap(
    n_components: int,
    n_neighbors: int,
    min_dist: float,
    random_state: int,
    n: int,
    n_epochs: int | None = None,
    graph: Graph | None = None,
):
    from umap import UMAP

    knn = (None, None, None)
    if graph is not None and graph.indices.shape[1] >= n_neighbors:
        # copies: UMAP marks disconnected neighbours in the arrays it is given
        knn = (graph.indices.copy(), graph.distances.copy(), None)
    return UMAP(
        n_neighbors=n_neighbors,
        n_components=n_components,
        min_dist=min_dist,
        metric="cosine",
        # spectral initialisation needs more points than dimensions; tiny corpora use random
        init="spectral" if n > n_components + 8 else "random",
        random_state=random_state,
        low_memory=True,
        n_epochs=n_epochs,
        n_jobs=1,  # seeded UMAP is single-threaded anyway; asking for more only warns
        precomputed_knn=knn,
        tqdm_kwds=progress.umap_kwds(f"UMAP {n_components}-D"),
    )


def _fit_umap(reducer, vectors: np.ndarray) -> np.ndarray:
    import warnings

    with warnings.catch_warnings():  # no search index given: UMAP's transform is not used
        warnings.filterwarnings("ignore", message=r"precomputed_knn\[2\]")
        return reducer.fit_transform(vectors)


def umap_epochs(n_papers: int, config: ClusterConfig) -> int | None:
    """Epochs of the UMAP that HDBSCAN clusters in. auto: 400 from 1,000 papers, 200 from
    5,000, UMAP's own choice (500) below 1,000. Worst seed pair's agreement (the border rounds
    after HDBSCAN settle most of the rest): on the 3,401 ICLR + ICML 2023 papers, seeds 42-46,
    fp32 / bf16 vectors, 0.65 / 0.88 at 200 epochs, 0.92 / 0.86 at 300, 0.90 / 0.91 at 400,
    0.90 / 0.87 at 500; on the 9,673 ICML + ICLR 2020-2023 papers, seeds 42-44, 0.93 / 0.96 at
    200 and 0.88 / 0.87 at 400. More epochs cost most of the stage's time."""
    if config.n_epochs != "auto":
        return config.n_epochs
    if n_papers < 1_000:
        return None
    return 400 if n_papers < 5_000 else 200


def graph_for(vectors: np.ndarray, config: ClusterConfig) -> Graph | None:
    """The fit's neighbour graph: wide enough for UMAP and the vote (None below
    MIN_PAPERS_TO_CLUSTER, where there is no UMAP)."""
    n = len(vectors)
    if n < MIN_PAPERS_TO_CLUSTER:
        return None
    width = max(resolve_params(n, config).n_neighbors, vote_size(n, config) + 1)
    return neighbour_graph(vectors, min(width, n), config.random_state)


def map_coordinates(
    vectors: np.ndarray, config: ClusterConfig, graph: Graph | None = None
) -> np.ndarray:
    """2-D layout of the papers for the map (its own seeded UMAP fit): MAP_EPOCHS epochs from
    1,000 papers (UMAP's own choice, 500, below)."""
    n = len(vectors)
    if n < MIN_PAPERS_TO_CLUSTER:
        return _pca_2d(vectors)
    params = resolve_params(n, config)
    graph = graph if graph is not None else graph_for(vectors, config)
    epochs = MAP_EPOCHS if n >= 1_000 else None
    reducer = _umap(
        2, params.n_neighbors, config.map_min_dist, config.random_state, n, epochs, graph=graph
    )
    return _fit_umap(reducer, vectors).astype(np.float32)


def _pca_2d(vectors: np.ndarray) -> np.ndarray:
    centred = vectors - vectors.mean(axis=0, keepdims=True)
    if len(vectors) < 2 or not np.any(centred):
        return np.zeros((len(vectors), 2), dtype=np.float32)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ components[:2].T
    if coords.shape[1] < 2:
        coords = np.hstack([coords, np.zeros((len(coords), 1))])
    return coords.astype(np.float32)


def hdbscan_topics(
    vectors: np.ndarray, config: ClusterConfig, graph: Graph | None = None
) -> np.ndarray:
    """HDBSCAN's topic per paper (-1 = left out), on a seeded 5-D UMAP of the embeddings: what
    BERTopic's fit does with given embeddings (UMAP, then HDBSCAN), called directly, since its
    topic words would be thrown away here (the label stage makes its own)."""
    from hdbscan import HDBSCAN

    n = len(vectors)
    params = resolve_params(n, config)
    log.info(
        "clustering %d papers: n_neighbors=%d min_cluster_size=%d min_samples=%d",
        n,
        params.n_neighbors,
        params.min_cluster_size,
        params.min_samples,
    )
    graph = graph if graph is not None else graph_for(vectors, config)
    reducer = _umap(
        config.n_components,
        params.n_neighbors,
        0.0,
        config.random_state,
        n,
        umap_epochs(n, config),
        graph,
    )
    with progress.task("UMAP + HDBSCAN"):
        reduced = _fit_umap(reducer, vectors)
        clusterer = HDBSCAN(
            min_cluster_size=params.min_cluster_size,
            min_samples=params.min_samples,
            metric="euclidean",
            cluster_selection_method="eom",
            prediction_data=False,
        ).fit(reduced)
    return np.asarray(clusterer.labels_, dtype=np.int32)


def reassign_outliers(topics: np.ndarray, vectors: np.ndarray, threshold: float) -> np.ndarray:
    """Each outlier (-1) joins the topic whose mean embedding it is most cosine-similar to, if
    that similarity is at least `threshold`; the others stay -1."""
    topics = topics.copy()
    outliers = np.flatnonzero(topics == -1)
    ids, centroids = topic_centroids(vectors, topics)
    if not len(outliers) or not len(ids):
        return topics
    similarity = vectors[outliers] @ centroids.T
    close = similarity.max(axis=1) >= threshold
    topics[outliers[close]] = ids[similarity.argmax(axis=1)[close]]
    return topics


def split_large_topics(
    topics: np.ndarray, vectors: np.ndarray, max_size: float, min_part: int, random_state: int
) -> np.ndarray:
    """Split every topic of more than `max_size` papers into ceil(size / max_size) parts by
    k-means on the embeddings (20 starts: the best partition, nearly the same whatever the
    seed), unless a part would hold fewer than `min_part` papers."""
    from sklearn.cluster import KMeans

    topics = topics.copy()
    sizes = pd.Series(topics[topics >= 0]).value_counts().sort_index()
    for topic, size in sizes[sizes > max_size].items():
        members = np.flatnonzero(topics == topic)
        k = int(np.ceil(size / max_size))
        parts = KMeans(k, n_init=20, random_state=random_state).fit_predict(vectors[members])
        if np.bincount(parts, minlength=k).min() < min_part:
            log.info("topic of %d papers left whole: a part would be too small", size)
            continue
        for part in range(1, k):
            topics[members[parts == part]] = topics.max() + 1
    return topics


def refine_topics(
    topics: np.ndarray, vectors: np.ndarray, rounds: int = REFINE_ROUNDS
) -> np.ndarray:
    """Rounds of nearest-centroid assignment in the embedding space (k-means steps started from
    the topics): every assigned paper joins the topic whose mean embedding it is most similar
    to; unassigned papers (-1) stay so. Borders then follow the topics' centres, which move
    little from one seed to the next, rather than UMAP's seeded layout."""
    topics = topics.copy()
    assigned = topics >= 0
    for _ in range(rounds):
        ids, centroids = topic_centroids(vectors, topics)
        if not len(ids):
            break
        nearest = ids[(vectors[assigned] @ centroids.T).argmax(axis=1)]
        if np.array_equal(nearest, topics[assigned]):
            break
        topics[assigned] = nearest
    return topics


def without_self(knn: np.ndarray, k: int) -> np.ndarray:
    """The first k neighbours of each row of a neighbour table that may list the paper itself."""
    is_self = knn == np.arange(len(knn))[:, None]
    order = np.argsort(is_self, axis=1, kind="stable")  # the paper itself moves to the end
    return np.take_along_axis(knn, order, axis=1)[:, : min(k, knn.shape[1] - 1)]


def smooth_topics(
    topics: np.ndarray, neighbours: np.ndarray, rounds: int = SMOOTH_ROUNDS
) -> np.ndarray:
    """Rounds of majority vote on the neighbour graph: an assigned paper takes the topic held by
    more than half of its neighbours, where one is. Isolated papers that UMAP's seed happened to
    put across a border go back to the topic of their neighbourhood; unassigned papers stay so."""
    from scipy.sparse import coo_matrix

    topics = topics.copy()
    n, k = neighbours.shape
    if not k or topics.max(initial=-1) < 0:
        return topics
    rows = np.repeat(np.arange(n), k)
    for _ in progress.bar(range(rounds), desc="neighbour vote rounds"):
        # UMAP marks neighbours of disconnected points -1: they do not vote
        votes = np.where(neighbours >= 0, topics[neighbours], -1).ravel()
        cast = votes >= 0
        counts = coo_matrix(
            (np.ones(cast.sum(), dtype=np.int32), (rows[cast], votes[cast])),
            shape=(n, int(topics.max()) + 1),
        ).tocsr()
        majority = np.asarray(counts.max(axis=1).todense()).ravel() > k / 2
        winner = np.asarray(counts.argmax(axis=1)).ravel().astype(np.int32)
        updated = np.where((topics >= 0) & majority, winner, topics)
        if np.array_equal(updated, topics):
            break
        topics = updated
    return topics


def merge_topics(topics: np.ndarray, vectors: np.ndarray, max_topics: int) -> np.ndarray:
    """Merge the most similar topics (Ward on their mean embeddings) until `max_topics` remain."""
    ids, centroids = topic_centroids(vectors, topics)
    if len(ids) <= max_topics:
        return topics
    groups = ward_groups(centroids, max_topics)
    lookup = dict(zip(ids.tolist(), groups.tolist(), strict=True))
    return np.array([lookup.get(t, -1) for t in topics.tolist()], dtype=np.int32)


def number_by_size(topics: np.ndarray) -> np.ndarray:
    """Renumber topics 0, 1, ... from the largest; equal sizes keep their earlier order."""
    sizes = pd.Series(topics[topics >= 0]).value_counts()
    order = sorted(sizes.index, key=lambda t: (-sizes[t], t))
    lookup = {int(t): new for new, t in enumerate(order)}
    return np.array([lookup.get(int(t), -1) for t in topics], dtype=np.int32)


def core_weights(topics: np.ndarray, neighbours: np.ndarray) -> np.ndarray:
    """How firmly each paper sits in its topic: the share of its neighbours in the same topic,
    to the 4th power (1 for every paper without neighbours)."""
    if not neighbours.shape[1]:
        return np.ones(len(topics))
    same = (topics[np.maximum(neighbours, 0)] == topics[:, None]) & (neighbours >= 0)
    return same.mean(axis=1) ** CORE_POWER


def settle_topics(
    topics: np.ndarray,
    vectors: np.ndarray,
    neighbours: np.ndarray,
    threshold: float,
    rounds: int = SETTLE_ROUNDS,
) -> np.ndarray:
    """Rounds until no paper moves: each topic's centre is the mean of its papers weighted by
    how firmly they sit in it (core_weights), and each paper joins the topic whose centre is
    most similar, or none below `threshold`. The result is the rule a new paper is placed by
    (nearest centre), and the firm papers' centres move little from one seed to the next."""
    for _ in progress.bar(range(rounds), desc="border rounds"):
        ids, centres = weighted_centroids(vectors, topics, core_weights(topics, neighbours))
        if not len(ids):
            break
        similarity = vectors @ centres.T
        updated = np.where(similarity.max(axis=1) >= threshold, ids[similarity.argmax(axis=1)], -1)
        if np.array_equal(updated, topics):
            break
        topics = updated.astype(np.int32)
    return topics


def voting_neighbours(vectors: np.ndarray, graph: Graph | None, voters: int) -> np.ndarray:
    """Each paper's `voters` nearest neighbours: from the fit's graph where it is wide
    enough, else searched exactly."""
    if not voters:
        return np.zeros((len(vectors), 0), dtype=np.int64)
    if graph is not None and graph.indices.shape[1] > voters:
        return without_self(graph.indices, voters)
    return nearest_neighbours(vectors, voters)[0]


def assign_topics(
    vectors: np.ndarray, config: ClusterConfig, graph: Graph | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(topic per paper, whether HDBSCAN left it out, how firmly it sits in its topic):
    HDBSCAN's topics, with outliers close to a topic reassigned, oversized topics split,
    borders refined on the embeddings (centroid rounds, a neighbourhood vote), at most
    `max_topics` kept, then settled on the topics' firm centres; numbered by size, largest
    first, -1 for the papers left unassigned."""
    n = len(vectors)
    if n < MIN_PAPERS_TO_CLUSTER:
        log.warning("only %d papers: too few to cluster, all placed in one topic", n)
        return np.zeros(n, dtype=np.int32), np.zeros(n, dtype=bool), np.ones(n)
    graph = graph if graph is not None else graph_for(vectors, config)
    raw = hdbscan_topics(vectors, config, graph)
    if (raw == -1).all():
        log.warning("HDBSCAN found no dense group among %d papers: all placed in one topic", n)
        return np.zeros(n, dtype=np.int32), np.ones(n, dtype=bool), np.ones(n)
    topics = reassign_outliers(raw, vectors, config.outlier_threshold)
    smallest = resolve_params(n, config).min_cluster_size
    # small corpora keep their natural topics: only topics of over 10 x the smallest are split
    max_size = max(config.max_topic_share * n, 10 * smallest)
    topics = split_large_topics(topics, vectors, max_size, 2 * smallest, config.random_state)
    # boundaries from the embeddings rather than from one seeded layout: topics that change less
    # with the seed
    topics = refine_topics(topics, vectors)
    neighbours = voting_neighbours(vectors, graph, vote_size(n, config))
    topics = smooth_topics(topics, neighbours)
    if config.max_topics is not None:
        topics = merge_topics(topics, vectors, config.max_topics)
    topics = number_by_size(settle_topics(topics, vectors, neighbours, config.outlier_threshold))
    return topics, raw == -1, core_weights(topics, neighbours)


def vote_size(n_papers: int, config: ClusterConfig) -> int:
    """Neighbours that vote on a paper's topic (0: no vote): fewer than the smallest topic's
    papers, so a small topic can hold its own ground, and none under 3, where a "majority" is
    one or two papers that would only trade labels back and forth."""
    smallest = resolve_params(n_papers, config).min_cluster_size
    voters = min(SMOOTH_NEIGHBOURS, smallest - 1, n_papers - 1)
    return voters if voters >= MIN_VOTERS else 0


@dataclass(frozen=True)
class Fit:
    """A fit's result for its papers: topic (numbered by size, -1 unassigned), whether HDBSCAN
    left the paper out, map position (n, 2), and its weight in its topic's centre."""

    topics: np.ndarray
    raw_outlier: np.ndarray
    coords: np.ndarray
    weights: np.ndarray  # how firmly each paper sits in its topic (its weight in the centre)


def fit_topics(vectors: np.ndarray, config: ClusterConfig) -> Fit:
    """Fit topics and the 2-D map on these papers."""
    graph = graph_for(vectors, config)  # one neighbour search for both UMAP fits and the vote
    topics, raw_outlier, weights = assign_topics(vectors, config, graph)
    coords = map_coordinates(vectors, config, graph)
    n = max(len(topics), 1)
    sizes = pd.Series(topics[topics >= 0]).value_counts()
    log.info(
        "%d topics (largest %.1f%% of the papers); unassigned: %.1f%% by HDBSCAN, "
        "%.1f%% after reassignment",
        len(sizes),
        100 * (sizes.max() if len(sizes) else 0) / n,
        100 * raw_outlier.sum() / n,
        100 * (topics == -1).sum() / n,
    )
    return Fit(topics, raw_outlier, coords, weights)

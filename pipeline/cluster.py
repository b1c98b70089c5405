"""Stage 3, cluster: embeddings -> clusters.parquet (topic per paper and 2-D map coordinates).

UMAP + HDBSCAN through BERTopic on the precomputed embeddings (BERTopic never embeds here, so it
never reaches for a model hub). Every random choice is seeded through `random_state`, and the
parameters left on "auto" scale with the corpus, so 76 and 3,401 papers both give usable topics.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import tables
from pipeline.config import ClusterConfig
from pipeline.embed import embedding_texts
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.cluster")

MIN_PAPERS_TO_CLUSTER = 8  # below this, UMAP/HDBSCAN have nothing to find: one topic


@dataclass(frozen=True)
class ClusterParams:
    n_neighbors: int
    min_cluster_size: int
    min_samples: int


def resolve_params(n_papers: int, config: ClusterConfig) -> ClusterParams:
    """Turn 'auto' settings into numbers for a corpus of `n_papers`.

    min_cluster_size grows like n**0.4 (76 papers -> 6, 3,401 -> 26, 100k -> 100), so topic
    counts stay scannable; min_samples at a third of it keeps HDBSCAN from declaring a quarter of
    the corpus noise, as BERTopic's default (min_samples = min_cluster_size) does.
    """
    max_neighbors = max(2, n_papers - 1)
    n_neighbors = 15 if config.n_neighbors == "auto" else config.n_neighbors
    min_cluster_size = (
        max(3, round(n_papers**0.4))
        if config.min_cluster_size == "auto"
        else config.min_cluster_size
    )
    min_cluster_size = max(2, min(min_cluster_size, n_papers))
    min_samples = (
        max(1, round(min_cluster_size / 3)) if config.min_samples == "auto" else config.min_samples
    )
    return ClusterParams(min(n_neighbors, max_neighbors), min_cluster_size, min_samples)


def _umap(n_components: int, n_neighbors: int, min_dist: float, random_state: int, n: int):
    from umap import UMAP

    return UMAP(
        n_neighbors=n_neighbors,
        n_components=n_components,
        min_dist=min_dist,
        metric="cosine",
        # spectral initialisation needs more points than dimensions; tiny corpora use random
        init="spectral" if n > n_components + 8 else "random",
        random_state=random_state,
        low_memory=True,
    )


def map_coordinates(vectors: np.ndarray, config: ClusterConfig) -> np.ndarray:
    """2-D layout of the papers for the map (its own seeded UMAP fit)."""
    n = len(vectors)
    if n < MIN_PAPERS_TO_CLUSTER:
        return _pca_2d(vectors)
    params = resolve_params(n, config)
    reducer = _umap(2, params.n_neighbors, config.map_min_dist, config.random_state, n)
    return reducer.fit_transform(vectors).astype(np.float32)


def _pca_2d(vectors: np.ndarray) -> np.ndarray:
    centred = vectors - vectors.mean(axis=0, keepdims=True)
    if len(vectors) < 2 or not np.any(centred):
        return np.zeros((len(vectors), 2), dtype=np.float32)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ components[:2].T
    if coords.shape[1] < 2:
        coords = np.hstack([coords, np.zeros((len(coords), 1))])
    return coords.astype(np.float32)


def assign_topics(texts: list[str], vectors: np.ndarray, config: ClusterConfig) -> np.ndarray:
    """Topic per paper (-1 = left unassigned by HDBSCAN), numbered by size, largest first."""
    n = len(vectors)
    if n < MIN_PAPERS_TO_CLUSTER:
        log.warning("only %d papers: too few to cluster, all placed in one topic", n)
        return np.zeros(n, dtype=np.int32)
    from bertopic import BERTopic
    from hdbscan import HDBSCAN
    from sklearn.feature_extraction.text import CountVectorizer

    params = resolve_params(n, config)
    log.info(
        "clustering %d papers: n_neighbors=%d min_cluster_size=%d min_samples=%d",
        n,
        params.n_neighbors,
        params.min_cluster_size,
        params.min_samples,
    )
    model = BERTopic(
        embedding_model=None,  # embeddings are given: nothing is loaded
        umap_model=_umap(config.n_components, params.n_neighbors, 0.0, config.random_state, n),
        hdbscan_model=HDBSCAN(
            min_cluster_size=params.min_cluster_size,
            min_samples=params.min_samples,
            metric="euclidean",
            cluster_selection_method="eom",
            prediction_data=False,
        ),
        vectorizer_model=CountVectorizer(stop_words="english"),
        calculate_probabilities=False,
    )
    topics, _ = model.fit_transform(texts, embeddings=vectors)
    topics = np.asarray(topics, dtype=np.int32)
    if (topics == -1).all():
        log.warning("HDBSCAN found no dense group among %d papers: all placed in one topic", n)
        return np.zeros(n, dtype=np.int32)
    return topics


def cluster_documents(
    documents: pd.DataFrame, doc_ids: list[str], vectors: np.ndarray, config: ClusterConfig
) -> pd.DataFrame:
    """Pure core: documents + their embeddings -> one row per paper (doc_id, topic, x, y)."""
    if list(documents["doc_id"]) != list(doc_ids):
        raise PipelineError(
            "embeddings do not match documents (different papers or order): rerun the embed stage"
        )
    topics = assign_topics(embedding_texts(documents), vectors, config)
    coords = map_coordinates(vectors, config)
    clusters = pd.DataFrame(
        {"doc_id": doc_ids, "topic": topics, "x": coords[:, 0], "y": coords[:, 1]}
    )
    n_outliers = int((topics == -1).sum())
    log.info(
        "%d topics; %d of %d papers (%.1f%%) left unassigned",
        len(set(topics.tolist()) - {-1}),
        n_outliers,
        len(topics),
        100 * n_outliers / max(len(topics), 1),
    )
    return clusters


def run(config: ClusterConfig, documents_path: Path, embeddings_path: Path, out_path: Path) -> None:
    documents = tables.read_table(documents_path, tables.DOCUMENTS)
    doc_ids, vectors = tables.read_embeddings(embeddings_path)
    clusters = cluster_documents(documents, doc_ids, vectors, config)
    tables.write_table(clusters, out_path, tables.CLUSTERS)

"""Topics as points in the embedding space: their unit mean embeddings, and Ward groups of them
(the cluster stage's topic cap, the label stage's themes)."""

from __future__ import annotations

import numpy as np


def topic_centroids(vectors: np.ndarray, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(topic ids, unit-length mean embedding of each topic's papers); -1 is left out."""
    ids = np.array(sorted(set(topics.tolist()) - {-1}), dtype=np.int32)
    if not len(ids):
        return ids, np.zeros((0, vectors.shape[1]), dtype=np.float32)
    centroids = np.stack([vectors[topics == t].mean(axis=0) for t in ids])
    norms = np.linalg.norm(centroids, axis=1, keepdims=True)
    return ids, centroids / np.where(norms > 0, norms, 1)


def ward_groups(centroids: np.ndarray, n_groups: int) -> np.ndarray:
    """Group index (0..n_groups-1) of each centroid: Ward clustering of the unit centroids."""
    from sklearn.cluster import AgglomerativeClustering

    if n_groups >= len(centroids):
        return np.arange(len(centroids))
    return AgglomerativeClustering(n_clusters=n_groups, linkage="ward").fit_predict(centroids)

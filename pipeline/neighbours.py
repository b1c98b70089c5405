"""Exact nearest neighbours by cosine similarity, a block of rows at a time: the map's similar
papers and the cluster stage's neighbourhood vote.

Exact search, not pynndescent: at the sizes where it is used (the vote below 4,096 papers, where
UMAP keeps no neighbour table, and five neighbours per paper for the map) a blocked matrix
product is fast, and exact ties can be broken reproducibly (to the lower index).
"""

from __future__ import annotations

import numpy as np


def nearest_neighbours(
    vectors: np.ndarray, k: int, block_rows: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's k most cosine-similar other rows (the map's similar papers, the cluster
    stage's neighbourhood vote): (indices, similarities), both of shape
    (n, min(k, n - 1)), best first; ties go to the lower index.

    Similarities are computed a block of rows at a time (about 16M values per block), so 100k
    papers never need an n x n matrix.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    n = len(vectors)
    k = min(k, max(n - 1, 0))
    if k == 0:
        return np.zeros((n, 0), dtype=np.int64), np.zeros((n, 0), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms > 0, norms, 1)
    block_rows = block_rows or max(1, (1 << 24) // n)
    indices = np.empty((n, k), dtype=np.int64)
    similarities = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, block_rows):
        block = unit[start : start + block_rows] @ unit.T
        rows = np.arange(len(block))
        block[rows, rows + start] = -np.inf  # never your own neighbour
        top = np.argpartition(-block, k - 1, axis=1)[:, :k]
        values = np.take_along_axis(block, top, axis=1)
        kth = values.min(axis=1)
        # where more papers share the k-th similarity than fit, the lowest indices win
        for r in np.flatnonzero((block >= kth[:, None]).sum(axis=1) > k):
            candidates = np.flatnonzero(block[r] >= kth[r])
            top[r] = candidates[np.lexsort((candidates, -block[r, candidates]))[:k]]
            values[r] = block[r, top[r]]
        order = np.lexsort((top, -values), axis=1)
        indices[start : start + len(block)] = np.take_along_axis(top, order, axis=1)
        similarities[start : start + len(block)] = np.take_along_axis(values, order, axis=1)
    return indices, similarities

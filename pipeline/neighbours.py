"""Nearest neighbours by cosine similarity: the map's similar papers and the cluster fit's one
neighbour graph (both UMAP fits and the neighbourhood vote).

Exact search, a block of rows at a time, up to EXACT_MAX papers: a blocked matrix product is
fast there, and exact ties are broken reproducibly (to the lower index). Its cost grows with
the square of the papers (n x n x 384 multiply-adds: about 40 s at 100,000 papers on two
cores, over an hour at 1,000,000), so above EXACT_MAX the neighbours come from pynndescent's
approximate graph (seeded, one thread: the same for the same vectors), with the similarities
computed exactly for the pairs it finds.
"""

from __future__ import annotations

import numpy as np

EXACT_MAX = 50_000  # rows up to which similar_papers searches exactly
UNIT_TOLERANCE = 1e-5  # a row this close to unit length is used as it is (float32 rounding)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """The rows scaled to unit length; `vectors` itself when they are (embeddings are), not a
    copy: a million papers' vectors are 1.5 GB."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if np.all(np.abs(norms - 1) <= UNIT_TOLERANCE):
        return vectors
    return vectors / np.where(norms > 0, norms, 1)


def top_k(block: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's k largest values (indices, values), best first, ties to the lower index."""
    top = np.argpartition(-block, k - 1, axis=1)[:, :k]
    values = np.take_along_axis(block, top, axis=1)
    kth = values.min(axis=1)
    # where more columns share the k-th value than fit, the lowest indices win
    for r in np.flatnonzero((block >= kth[:, None]).sum(axis=1) > k):
        candidates = np.flatnonzero(block[r] >= kth[r])
        top[r] = candidates[np.lexsort((candidates, -block[r, candidates]))[:k]]
        values[r] = block[r, top[r]]
    order = np.lexsort((top, -values), axis=1)
    return np.take_along_axis(top, order, axis=1), np.take_along_axis(values, order, axis=1)


def _search(
    queries: np.ndarray, base: np.ndarray, k: int, block_rows: int | None, self_search: bool
) -> tuple[np.ndarray, np.ndarray]:
    n, m = len(queries), len(base)
    indices = np.empty((n, k), dtype=np.int64)
    similarities = np.empty((n, k), dtype=np.float32)
    if k == 0:
        return indices, similarities
    block_rows = block_rows or max(1, (1 << 24) // max(m, 1))
    for start in range(0, n, block_rows):
        block = queries[start : start + block_rows] @ base.T
        if self_search:
            rows = np.arange(len(block))
            block[rows, rows + start] = -np.inf  # never your own neighbour
        top, values = top_k(block, k)
        indices[start : start + len(block)] = top
        similarities[start : start + len(block)] = values
    return indices, similarities


def nearest_neighbours(
    vectors: np.ndarray, k: int, block_rows: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's k most cosine-similar other rows (the map's similar papers, the cluster
    stage's neighbourhood vote): (indices, similarities), both of shape
    (n, min(k, n - 1)), best first; ties go to the lower index.

    Similarities are computed a block of rows at a time (about 16M values per block), so 100k
    papers never need an n x n matrix.
    """
    unit = unit_rows(vectors)
    return _search(unit, unit, min(k, max(len(unit) - 1, 0)), block_rows, self_search=True)


def neighbours_among(
    queries: np.ndarray, base: np.ndarray, k: int, block_rows: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each query row's k most cosine-similar rows of `base` (a new paper's nearest fitted
    papers): (indices into base, similarities), shape (n, min(k, len(base))), best first."""
    base = unit_rows(base)
    return _search(unit_rows(queries), base, min(k, len(base)), block_rows, self_search=False)


def similar_papers(
    vectors: np.ndarray, k: int, exact_max: int = EXACT_MAX, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """As nearest_neighbours (each row's k most cosine-similar other rows, best first, ties to
    the lower index), exact up to `exact_max` rows; above it approximate, from pynndescent
    seeded with `random_state`."""
    if len(vectors) <= exact_max:
        return nearest_neighbours(vectors, k)
    from pynndescent import NNDescent

    unit = unit_rows(vectors)
    k = min(k, len(unit) - 1)
    graph = NNDescent(unit, metric="cosine", n_neighbors=k + 1, random_state=random_state)
    found = np.asarray(graph.neighbor_graph[0], dtype=np.int64)
    rows = np.arange(len(unit))[:, None]
    found = np.where(found < 0, rows, found)  # pynndescent's -1: no neighbour found
    similarities = np.empty(found.shape, dtype=np.float32)
    for start in range(0, len(unit), 1 << 15):  # 32k rows at a time: no n x k x d array
        block = slice(start, start + (1 << 15))
        similarities[block] = np.einsum("nd,nkd->nk", unit[block], unit[found[block]])
    similarities[found == rows] = -np.inf  # never your own neighbour
    order = np.lexsort((found, -similarities), axis=1)[:, :k]
    return np.take_along_axis(found, order, axis=1), np.take_along_axis(
        similarities, order, axis=1
    ).astype(np.float32)

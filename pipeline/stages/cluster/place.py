"""Placing papers into a fitted model, as the fit placed its own: in the topic whose centre is
most similar (none below `cluster.outlier_threshold`), the rule the fit's last rounds settled
its papers by; on the map, among its nearest fitted papers of that topic (of the nearest topic
for a paper left unassigned).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from pipeline.config import EngineConfig
from pipeline.engines import Actor, chunk_bounds, map_chunks
from pipeline.neighbours import neighbours_among
from pipeline.stages.cluster.model import TopicModel

log = logging.getLogger("pipeline.cluster")

LAYOUT_NEIGHBOURS = 10  # fitted papers a new paper's map position is taken from
CENTRE_BLOCK = 65_536  # papers compared with every topic centre at once (bounds the memory)


@dataclass(frozen=True)
class Placement:
    """Per paper: topic (-1: none), cosine to that topic's centre (to the nearest centre for
    -1), map position (n, 2)."""

    topics: np.ndarray
    similarity: np.ndarray
    coords: np.ndarray


def nearest_centres(
    vectors: np.ndarray, ids: np.ndarray, centroids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(the topic whose centre is most cosine-similar, that similarity), a block at a time."""
    n = len(vectors)
    best = np.zeros(n, dtype=np.int64)
    best_sim = np.full(n, -1.0, dtype=np.float32)
    for start in range(0, n, CENTRE_BLOCK):
        block = vectors[start : start + CENTRE_BLOCK] @ centroids.T
        best[start : start + CENTRE_BLOCK] = block.argmax(axis=1)
        best_sim[start : start + CENTRE_BLOCK] = block.max(axis=1)
    return ids[best], best_sim


def layout_positions(vectors: np.ndarray, near: np.ndarray, model: TopicModel) -> np.ndarray:
    """Each paper's map position: the similarity-weighted mean of the positions of its nearest
    fitted papers in the topic whose centre it is nearest to (its own topic; for a paper left
    unassigned, the closest one), so it is drawn among that topic. Searching one topic's fitted
    papers at a time keeps placement near-linear: a million papers into a model of 50,000 cost
    each paper a topic's few hundred papers, not all 50,000."""
    coords = np.zeros((len(vectors), 2), dtype=np.float32)
    order = np.argsort(near, kind="stable")
    bounds = np.flatnonzero(np.diff(near[order])) + 1
    for queries in np.split(order, bounds):
        members = np.flatnonzero(model.topics == near[queries[0]])
        neighbours, similarities = neighbours_among(
            vectors[queries], model.vectors[members], LAYOUT_NEIGHBOURS
        )
        weights = np.clip(similarities, 1e-6, None)
        weights /= weights.sum(axis=1, keepdims=True)
        positions = model.coords[members][neighbours]
        coords[queries] = np.einsum("nk,nkd->nd", weights, positions)
    return coords


def own_similarity(model: TopicModel, vectors: np.ndarray, topics: np.ndarray) -> np.ndarray:
    """Each paper's cosine to its topic's centre; for an unassigned paper, to the nearest."""
    ids, centroids = model.centroids
    if not len(ids):
        return np.zeros(len(vectors), dtype=np.float32)
    _, best_sim = nearest_centres(vectors, ids, centroids)
    position = {t: i for i, t in enumerate(ids.tolist())}
    own = np.array([position.get(t, -1) for t in np.asarray(topics).tolist()], dtype=np.int64)
    mine = np.einsum("nd,nd->n", vectors, centroids[np.maximum(own, 0)])
    return np.where(own >= 0, mine, best_sim).astype(np.float32)


def place(model: TopicModel, vectors: np.ndarray) -> Placement:
    """Place papers (their unit `vectors`) into `model`."""
    vectors = np.asarray(vectors, dtype=np.float32)
    n = len(vectors)
    ids, centroids = model.centroids
    if not n or not len(ids):
        empty = np.zeros(n, dtype=np.float32)
        return Placement(np.full(n, -1, np.int32), empty, np.zeros((n, 2), np.float32))
    nearest, best_sim = nearest_centres(vectors, ids, centroids)
    topics = np.where(best_sim >= model.outlier_threshold, nearest, -1).astype(np.int32)
    # a placed paper's topic is its nearest centre (or none): its similarity is that centre's
    return Placement(topics, best_sim, layout_positions(vectors, nearest, model))


def joined(parts: list[Placement]) -> Placement:
    """The placements of consecutive chunks of papers as one."""
    if not parts:
        return Placement(np.zeros(0, np.int32), np.zeros(0, np.float32), np.zeros((0, 2)))
    return Placement(
        np.concatenate([p.topics for p in parts]).astype(np.int32),
        np.concatenate([p.similarity for p in parts]).astype(np.float32),
        np.concatenate([p.coords for p in parts]).astype(np.float32),
    )


class Placer:
    """A worker's copy of the model (sent once per Ray actor); called with a chunk of papers'
    vectors, their placement."""

    def __init__(self, model: TopicModel):
        self.model = model

    def __call__(self, vectors: np.ndarray) -> Placement:
        return place(self.model, vectors)


def place_in_chunks(model: TopicModel, vectors: np.ndarray, engine: EngineConfig) -> Placement:
    """`place` a chunk of `engine.shard_papers` papers at a time, on the configured engine: the
    same chunks here and on Ray, so both give the same topics and positions."""
    vectors = np.asarray(vectors, dtype=np.float32)
    chunks = [
        vectors[start:stop] for start, stop in chunk_bounds(len(vectors), engine.shard_papers)
    ]
    start = time.perf_counter()
    parts = map_chunks(
        engine,
        Actor(Placer, (model,)),
        chunks,
        papers=len,
        desc="placing papers",
        what="placing papers",
        then="rerun the cluster stage",
    )
    if chunks:
        log.info(
            "placed %d papers in %d chunks on the %s engine in %.1f s",
            len(vectors),
            len(chunks),
            engine.kind,
            time.perf_counter() - start,
        )
    return joined(parts)

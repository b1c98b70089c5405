"""New topics without a refit: the papers added since the fit and the build's papers left
unassigned, clustered among themselves, with the build's UMAP and HDBSCAN
settings scaled to the pool as a sample fit scales them. A group of at least the pool's
min_cluster_size papers whose centre is not near any existing topic's centre becomes a topic
with the next number; the other papers keep what placing gave them (a topic, or none), and the
log says why.

"Near" is measured on the model: a group is near when its centre is more similar to an existing
topic's than NEAR_PERCENTILE % of the existing topics are to their nearest other topic, i.e.
closer than the fit keeps its own neighbouring topics apart. (BERTopic's merge_models uses cosine
0.7 between topic embeddings; MiniLM centres of distinct ML topics can be closer than that.)
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.centroids import weighted_centroids
from pipeline.config import ClusterConfig
from pipeline.stages.cluster.fit import MIN_PAPERS_TO_CLUSTER, fit_topics

log = logging.getLogger("pipeline.cluster")

NEAR_PERCENTILE = 95


@dataclass(frozen=True)
class Emergence:
    """The new topics: `numbers` (largest first), and per pool paper (rows of the build's
    papers, `rows`) its new topic or -1, its weight in that topic's centre, its similarity to
    it, and its layout in the pool's own map (n, 2)."""

    rows: np.ndarray
    topics: np.ndarray
    weights: np.ndarray
    similarity: np.ndarray
    layout: np.ndarray
    numbers: list[int]


def near_threshold(centres: np.ndarray) -> float:
    """The NEAR_PERCENTILE-th percentile of each topic centre's cosine to its nearest other."""
    if len(centres) < 2:
        return 1.0
    similarity = centres @ centres.T
    np.fill_diagonal(similarity, -1.0)
    return float(np.percentile(similarity.max(axis=1), NEAR_PERCENTILE))


def joined_groups(topics: np.ndarray, centres: np.ndarray, threshold: float) -> np.ndarray:
    """The pool's groups with those whose centres are near each other (cosine >= threshold,
    linked in chains) joined: parts of one area that the pool's small HDBSCAN sizes cut apart
    are one topic, as they would be beside the existing ones."""
    from scipy.sparse.csgraph import connected_components

    ids = np.array(sorted(set(topics.tolist()) - {-1}))
    if len(ids) < 2:
        return topics
    _, component = connected_components(centres @ centres.T >= threshold, directed=False)
    lookup = {int(t): int(ids[component == component[i]].min()) for i, t in enumerate(ids)}
    return np.array([lookup.get(int(t), -1) for t in topics], dtype=np.int32)


def _nothing(rows: np.ndarray, why: str, *args) -> Emergence:
    log.info("no new topic: " + why, *args)
    n = len(rows)
    zeros = np.zeros(n, dtype=np.float32)
    return Emergence(rows, np.full(n, -1, np.int32), zeros, zeros, np.zeros((n, 2)), [])


def find_topics(
    vectors: np.ndarray,
    rows: np.ndarray,
    settings: ClusterConfig,
    centres: np.ndarray,
    next_number: int,
    smallest: int,
) -> Emergence:
    """Pure core: the new topics among the pool `rows` of `vectors` (in the order given),
    clustered with `settings` (groups whose centres are near each other joined), each kept when
    it has `smallest` papers (the build's min_cluster_size) and its centre is not near any of
    `centres` (the existing topics'); numbered from `next_number`, the largest first."""
    if len(rows) < max(MIN_PAPERS_TO_CLUSTER, smallest):
        return _nothing(rows, "%d new or unassigned papers, too few to cluster", len(rows))
    fit = fit_topics(vectors[rows], settings)
    if fit.raw_outlier.all():
        return _nothing(rows, "the %d new or unassigned papers are too spread to group", len(rows))
    threshold = near_threshold(centres)
    _, parts = weighted_centroids(vectors[rows], fit.topics, fit.weights)
    groups = joined_groups(fit.topics, parts, threshold)
    ids, group_centres = weighted_centroids(vectors[rows], groups, fit.weights)
    sizes = pd.Series(groups[groups >= 0]).value_counts()
    nearest = (group_centres @ centres.T).max(axis=1) if len(centres) else np.zeros(len(ids))
    log.info(
        "pool of %d new or unassigned papers: %d groups (%d before joining near ones); near an "
        "existing topic above cosine %.3f (the %d-th percentile of the %d topics' similarity "
        "to their nearest)",
        len(rows),
        len(ids),
        len(parts),
        threshold,
        NEAR_PERCENTILE,
        len(centres),
    )
    kept = []
    for group, close in zip(ids.tolist(), nearest.tolist(), strict=True):
        size = int(sizes.get(group, 0))
        verdict = "a new topic"
        if size < smallest:
            verdict = f"fewer than {smallest} papers: left as placed"
        elif close >= threshold:
            verdict = "near an existing topic: left as placed"
        else:
            kept.append(group)
        log.info("  group of %d papers, nearest topic at cosine %.3f: %s", size, close, verdict)
    order = sorted(kept, key=lambda g: (-sizes[g], g))
    renumber = {g: next_number + i for i, g in enumerate(order)}
    topics = np.array([renumber.get(int(t), -1) for t in groups], dtype=np.int32)
    position = {g: i for i, g in enumerate(ids.tolist())}
    own = group_centres[[position.get(int(t), 0) for t in groups]]
    similarity = np.where(topics >= 0, np.einsum("nd,nd->n", vectors[rows], own), 0.0)
    return Emergence(
        rows,
        topics,
        fit.weights,
        similarity.astype(np.float32),
        fit.coords,
        sorted(renumber.values()),
    )


def positions(emergence: Emergence, placed: np.ndarray, model_coords: np.ndarray, model_topics):
    """Map positions of the papers of the new topics: each topic drawn as its own island, the
    pool map's layout of its papers scaled to the model's typical topic spread and centred where
    placing put its papers (among their nearest fitted papers)."""
    spreads = [
        np.linalg.norm(
            model_coords[model_topics == t] - model_coords[model_topics == t].mean(0), axis=1
        ).mean()
        for t in np.unique(model_topics[model_topics >= 0])
    ]
    spread = float(np.median(spreads)) if spreads else 1.0
    coords = placed.astype(np.float32).copy()
    for number in emergence.numbers:
        members = emergence.topics == number
        local = emergence.layout[members] - emergence.layout[members].mean(axis=0)
        scale = np.linalg.norm(local, axis=1).mean()
        local = local * (spread / scale if scale > 0 else 0.0)
        coords[members] = placed[members].mean(axis=0) + local
    return coords


def extended_model(model, emergence: Emergence, doc_ids: np.ndarray, vectors, coords):
    """The model with the new topics' papers: those it held change topic, the others join it
    (with their weights, positions and vectors)."""
    members = emergence.topics >= 0
    index = {d: i for i, d in enumerate(model.doc_ids)}
    topics, weights = model.topics.copy(), model.weights.copy()
    add = []
    for k in np.flatnonzero(members):
        doc_id = doc_ids[emergence.rows[k]]
        if doc_id in index:
            topics[index[doc_id]] = emergence.topics[k]
            weights[index[doc_id]] = emergence.weights[k]
        else:
            add.append(k)
    add = np.asarray(add, dtype=np.int64)
    return dataclasses.replace(
        model,
        doc_ids=[*model.doc_ids, *(str(doc_ids[emergence.rows[k]]) for k in add)],
        topics=np.concatenate([topics, emergence.topics[add]]).astype(np.int32),
        coords=np.vstack([model.coords, coords[add]]).astype(np.float32),
        weights=np.concatenate([weights, emergence.weights[add]]).astype(np.float32),
        vectors=np.vstack([model.vectors, vectors[emergence.rows[add]]]).astype(np.float32),
        registry=None,
    )

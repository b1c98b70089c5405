"""New topics without a refit: the papers added since the fit and the build's papers left
unassigned, clustered among themselves with the build's UMAP and HDBSCAN settings, their
"auto" sizes taken for the pool's own count (the pool is no sample of the corpus: scaled as a
sample fit scales them, HDBSCAN cut the SIGGRAPH Asia pool into groups of 6 papers and more,
far under the size a topic is kept at, and 78.2% of those papers landed in new topics against
81.0%; docs/benchmarks.md). Groups whose centres are nearer to each
other than to any existing topic's are joined; a group of at least the build's min_cluster_size
papers, most of whose papers stand apart from the existing topics' papers, becomes a topic with
the next number. The pool's papers are then settled among the existing and the new topics'
centres by placing's rule; the others keep what placing gave them (a topic, or none), and the
log says why (novelty.py: the rules and why each is measured on the corpus).

The earlier rule, a group's centre within the 95th percentile of the existing topics' cosines
to their nearest other topic (near_threshold, still logged), called graphics groups about
neural fields and shape "near" the ML topic of point clouds and shapes (cosine 0.87-0.94): it
cannot tell a new field beside a topic from a duplicate of it; where the group's papers find
their nearest neighbours can.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.centroids import weighted_centroids
from pipeline.config import ClusterConfig
from pipeline.stages.cluster import novelty
from pipeline.stages.cluster.fit import MIN_PAPERS_TO_CLUSTER, fit_topics

log = logging.getLogger("pipeline.cluster")

NEAR_PERCENTILE = 95


@dataclass(frozen=True)
class Emergence:
    """The new topics: `numbers` (largest first), and per pool paper (rows of the build's
    papers, `rows`) its new topic or -1, its weight in that topic's centre (1: a new topic's
    centre is the plain mean of its papers), its similarity to it, and its layout in the pool's
    own map (n, 2)."""

    rows: np.ndarray
    topics: np.ndarray
    weights: np.ndarray
    similarity: np.ndarray
    layout: np.ndarray
    numbers: list[int]


@dataclass(frozen=True)
class Existing:
    """What the pool is judged against: the existing topics' unit centres, the vectors of
    their fitted papers, and the similarity below which a paper joins no topic."""

    centres: np.ndarray
    papers: np.ndarray
    outlier_threshold: float


def near_threshold(centres: np.ndarray) -> float:
    """The NEAR_PERCENTILE-th percentile of each topic centre's cosine to its nearest other
    (logged beside the groups' nearest cosines: how near the fit keeps its own topics)."""
    if len(centres) < 2:
        return 1.0
    similarity = centres @ centres.T
    np.fill_diagonal(similarity, -1.0)
    return float(np.percentile(similarity.max(axis=1), NEAR_PERCENTILE))


def _nothing(rows: np.ndarray, why: str, *args) -> Emergence:
    log.info("no new topic: " + why, *args)
    n = len(rows)
    zeros = np.zeros(n, dtype=np.float32)
    return Emergence(rows, np.full(n, -1, np.int32), zeros, zeros, np.zeros((n, 2)), [])


def _nearest(centres: np.ndarray, existing: np.ndarray) -> np.ndarray:
    return (centres @ existing.T).max(axis=1) if len(existing) else np.zeros(len(centres))


def judged(pool, groups, weights, existing: Existing, alone, smallest: int) -> list[int]:
    """The groups that become topics: `smallest` papers or more, most of them apart from the
    existing topics' papers (`alone`: novelty.apart per pool paper); each group logged with its
    verdict."""
    ids, centres = weighted_centroids(pool, groups, weights)
    nearest = _nearest(centres, existing.centres)
    kept = []
    for group, close in zip(ids.tolist(), nearest.tolist(), strict=True):
        members = groups == group
        size, share = int(members.sum()), float(alone[members].mean())
        verdict = "a new topic"
        if size < smallest:
            verdict = f"fewer than {smallest} papers: left as placed"
        elif share <= 0.5:
            verdict = "most papers nearer to existing topics' papers: left as placed"
        else:
            kept.append(group)
        log.info(
            "  group of %d papers, nearest topic at cosine %.3f, %.0f%% of its papers apart: %s",
            size,
            close,
            100 * share,
            verdict,
        )
    return kept


def find_topics(
    vectors: np.ndarray,
    rows: np.ndarray,
    settings: ClusterConfig,
    existing: Existing,
    next_number: int,
    smallest: int,
) -> Emergence:
    """Pure core: the new topics among the pool `rows` of `vectors` (in the order given),
    clustered with `settings`, linked groups joined, each kept when it has `smallest` papers
    (the build's min_cluster_size) and most of its papers stand apart from the `existing`
    topics' papers; the pool then settled among old and new centres; numbered from
    `next_number`, the largest first."""
    if len(rows) < max(MIN_PAPERS_TO_CLUSTER, smallest):
        return _nothing(rows, "%d new or unassigned papers, too few to cluster", len(rows))
    pool = vectors[rows]
    alone = novelty.apart(pool, existing.papers)
    if 2 * int(alone.sum()) <= smallest:
        # a topic needs `smallest` papers, over half of them apart: with this few apart no
        # grouping can give one, so the pool is not clustered (UMAP and HDBSCAN not even loaded)
        return _nothing(
            rows,
            "%d of the %d new or unassigned papers stand apart from the existing topics' papers, "
            "too few for a topic of %d papers most of which do",
            int(alone.sum()),
            len(rows),
            smallest,
        )
    fit = fit_topics(pool, settings)
    if fit.raw_outlier.all():
        return _nothing(rows, "the %d new or unassigned papers are too spread to group", len(rows))
    _, parts = weighted_centroids(pool, fit.topics, fit.weights)
    groups = novelty.linked_groups(fit.topics, parts, _nearest(parts, existing.centres))
    log.info(
        "pool of %d new or unassigned papers: %d groups (%d before joining those nearer each "
        "other than any existing topic); the %d topics' nearest other topic is within cosine "
        "%.3f for %d%% of them",
        len(rows),
        len(set(groups.tolist()) - {-1}),
        len(parts),
        len(existing.centres),
        near_threshold(existing.centres),
        NEAR_PERCENTILE,
    )
    kept = judged(pool, groups, fit.weights, existing, alone, smallest)
    start = np.where(np.isin(groups, kept), groups, -1)
    topics = novelty.settled(pool, start, existing.centres, existing.outlier_threshold, smallest)
    return _numbered(pool, rows, topics, start, fit.coords, next_number)


def _numbered(pool, rows, topics, start, layout, next_number: int) -> Emergence:
    """The settled new topics numbered from `next_number`, the largest first (logged)."""
    sizes = pd.Series(topics[topics >= 0]).value_counts()
    order = sorted(sizes.index, key=lambda g: (-sizes[g], g))
    renumber = {int(g): next_number + i for i, g in enumerate(order)}
    numbered = np.array([renumber.get(int(t), -1) for t in topics], dtype=np.int32)
    ids, centres = weighted_centroids(pool, numbered, np.ones(len(pool)))
    position = {int(t): i for i, t in enumerate(ids.tolist())}
    own = centres[[position.get(int(t), 0) for t in numbered]] if len(ids) else pool * 0
    similarity = np.where(numbered >= 0, np.einsum("nd,nd->n", pool, own), 0.0)
    if len(order) or (start >= 0).any():
        log.info(
            "settled among the existing and the new topics' centres: %d papers in new topics "
            "(%d joined, %d of the groups' papers nearer an existing topic); %d groups dropped "
            "under the smallest size",
            int((topics >= 0).sum()),
            int(((topics >= 0) & (start < 0)).sum()),
            int(((topics < 0) & (start >= 0)).sum()),
            len(set(start.tolist()) - {-1}) - len(order),
        )
    return Emergence(
        rows,
        numbered,
        (numbered >= 0).astype(np.float32),
        similarity.astype(np.float32),
        layout,
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

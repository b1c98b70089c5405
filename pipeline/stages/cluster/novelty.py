"""The rules that tell a new area among the pool (emerge.py) from papers of the existing topics,
each measured on the corpus rather than set by a constant:

- a pool paper stands apart when its nearest pool papers are more similar to it than its
  nearest papers of the existing topics (the mean cosine of NEIGHBOURS each); a group is new
  when most of its papers stand apart. Papers of the existing topics' fields find closer
  neighbours among the many fitted papers than among the few new ones; papers of a field the
  fit never saw find theirs among each other, however near their centre lies to a topic's;
- the pool's groups are linked when their centres are more similar to each other than either
  is to any existing topic's centre (parts of one area that the pool's small HDBSCAN sizes cut
  apart, judged whole);
- once topics are born, the pool's papers are settled by the rule placing uses, the topic whose
  centre is most similar (none below the outlier threshold), among the existing and the new
  topics' centres, in rounds until none moves: fragments and new papers that placing put in an
  existing topic join the new topic they are nearest to, and a new topic's centre is the plain
  mean of its papers. Earlier papers that had no topic may join a new topic, never an old one.
"""

from __future__ import annotations

import numpy as np

from pipeline.centroids import weighted_centroids
from pipeline.neighbours import nearest_neighbours, neighbours_among
from pipeline.stages.cluster.place import LAYOUT_NEIGHBOURS

NEIGHBOURS = LAYOUT_NEIGHBOURS  # the fitted papers a new paper is drawn among
SETTLE_ROUNDS = 50  # rounds at most (4-6 on the 601 papers of the SIGGRAPH Asia pool)


def apart(pool: np.ndarray, fitted: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """Per pool paper: whether its k nearest other pool papers are on average more similar to
    it than its k nearest `fitted` papers (the existing topics' papers)."""
    if len(pool) < 2:
        return np.zeros(len(pool), dtype=bool)
    if not len(fitted):
        return np.ones(len(pool), dtype=bool)
    _, among_pool = nearest_neighbours(pool, k)
    _, among_fitted = neighbours_among(pool, fitted, k)
    return among_pool.mean(axis=1) > among_fitted.mean(axis=1)


def linked_groups(topics: np.ndarray, parts: np.ndarray, nearest: np.ndarray) -> np.ndarray:
    """The pool's groups (`topics`, -1 none; `parts`: their unit centres in id order) with each
    two linked, in chains, whose centres are more similar to each other than either is to its
    nearest existing topic (`nearest`: that cosine per group), numbered by their lowest id."""
    from scipy.sparse.csgraph import connected_components

    ids = np.array(sorted(set(topics.tolist()) - {-1}))
    if len(ids) < 2:
        return topics
    linked = parts @ parts.T > np.maximum(nearest[:, None], nearest[None, :])
    _, component = connected_components(linked, directed=False)
    lookup = {int(t): int(ids[component == component[i]].min()) for i, t in enumerate(ids)}
    return np.array([lookup.get(int(t), -1) for t in topics], dtype=np.int32)


def settle_round(
    pool: np.ndarray,
    topics: np.ndarray,
    centres: np.ndarray,
    threshold: float,
) -> np.ndarray:
    """One round: each pool paper in the new topic (of those in `topics`, -1 none) whose centre
    is most similar among the new and the existing (`centres`) ones, at `threshold` or more;
    -1 where an existing topic's is or none is close: the paper keeps what placing gave it (an
    earlier paper, one the fit left unassigned, stays so)."""
    ids, new_centres = weighted_centroids(pool, topics, np.ones(len(pool)))
    if not len(ids):
        return topics
    to_new = pool @ new_centres.T
    best_new = to_new.max(axis=1)
    best_old = (pool @ centres.T).max(axis=1) if len(centres) else np.full(len(pool), -1.0)
    joins = (best_new >= threshold) & (best_new > best_old)
    return np.where(joins, ids[to_new.argmax(axis=1)], -1).astype(np.int32)


def settled(
    pool: np.ndarray,
    topics: np.ndarray,
    centres: np.ndarray,
    threshold: float,
    smallest: int,
) -> np.ndarray:
    """The new topics (`topics`: -1 for the papers in none) after settle rounds until no paper
    moves; a new topic left with fewer than `smallest` papers is dropped (the smallest first)
    and the rounds go on without it."""
    topics = topics.astype(np.int32)
    while True:
        for _ in range(SETTLE_ROUNDS):
            moved = settle_round(pool, topics, centres, threshold)
            if np.array_equal(moved, topics):
                break
            topics = moved
        ids, sizes = np.unique(topics[topics >= 0], return_counts=True)
        if not len(ids) or sizes.min() >= smallest:
            return topics
        topics = np.where(topics == ids[sizes.argmin()], -1, topics).astype(np.int32)

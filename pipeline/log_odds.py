"""The weighted log-odds ratio with an informative Dirichlet prior (Monroe, Colaresi and Quinn
2008, "Fightin' Words"), as a z-score per cell of a count table: the one test of the pages'
"over- or under-represented" (compare's venues, and venues year by year) and of the report's
topics grown or shrunk between builds (render's changes.py)."""

from __future__ import annotations

import numpy as np


def log_odds_z(counts: np.ndarray, prior_scale: float) -> np.ndarray:
    """z-score per cell of a (groups x venues) count table: the group's log-odds at the venue
    against its log-odds at every other venue together. NaN where there is one venue."""
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or counts.shape[1] < 2 or counts.sum() == 0:
        return np.full(counts.shape, np.nan)
    group_total = counts.sum(axis=1, keepdims=True)
    venue_total = counts.sum(axis=0, keepdims=True)
    prior = prior_scale * group_total  # mean: the corpus share; weight: prior_scale * papers
    prior_total = prior.sum()
    here, there = counts, group_total - counts
    with np.errstate(divide="ignore", invalid="ignore"):  # empty groups: masked below
        odds_here = (here + prior) / (venue_total + prior_total - here - prior)
        odds_there = (there + prior) / (counts.sum() - venue_total + prior_total - there - prior)
        delta = np.log(odds_here) - np.log(odds_there)
        z = delta / np.sqrt(1 / (here + prior) + 1 / (there + prior))
    return np.where(group_total > 0, z, 0.0)

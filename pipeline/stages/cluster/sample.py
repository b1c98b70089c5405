"""The papers a large corpus is fitted on: a sample of `size`, stratified by venue and year
(each group in proportion to its papers), the same sample for the same papers whatever their
order (within a group, the papers whose doc_id hashes lowest)."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd


def stratified_sample(documents: pd.DataFrame, size: int) -> np.ndarray:
    """Row positions of the sampled papers, in documents' order (all rows when size >= n)."""
    n = len(documents)
    if size >= n:
        return np.arange(n)
    groups = documents["venue"].astype(str) + "\x00" + documents["year"].astype("string").fillna("")
    counts = groups.value_counts().sort_index()
    exact = counts * size / n
    quota = np.floor(exact).astype(int)
    # largest remainders take the papers left over (ties: the group that sorts first)
    left = size - int(quota.sum())
    order = sorted(counts.index, key=lambda g: (-(exact[g] - quota[g]), g))
    for group in order[:left]:
        quota[group] += 1
    rank = documents["doc_id"].map(lambda d: hashlib.sha256(str(d).encode()).hexdigest())
    chosen = []
    for group, take in quota.items():
        members = np.flatnonzero((groups == group).to_numpy())
        members = members[np.argsort(rank.to_numpy()[members], kind="stable")]
        chosen.append(members[:take])
    return np.sort(np.concatenate(chosen)) if chosen else np.arange(0)

"""Topic identity across a refit: the new fit's clusters matched to the old topics by the papers
they share, and each transition typed as cluster-evolution work types them (MONIC).

On the papers both fits hold, in a topic in each: a new cluster sharing Jaccard >= SURVIVE with
an old topic (one-to-one: the Hungarian matching of the shared-paper counts) keeps its number; an
old topic whose papers spread over several new clusters each holding >= SPLIT_PART of it is
split (its parts without a number are new, with it as parent), and otherwise its largest child
keeps the number if it holds >= KEEP_PART of it (an old topic whose largest part, >= KEEP_PART,
went to one cluster with no number yet passes its number on the same way); a cluster holding
>= KEEP_PART of several old topics is their merge and keeps the largest's number (one that kept
an old topic's number by Jaccard keeps it); clusters left get new numbers, old topics left are
retired, and every old topic's successors are the numbers its papers went to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

SURVIVE = 0.5  # Jaccard of shared papers for a cluster to be the same topic
SPLIT_PART = 0.3  # of an old topic's papers, for a cluster to be one of its parts
KEEP_PART = 0.5  # of an old topic's papers, for a cluster to inherit its number


@dataclass(frozen=True)
class Transitions:
    """What became of each old topic and where each new cluster's number came from.

    numbers: new cluster -> its registry number; kind: old topic -> "survived", "split",
    "merged" or "retired"; made: new cluster -> "survived", "split", "merged" or "new";
    parents: new cluster -> the old topics it came from; successors: old topic -> the numbers
    its papers went to (largest share first)."""

    numbers: dict[int, int]
    kind: dict[int, str]
    made: dict[int, str]
    parents: dict[int, list[int]] = field(default_factory=dict)
    successors: dict[int, list[int]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        made = pd.Series(list(self.made.values()), dtype=object).value_counts()
        kind = pd.Series(list(self.kind.values()), dtype=object).value_counts()
        return {
            "survived": int(kind.get("survived", 0)),
            "split": int(kind.get("split", 0)),
            "merged": int(kind.get("merged", 0)),
            "retired": int(kind.get("retired", 0)),
            "new": int(made.get("new", 0)),
        }


def shared_counts(old: np.ndarray, new: np.ndarray) -> pd.DataFrame:
    """Papers per (old topic, new cluster), over the papers in a topic in both (-1 left out)."""
    both = (old >= 0) & (new >= 0)
    return pd.crosstab(pd.Series(old[both], name="old"), pd.Series(new[both], name="new"))


def best_one_to_one(counts: pd.DataFrame) -> list[tuple[int, int]]:
    """The one-to-one (old, new) pairs that keep the most shared papers (Hungarian)."""
    from scipy.optimize import linear_sum_assignment

    if counts.empty:
        return []
    rows, cols = linear_sum_assignment(counts.to_numpy(), maximize=True)
    matrix = counts.to_numpy()
    return [
        (int(counts.index[r]), int(counts.columns[c]))
        for r, c in zip(rows, cols, strict=True)
        if matrix[r, c] > 0
    ]


def _splits_and_merges(part, old_size, numbers, kind, made, parents) -> None:
    """Type the old topics that did not survive by Jaccard (and splits of those that did),
    and pass numbers on to largest children and merges, in place."""
    survivors = set(kind)
    for o in part.index:
        parts = list(part.columns[part.loc[o] >= SPLIT_PART])
        if len(parts) >= 2:
            kind[o] = "split"
            for n in (n for n in parts if n not in numbers):
                made.setdefault(n, "split")
                parents.setdefault(n, []).append(int(o))
        largest = part.loc[o].idxmax()
        if o in survivors or part.at[o, largest] < KEEP_PART or numbers.get(largest) == o:
            continue
        if largest in numbers:  # into a cluster that kept another old topic's number
            kind[o], made[largest] = "merged", "merged"
            parents[largest] = sorted({*parents.get(largest, []), int(o)})
            continue
        claim = [q for q in part.index if q not in survivors and part.at[q, largest] >= KEEP_PART]
        keep = max(claim, key=lambda q: (old_size[q], -q))
        numbers[largest] = int(keep)
        kind.setdefault(keep, "survived")
        if len(claim) >= 2:  # a merge: the largest old topic's number
            made[largest], parents[largest] = "merged", sorted(int(q) for q in claim)
            for q in claim:
                kind[q] = kind[q] if q == keep else "merged"
        else:
            made.setdefault(largest, "survived")
            parents.setdefault(largest, [int(o)])


def match_topics(old: np.ndarray, new: np.ndarray, next_number: int, clusters=()) -> Transitions:
    """Per paper both fits hold, its old topic number and its new cluster (-1: none): the
    registry number of every new cluster (those of `new` and `clusters`, which may hold only
    new papers) and what became of every old topic. New numbers start at `next_number`, the
    largest new cluster first."""
    counts = shared_counts(old, new)
    old_size = counts.sum(axis=1)
    new_size = counts.sum(axis=0)
    part = counts.div(old_size, axis=0)  # share of each old topic in each new cluster
    numbers, kind, made, parents = {}, {}, {}, {}
    for o, n in best_one_to_one(counts):
        shared = counts.at[o, n]
        if shared / (old_size[o] + new_size[n] - shared) >= SURVIVE:
            numbers[n], kind[o], made[n], parents[n] = o, "survived", "survived", [o]
    _splits_and_merges(part, old_size, numbers, kind, made, parents)
    for o in counts.index:
        kind.setdefault(int(o), "retired")
    fresh = [n for n in new_size.sort_values(ascending=False, kind="stable").index]
    fresh += sorted({*new[new >= 0].tolist(), *clusters} - set(new_size.index))
    for n in fresh:
        if n not in numbers:
            numbers[int(n)], made[int(n)] = next_number, made.get(n, "new")
            next_number += 1
    successors = {
        int(o): [
            numbers[int(n)]
            for n in counts.loc[o].sort_values(ascending=False, kind="stable").index
            if counts.at[o, n] > 0
        ][:3]
        for o in counts.index
    }
    return Transitions(
        {int(k): int(v) for k, v in numbers.items()},
        {int(k): v for k, v in kind.items()},
        {int(k): v for k, v in made.items()},
        {int(k): v for k, v in parents.items()},
        successors,
    )


def kept_share(old: np.ndarray, renumbered: np.ndarray) -> float:
    """Of the papers in a topic before, the share in the topic of the same number after."""
    before = old >= 0
    return float((renumbered[before] == old[before]).mean()) if before.any() else 1.0


def best_kept_share(old: np.ndarray, new: np.ndarray) -> float:
    """The most `kept_share` any one-to-one numbering of the new clusters could give."""
    counts = shared_counts(old, new)
    best = sum(int(counts.at[o, n]) for o, n in best_one_to_one(counts))
    before = int((old >= 0).sum())
    return best / before if before else 1.0

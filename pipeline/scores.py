"""Scores of a topic model, shared by every build's metrics and the BERTopic baseline, so the
two sets of figures are comparable: NPMI coherence and diversity of the topics' top terms, how
papers are assigned (topics, outliers, the largest topic), agreement between runs (adjusted
Rand index), and labels holding stop or filler words."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

TOP_N = 10  # terms per topic scored by NPMI and diversity


def npmi_pair(n_a: int, n_b: int, n_ab: int, n_docs: int) -> float:
    """Normalised PMI of two terms from document counts: -1 (never together) .. 1 (always)."""
    if n_ab == 0:
        return -1.0
    p_a, p_b, p_ab = n_a / n_docs, n_b / n_docs, n_ab / n_docs
    if p_ab >= 1.0:
        return 1.0
    return math.log(p_ab / (p_a * p_b)) / -math.log(p_ab)


def npmi_coherence(
    term_lists: Sequence[Sequence[str]], doc_terms: Sequence[set[str]], top_n: int = TOP_N
) -> list[float]:
    """Mean NPMI over all pairs of each list's first `top_n` terms, counted as co-occurrence in
    the same document. `doc_terms` holds each document's set of terms (from the same tokeniser
    that produced the term lists). NaN for a list with fewer than two terms."""
    wanted = {term for terms in term_lists for term in terms[:top_n]}
    postings: dict[str, set[int]] = {term: set() for term in wanted}
    for i, terms in enumerate(doc_terms):
        for term in wanted & terms:
            postings[term].add(i)
    n_docs = len(doc_terms)
    scores = []
    for terms in term_lists:
        terms = list(dict.fromkeys(terms[:top_n]))
        pairs = [
            npmi_pair(len(postings[a]), len(postings[b]), len(postings[a] & postings[b]), n_docs)
            for i, a in enumerate(terms)
            for b in terms[i + 1 :]
        ]
        scores.append(float(np.mean(pairs)) if pairs else math.nan)
    return scores


def topic_diversity(term_lists: Sequence[Sequence[str]], top_n: int = TOP_N) -> float:
    """Unique terms among every topic's first `top_n` terms, over all of them (1 = no repeats)."""
    terms = [term for terms in term_lists for term in terms[:top_n]]
    return len(set(terms)) / len(terms) if terms else math.nan


def doc_term_sets(texts: Iterable[str], analyzer: Callable[[str], list[str]]) -> list[set[str]]:
    return [set(analyzer(text)) for text in texts]


def assignment_figures(topics: np.ndarray, raw_outlier: np.ndarray | None = None) -> dict:
    """Topic count, outlier shares before reassignment (`raw_outlier`: HDBSCAN left the paper
    out; None: no reassignment, the same as after) and after, and the largest topic's share."""
    topics = np.asarray(topics)
    n = max(len(topics), 1)
    final_outliers = int((topics < 0).sum())
    raw_outliers = final_outliers if raw_outlier is None else int(np.sum(raw_outlier))
    sizes = pd.Series(topics[topics >= 0]).value_counts()
    return {
        "papers": int(len(topics)),
        "topics": int(len(sizes)),
        "outlier_share": raw_outliers / n,
        "unassigned_share": final_outliers / n,
        "largest_topic_share": float(sizes.max() / n) if len(sizes) else 0.0,
    }


def adjusted_rand_agreement(assignments: Sequence[np.ndarray]) -> dict:
    """Adjusted Rand index between every pair of runs (outliers count as one more group)."""
    from sklearn.metrics import adjusted_rand_score

    scores = [
        float(adjusted_rand_score(assignments[i], assignments[j]))
        for i in range(len(assignments))
        for j in range(i + 1, len(assignments))
    ]
    if not scores:
        return {"runs": len(assignments)}
    return {
        "runs": len(assignments),
        "ari_min": min(scores),
        "ari_median": float(np.median(scores)),
    }


def label_faults(labels: Iterable[str], banned: set[str]) -> dict[str, list[str]]:
    """label -> the stop or filler words it contains (labels without any are left out)."""
    faults = {}
    for label in labels:
        words = [w for w in label.lower().replace(",", " ").replace("_", " ").split() if w]
        found = sorted({w for w in words if w in banned})
        if found:
            faults[label] = found
    return faults


def quality_figures(
    topics: np.ndarray,
    raw_outlier: np.ndarray | None,
    term_lists: dict[int, list[str]],
    labels: dict[int, str],
    doc_terms: Sequence[set[str]],
    banned: set[str],
) -> dict:
    """The figures shared by a build and the baseline. `term_lists` and `labels` are keyed by
    topic (the unassigned topic -1 is left out of every figure)."""
    ids = sorted(t for t in term_lists if t >= 0)
    npmi = npmi_coherence([term_lists[t] for t in ids], doc_terms)
    finite = [v for v in npmi if not math.isnan(v)]
    named = [labels[t] for t in ids if t in labels]
    return {
        **assignment_figures(topics, raw_outlier),
        "npmi_mean": float(np.mean(finite)) if finite else None,
        "topic_diversity": _finite(topic_diversity([term_lists[t] for t in ids])),
        "labels_unique": len(set(named)) == len(named),
        "labels_with_stop_or_filler_words": len(label_faults(named, banned)),
        "npmi_by_topic": [
            {"topic": t, "label": labels.get(t, ""), "npmi": _finite(v)}
            for t, v in zip(ids, npmi, strict=True)
        ],
    }


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)

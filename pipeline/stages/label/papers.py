"""A topic's papers as the label stage reads them: their titles (counted again: titles name a
paper's subject) and the papers nearest its centre (its representative papers)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.centroids import topic_centroids
from pipeline.text import clean_for_terms


def title_texts(merged: pd.DataFrame) -> list[str]:
    """Each paper's title as terms are counted in it ('' where it has none)."""
    return [clean_for_terms(t) if isinstance(t, str) else "" for t in merged["title"]]


def representative_docs(
    doc_ids: np.ndarray, vectors: np.ndarray, topics: np.ndarray, n: int
) -> dict[int, list[str]]:
    """topic -> the doc_ids of its `n` papers nearest its mean embedding (ties: lower doc_id)."""
    ids, centroids = topic_centroids(vectors, topics)
    chosen = {}
    for topic, centre in zip(ids, centroids, strict=True):
        members = np.flatnonzero(topics == topic)
        similarity = vectors[members] @ centre
        order = np.lexsort((doc_ids[members], -similarity))[:n]
        chosen[int(topic)] = [str(d) for d in doc_ids[members[order]]]
    return chosen

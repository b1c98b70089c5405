"""A topic's papers as the label stage reads them: their titles (counted again: titles name a
paper's subject) and the papers nearest its centre (its representative papers); and the topics
table's rows made from what the stage found."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline import schemas
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


def topic_rows(
    ids: list[int],
    labels: dict,
    weighted: dict[int, list[tuple[str, float]]],
    representatives: dict[int, list[str]],
    themes: dict[int, int] | None = None,
) -> pd.DataFrame:
    """The topics table's rows of `ids`: each one's Label (`labels`; the unassigned papers'
    label where it has none), weighted terms, representative papers and theme (-1 without);
    sizes are set later (`sized`)."""
    themes = themes or {}
    rows = [
        {
            "topic": topic,
            "label": labels[topic].text if topic in labels else schemas.UNASSIGNED_LABEL,
            "terms": [term for term, _ in weighted.get(topic, [])],
            "term_weights": [weight for _, weight in weighted.get(topic, [])],
            "size": 0,
            "theme": themes.get(topic, schemas.UNASSIGNED),
            "representative_docs": representatives.get(topic, []),
        }
        for topic in ids
    ]
    return pd.DataFrame(rows, columns=schemas.TOPICS.columns)

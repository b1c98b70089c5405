"""The tables the compare stage reads, for papers at given venues."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import schemas, tables


def compare_inputs(venues: list[str]):
    """(documents, clusters, topics, themes) of papers at `venues`, with the columns compare
    reads: topics -1, 0, 1 in turn; topics 0 and 1 in theme 0."""
    n = len(venues)
    documents = pd.DataFrame(
        {"doc_id": [f"d{i}" for i in range(n)], "venue": venues, "abstract": ["text"] * n}
    )
    topics_of = [i % 3 - 1 for i in range(n)]  # -1, 0, 1, -1, 0, 1, ...
    clusters = pd.DataFrame({"doc_id": documents["doc_id"], "topic": topics_of})
    topics = pd.DataFrame(
        {"topic": [-1, 0, 1], "label": ["Unassigned", "graphs", "transport"], "theme": [-1, 0, 0]}
    )
    themes = pd.DataFrame({"theme": [0, -1], "label": ["maths", "Unassigned"]})
    return documents, clusters, topics, themes


def write_compare_inputs(folder: Path, venues: list[str]) -> dict[str, Path]:
    """compare_inputs(venues) written with every column of their schemas: name -> path."""
    documents, clusters, topics, themes = compare_inputs(venues)
    n = len(documents)
    documents = documents.assign(
        year=pd.array([2025] * n, dtype="Int32"), title=None, source="s", source_id=None, url=None,
        conference=documents["venue"], track="",
    )  # fmt: skip
    clusters = clusters.assign(
        x=np.float32(0), y=np.float32(0), raw_outlier=False, placed="fit", similarity=np.float32(1)
    )
    topics = topics.assign(
        terms=[["a"]] * 3,
        term_weights=[[0.1]] * 3,
        size=[(clusters["topic"] == t).sum() for t in (-1, 0, 1)],
    )
    topics["representative_docs"] = [[]] * 3
    themes = themes.assign(terms=[["a"], ["b"]], size=[topics["size"][1:].sum(), topics["size"][0]])
    themes["topics"] = [[0, 1], [-1]]
    paths = {}
    for name, frame in dict(
        documents=documents, clusters=clusters, topics=topics, themes=themes
    ).items():
        paths[name] = folder / f"{name}.parquet"
        tables.write_table(frame, paths[name], getattr(schemas, name.upper()))
    return paths

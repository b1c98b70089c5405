"""The tables the compare stage reads, for papers at given venues."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.support import tables as make
from tests.support.build_folder import write_build


def compare_inputs(venues: list[str], years=2025) -> tuple[pd.DataFrame, ...]:
    """(documents, clusters, topics, themes) of papers d0, d1, ... at `venues` of `years` (one for
    all or one each, None: undated): topics -1, 0, 1 in turn; topics 0 and 1 in theme 0."""
    n = len(venues)
    ids = [f"d{i}" for i in range(n)]
    documents = make.documents(["text"] * n, doc_ids=ids, venues=venues, years=years)
    topic_of = [i % 3 - 1 for i in range(n)]  # -1, 0, 1, -1, 0, 1, ...
    clusters = make.clusters(documents["doc_id"], topic_of, raw_outlier=False)
    topics = make.topics(
        [-1, 0, 1],
        labels=["Unassigned", "graphs", "transport"],
        terms=[["a"]] * 3,
        sizes=[topic_of.count(t) for t in (-1, 0, 1)],
        themes=[-1, 0, 0],
    )
    themes = make.themes_of(topics, labels={0: "maths"}, terms={0: ["a"], -1: ["b"]})
    return documents, clusters, topics, themes


def write_compare_inputs(folder: Path, venues: list[str]) -> dict[str, Path]:
    """compare_inputs(venues) written to `folder` as one build (build_folder.write_build):
    name -> path."""
    frames = dict(
        zip(("documents", "clusters", "topics", "themes"), compare_inputs(venues), strict=True)
    )
    return write_build(folder, **frames)

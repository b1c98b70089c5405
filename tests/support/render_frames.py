"""Tiny stage tables for the render tests: five papers in two topics and the unassigned group,
every table as its stage writes it (venue_topics and metrics from those stages' own cores)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from pipeline.config import CompareConfig, RenderConfig
from pipeline.stages import compare, metrics
from pipeline.stages.render import render_pages

ISLAND = r'<script type="application/json" id="{}">(.*?)</script>'


def embeddings(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    vectors = np.random.default_rng(seed).normal(size=(n, 8)).astype(np.float32)
    return [f"p{i}" for i in range(n)], vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def documents_of(venues, titles, abstracts) -> pd.DataFrame:
    """A documents table of main-conference papers of 2025, ids p0, p1, ..."""
    n = len(venues)
    return pd.DataFrame(
        {
            "doc_id": [f"p{i}" for i in range(n)],
            "venue": venues,
            "conference": venues,
            "track": [""] * n,
            "year": np.array([2025] * n, dtype=np.int32),
            "title": pd.Series(titles, dtype=object),
            "abstract": abstracts,
            "source": ["a.txt"] * n,
            "source_id": pd.Series([None] * n, dtype=object),
            "url": pd.Series([None] * n, dtype=object),
        }
    )


def tiny_tables(titles=None, abstracts=None, venues=None, grouped=False) -> dict:
    """Five papers in two topics and the unassigned group, every table as its stage writes it.
    `grouped`: both topics in one theme (a theme level); else each topic is its own theme."""
    venues = venues or ["ICML", "ICML", "ICML", "ICLR", "ICLR"]
    n = len(venues)
    titles = titles or ["Sliced Wasserstein", None, "Message passing", "GNN depth", None]
    abstracts = abstracts or [f"Abstract number {i} with a few words in it." for i in range(n)]
    ids = [f"p{i}" for i in range(n)]
    documents = documents_of(venues, titles, abstracts)
    clusters = pd.DataFrame(
        {
            "doc_id": ids[::-1],
            "topic": np.array([-1, 1, 0, 0, 1][::-1], dtype=np.int32),
            "x": np.array([0.0, 1.0, 2.0, 10.0, 4.0], dtype=np.float32),
            "y": np.array([0.5, 1.5, 2.5, 3.5, -4.5], dtype=np.float32),
            "raw_outlier": [False, False, False, False, True],
            "placed": "fit",
            "similarity": np.full(5, 0.7, dtype=np.float32),
        }
    )
    topics = pd.DataFrame(
        {
            "topic": np.array([-1, 0, 1], dtype=np.int32),
            "label": ["Unassigned", "optimal transport, wasserstein", "graph, message passing"],
            "terms": [["noise"], ["optimal transport", "wasserstein"], ["graph", "message"]],
            "term_weights": [[0.05], [0.31, 0.12], [0.2, 0.18]],
            "size": np.array([1, 2, 2], dtype=np.int32),
            "theme": np.array([-1, 0, 0 if grouped else 1], dtype=np.int32),
            "representative_docs": [[], ["p2", "p3"], ["p1", "p4"]],
        }
    )
    if grouped:
        themes = [(0, "learning <theory>", 4, [0, 1]), (-1, "Unassigned", 1, [-1])]
    else:
        themes = [(0, topics["label"][1], 2, [0]), (1, topics["label"][2], 2, [1])]
        themes.append((-1, "Unassigned", 1, [-1]))
    themes = pd.DataFrame(
        [
            {"theme": h, "label": lb, "terms": ["x"], "size": s, "topics": t}
            for h, lb, s, t in themes
        ]
    )
    return {
        "documents": documents,
        "embeddings": embeddings(n),
        "clusters": clusters,
        "topics": topics,
        "themes": themes,
        "venue_topics": compare.venue_table(documents, clusters, topics, themes, CompareConfig()),
        "metrics": metrics.build_metrics(documents, clusters, topics, themes),
    }


def rendered(frames: dict, **kwargs) -> dict[str, str]:
    return render_pages(**frames, config=kwargs.pop("config", RenderConfig()), **kwargs)


def island(page: str, name: str):
    match = re.search(ISLAND.format(name), page, flags=re.S)
    assert match, f"page lacks its {name} island"
    return json.loads(match.group(1))

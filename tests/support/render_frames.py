"""Tiny stage tables for the render tests: five papers in two topics and the unassigned group,
every table as its stage writes it (venue_topics and metrics from those stages' own cores)."""

from __future__ import annotations

import json
import re

from pipeline.config import CompareConfig, RenderConfig
from pipeline.stages import compare, metrics
from pipeline.stages.render import History, make_pages
from tests.support import tables as make

ISLAND = r'<script type="application/json" id="{}">(.*?)</script>'
# the clusters table's notes of tiny_tables' papers placed by the model fit-b, fitted on three
NOTES = {"fit_id": "fit-b", "fitted_at": "2026-12-05T08:00:00Z", "papers_at_fit": "3"}


def tiny_tables(titles=None, abstracts=None, venues=None, grouped=False) -> dict:
    """Five papers in two topics and the unassigned group, every table as its stage writes it.
    `grouped`: both topics in one theme (a theme level); else each topic is its own theme."""
    venues = venues or ["ICML", "ICML", "ICML", "ICLR", "ICLR"]
    titles = titles or ["Sliced Wasserstein", None, "Message passing", "GNN depth", None]
    documents = make.documents(abstracts, venues=venues, titles=titles)
    ids = documents["doc_id"].tolist()
    clusters = make.clusters(
        ids[::-1],
        [-1, 1, 0, 0, 1][::-1],
        x=[0.0, 1.0, 2.0, 10.0, 4.0],
        y=[0.5, 1.5, 2.5, 3.5, -4.5],
        raw_outlier=[False, False, False, False, True],
        similarity=0.7,
    )
    topics = make.topics(
        [-1, 0, 1],
        labels=["Unassigned", "optimal transport, wasserstein", "graph, message passing"],
        terms=[["noise"], ["optimal transport", "wasserstein"], ["graph", "message"]],
        term_weights=[[0.05], [0.31, 0.12], [0.2, 0.18]],
        sizes=[1, 2, 2],
        themes=[-1, 0, 0 if grouped else 1],
        representative_docs=[[], ["p2", "p3"], ["p1", "p4"]],
    )
    if grouped:
        themes = make.themes(
            [0, -1],
            labels=["learning <theory>", "Unassigned"],
            terms=[["x"]] * 2,
            sizes=[4, 1],
            topics=[[0, 1], [-1]],
        )
    else:  # each topic its own theme
        labels = topics["label"][[1, 2, 0]]
        themes = make.themes([0, 1, -1], labels=labels, terms=[["x"]] * 3, sizes=[2, 2, 1])
    return {
        "documents": documents,
        "embeddings": make.embeddings(ids),
        "clusters": clusters,
        "topics": topics,
        "themes": themes,
        "venue_topics": compare.make_venue_topics(
            documents, clusters, topics, themes, CompareConfig()
        ),
        "metrics": metrics.make_metrics(documents, clusters, topics, themes),
    }


def rendered(frames: dict, **kwargs) -> dict[str, str]:
    return make_pages(**frames, config=kwargs.pop("config", RenderConfig()), **kwargs)


def island(page: str, name: str):
    match = re.search(ISLAND.format(name), page, flags=re.S)
    assert match, f"page lacks its {name} island"
    return json.loads(match.group(1))


def changed_history() -> History:
    """tiny_tables' history: fitted (fit-b) on three of the papers, two added since; topic 1
    born since, topic 7 retired with its papers now in topic 1."""
    registry = make.registry(
        [
            {"topic": 0, "made_in": "fit-a", "changed_in": "fit-a"},
            {"topic": 1, "made": "emerged", "made_in": "fit-b", "changed_in": "fit-b"},
            {"topic": 7, "status": "retired", "change": "retired", "successors": [1],
             "label": "an old topic"},
        ]
    )  # fmt: skip
    snapshots = make.snapshots("fit", {-1: 1, 0: 2})
    return History(notes=NOTES, registry=registry, snapshots=snapshots)

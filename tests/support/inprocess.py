"""The real stage cores run in this process on a small corpus, for tests that need every table
the render stage reads (made by the stages that own them, never by hand)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.config import ClusterConfig, CompareConfig, LabelConfig, RenderConfig
from pipeline.stages import compare, label, metrics, render
from pipeline.stages.cluster import make_clusters
from tests.support import tables as make


def unit_vectors(n: int, identical: bool = False, width: int = 384) -> np.ndarray:
    rng = np.random.default_rng(n)
    vectors = rng.normal(size=(1 if identical else n, width))
    vectors = np.repeat(vectors, n, axis=0) if identical else vectors
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def clusters_for(documents: pd.DataFrame, vectors: np.ndarray, topics_of=None) -> pd.DataFrame:
    """The cluster stage's table: its real core, or the given topic per paper (no UMAP)."""
    doc_ids = documents["doc_id"].tolist()
    if topics_of is None:
        return make_clusters(documents, vectors, ClusterConfig(), "test encoder").clusters
    n = len(doc_ids)
    x, y = np.linspace(0, 1, n), np.linspace(1, 0, n)
    return make.clusters(doc_ids, topics_of, x=x, y=y)


def pages_for(
    documents: pd.DataFrame,
    vectors: np.ndarray,
    topics_of=None,
    ctfidf: bool = True,
    config: RenderConfig | None = None,
) -> dict[str, str]:
    """{file name: html} of the report and the map, every table made by its own stage."""
    clusters = clusters_for(documents, vectors, topics_of)
    label_config = LabelConfig(representation="ctfidf" if ctfidf else "keybert_mmr")
    topics, themes = label.make_topics(documents, clusters, vectors, label_config)
    venue_topics = compare.make_venue_topics(documents, clusters, topics, themes, CompareConfig())
    figures = metrics.make_metrics(documents, clusters, topics, themes)
    return render.make_pages(
        documents,
        (documents["doc_id"].tolist(), vectors),
        clusters,
        topics,
        themes,
        venue_topics,
        figures,
        config or RenderConfig(),
    )

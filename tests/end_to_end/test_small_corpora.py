"""Tiny and odd corpora (1, 2, 9, 10 papers, identical vectors, identical abstracts) run
through the real cluster, label, compare, metrics and render cores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.config import IngestConfig
from pipeline.stages import ingest
from tests.support.ingest_samples import A1
from tests.support.inprocess import clusters_for, pages_for, unit_vectors

# ---------------------------------------------------------------- tiny and odd corpora


def _documents(abstracts: list[str]) -> pd.DataFrame:
    n = len(abstracts)
    records = [
        ingest.RawRecord(source=f"s:{i}", abstract=a, venue="ICML 2025")
        for i, a in enumerate(abstracts)
    ]
    docs, _ = ingest.make_documents(records, IngestConfig())
    assert len(docs) == len(set(a.lower() for a in abstracts)) <= n
    return docs


WORDS = "graph transport policy protein diffusion kernel bandit token sparse causal".split()


UMAP = pytest.mark.slow  # 8 papers and more are clustered with UMAP + HDBSCAN


@pytest.mark.parametrize(
    ("n", "identical_vectors"),
    [
        pytest.param(1, False, id="1"),
        pytest.param(2, False, id="2"),
        pytest.param(9, False, id="9", marks=UMAP),
        pytest.param(10, False, id="10", marks=UMAP),
        pytest.param(10, True, id="10-identical-vectors", marks=UMAP),
    ],
)
def test_tiny_corpus_runs_through_cluster_label_render(n, identical_vectors):
    abstracts = [
        f"Paper {i} studies {WORDS[i % 10]} methods for {WORDS[(i * 3) % 10]} data."
        for i in range(n)
    ]
    docs = _documents(abstracts)
    vectors = unit_vectors(n, identical_vectors)
    clusters = clusters_for(docs, vectors)
    pages = pages_for(docs, vectors)
    assert len(clusters) == n and np.isfinite(clusters[["x", "y"]].to_numpy()).all()
    assert clusters["topic"].ge(-1).all()
    assert "topic-map" in pages["map.html"] and f"{n} papers" in pages["index.html"]


def test_all_identical_abstracts_dedup_to_one_paper_that_still_maps():
    docs = _documents([A1] * 5 + [A1.upper()])
    assert len(docs) == 1
    clusters = clusters_for(docs, unit_vectors(1))
    assert list(clusters["topic"]) == [0]
    assert "1 papers (ICML 1)" in pages_for(docs, unit_vectors(1))["index.html"]

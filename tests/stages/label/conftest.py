"""Fixtures of the label stage's tests: a labelled toy corpus and a stand-in embedding model."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline import schemas
from pipeline.config import LabelConfig
from pipeline.stages.label import make_topics
from tests.support import tables as make
from tests.support.label_samples import GRAPHS, OUTLIER, TRANSPORT, unit_vectors


@pytest.fixture(scope="module")
def labelled():
    venues = ["ICML", "ICLR", "ICML", "ICML", "ICLR", "ICLR", "ICML"]
    titles = [None, "Entropic OT barycenters", None, None, None, "Expressive GNNs", None]
    documents = make.documents(TRANSPORT + GRAPHS + OUTLIER, venues=venues, titles=titles)
    # clusters in a different row order than documents: the merge must not depend on it
    clusters = make.clusters(documents["doc_id"].tolist()[::-1], [0, 0, 0, 1, 1, 1, -1][::-1])
    vectors = unit_vectors(len(documents))
    topics, themes = make_topics(documents, clusters, vectors, LabelConfig(), None)
    assert list(topics.columns) == schemas.TOPICS.columns
    assert list(themes.columns) == schemas.THEMES.columns
    return documents, clusters, topics


@pytest.fixture(scope="module")
def hashing_encoder():
    """A BERTopic embedder that embeds a text by hashing its character trigrams."""
    from bertopic.backend import BaseEmbedder

    class Hashing(BaseEmbedder):
        def embed(self, documents, verbose=False):
            out = np.zeros((len(documents), 64), dtype=np.float32)
            for row, text in enumerate(documents):
                for i in range(len(text) - 2):
                    out[row, sum(map(ord, text[i : i + 3])) % 64] += 1
            return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    return Hashing()

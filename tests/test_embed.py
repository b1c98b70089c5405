"""Embed stage: the text embedded per paper and the checks on what the encoder returns.

The real model is never loaded here: a fake encoder stands in for it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.config import EmbedConfig
from pipeline.embed import embed_texts, embedding_texts
from pipeline.errors import PipelineError


class FakeEncoder:
    """Returns a fixed matrix (or one built from the texts) and records how it was called."""

    def __init__(self, make):
        self.make = make
        self.calls: list[tuple[list[str], dict]] = []

    def encode(self, sentences, **kwargs):
        self.calls.append((list(sentences), kwargs))
        return self.make(sentences)


def _unit_rows(n: int, width: int = 384, dtype=np.float64) -> np.ndarray:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, width))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(dtype)


def _documents(titles, abstracts) -> pd.DataFrame:
    n = len(abstracts)
    return pd.DataFrame(
        {
            "doc_id": [f"p{i}" for i in range(n)],
            "venue": ["ICML"] * n,
            "year": [2025] * n,
            # object dtype with None, as tables.read_table returns a nullable string column
            "title": pd.Series(titles, dtype=object),
            "abstract": abstracts,
            "source": ["a.txt"] * n,
            "source_id": pd.Series([None] * n, dtype=object),
            "url": pd.Series([None] * n, dtype=object),
        }
    )


def test_embed_texts_returns_float32_matrix_and_asks_for_unit_vectors():
    texts = ["first paper", "second paper", "third paper"]
    expected = _unit_rows(3, dtype=np.float64)
    encoder = FakeEncoder(lambda sentences: expected)
    vectors = embed_texts(texts, encoder, EmbedConfig(batch_size=7, progress_bar=False))

    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    assert len(encoder.calls) == 1
    sent, kwargs = encoder.calls[0]
    assert sent == texts  # same texts, same order
    assert kwargs["batch_size"] == 7
    assert kwargs["normalize_embeddings"] is True
    assert kwargs["show_progress_bar"] is False


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda s: _unit_rows(len(s), width=768), id="wrong-width"),
        pytest.param(lambda s: _unit_rows(len(s) - 1), id="too-few-rows"),
        pytest.param(lambda s: _unit_rows(len(s))[0], id="one-dimensional"),
    ],
)
def test_embed_texts_rejects_wrong_shape(make):
    with pytest.raises(PipelineError, match="shape"):
        embed_texts(["a", "b", "c"], FakeEncoder(make), EmbedConfig())


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_embed_texts_rejects_non_finite_values(bad):
    def make(sentences):
        vectors = _unit_rows(len(sentences))
        vectors[1, 5] = bad
        return vectors

    with pytest.raises(PipelineError, match="non-finite"):
        embed_texts(["a", "b", "c"], FakeEncoder(make), EmbedConfig())


def test_embedding_texts_prefixes_title_when_present():
    documents = _documents(
        ["Sliced Wasserstein", None, ""],
        ["Distances between measures.", "An untitled abstract.", "Empty title abstract."],
    )
    assert embedding_texts(documents) == [
        "Sliced Wasserstein. Distances between measures.",
        "An untitled abstract.",
        "Empty title abstract.",
    ]


def test_embedding_texts_treats_nan_title_as_missing():
    documents = _documents(["A title", None], ["First abstract.", "Second abstract."])
    documents["title"] = pd.Series(["A title", np.nan])  # how pandas stores the missing title
    assert embedding_texts(documents) == ["A title. First abstract.", "Second abstract."]

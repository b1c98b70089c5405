"""Embed stage: the text embedded per paper and the checks on what the encoder returns.

The real model is never loaded here: a fake encoder stands in for it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline import embed as embed_module
from pipeline.config import EmbedConfig
from pipeline.embed import (
    EmbeddingCache,
    cache_path,
    embed_texts,
    embed_with_cache,
    embedding_texts,
    load_encoder,
    nearest_neighbours,
    precision_context,
    resolve_precision,
    text_key,
)
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


# --- cache and precision ------------------------------------------------------------------


def _text_vectors(sentences) -> np.ndarray:
    """A deterministic unit vector per text (a hash of it seeds the values)."""
    rows = []
    for text in sentences:
        rng = np.random.default_rng(int(text_key(text)[:8], 16))
        row = rng.normal(size=384)
        rows.append(row / np.linalg.norm(row))
    return np.array(rows, dtype=np.float32)


def test_cache_embeds_only_new_texts_and_survives_a_new_process(tmp_path):
    config = EmbedConfig(progress_bar=False)
    encoder = FakeEncoder(_text_vectors)
    first, n_new = embed_with_cache(["a b c", "d e f"], lambda: encoder, config, "fp32", tmp_path)
    assert n_new == 2 and len(encoder.calls) == 1
    # A later run (a new cache object read from disk) with one more text embeds just that one,
    # and a run with nothing new never builds an encoder at all.
    texts = ["d e f", "g h i", "a b c"]
    again, n_new = embed_with_cache(texts, lambda: encoder, config, "fp32", tmp_path)
    assert n_new == 1 and encoder.calls[-1][0] == ["g h i"]
    np.testing.assert_array_equal(again[[2, 0]], first)
    np.testing.assert_array_equal(again, _text_vectors(texts))

    def no_encoder():
        raise AssertionError("the model was loaded although every text is cached")

    cached, n_new = embed_with_cache(texts, no_encoder, config, "fp32", tmp_path)
    assert n_new == 0
    np.testing.assert_array_equal(cached, again)


def test_cache_is_keyed_by_precision_and_exact_text(tmp_path):
    config = EmbedConfig(progress_bar=False)
    encoder = FakeEncoder(_text_vectors)
    embed_with_cache(["a b c"], lambda: encoder, config, "fp32", tmp_path)
    _, n_new = embed_with_cache(["a b c"], lambda: encoder, config, "bf16", tmp_path)
    assert n_new == 1  # another precision is another cache
    _, n_new = embed_with_cache(["a b c "], lambda: encoder, config, "fp32", tmp_path)
    assert n_new == 1  # one more space is another text
    assert len(list(tmp_path.glob("*.parquet"))) == 2


def test_unreadable_cache_is_ignored_not_fatal(tmp_path):
    config = EmbedConfig(progress_bar=False)
    cache_file = cache_path(tmp_path, config.model, "fp32")
    cache_file.write_bytes(b"not parquet")
    vectors, n_new = embed_with_cache(
        ["a b c"], lambda: FakeEncoder(_text_vectors), config, "fp32", tmp_path
    )
    assert n_new == 1 and vectors.shape == (1, 384)
    assert EmbeddingCache(cache_file, 384).vectors.keys() == {text_key("a b c")}


def test_disabled_cache_writes_nothing(tmp_path):
    config = EmbedConfig(progress_bar=False, cache_dir=None)
    embed_with_cache(["a b c"], lambda: FakeEncoder(_text_vectors), config, "fp32", None)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("setting", "flags", "expected"),
    [
        ("auto", True, "bf16"),
        ("auto", False, "fp32"),
        ("fp32", True, "fp32"),
        ("bf16", False, "bf16"),
    ],
)
def test_precision_auto_follows_the_cpu(monkeypatch, setting, flags, expected):
    monkeypatch.setattr(embed_module, "cpu_has_native_bf16", lambda: flags)
    assert resolve_precision(EmbedConfig(precision=setting)) == expected


@pytest.mark.slow
def test_bf16_vectors_stay_within_cosine_0999_of_fp32_on_real_abstracts():
    """The real model on real abstracts: bf16 autocast must not move any vector noticeably.

    Runs whatever this CPU supports (bf16 is emulated, and slow, without AVX-512 BF16), on a
    sample small enough to stay quick either way.
    """
    from tests.conftest import ROOT

    texts = [
        block.replace("\n", " ")
        for path in sorted((ROOT / "data/raw").glob("*.txt"))
        for block in path.read_text(encoding="utf-8").split("\n\n")[1:3]
    ]
    config = EmbedConfig(progress_bar=False)
    encoder = load_encoder(config)
    fp32 = embed_texts(texts, encoder, config)
    with precision_context("bf16"):
        bf16 = embed_texts(texts, encoder, config)
    cosine = (fp32 * bf16).sum(axis=1)
    assert len(texts) == 8 and cosine.min() >= 0.999, cosine.min()


# ---------------------------------------------------------------- nearest neighbours


def test_nearest_neighbours_are_the_most_cosine_similar_others():
    vectors = np.array([[1, 0], [0.9, 0.1], [0, 1], [-1, 0], [0.6, 0.8]], dtype=np.float32)
    indices, sims = nearest_neighbours(vectors, k=2)
    assert indices.tolist() == [[1, 4], [0, 4], [4, 1], [2, 4], [2, 1]]
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.allclose(sims[0], [unit[0] @ unit[1], unit[0] @ unit[4]])


def test_nearest_neighbour_ties_go_to_the_lower_index():
    vectors = np.array([[1, 0]] * 4 + [[0, 1]], dtype=np.float32)  # four identical papers
    indices, sims = nearest_neighbours(vectors, k=2)
    assert indices.tolist() == [[1, 2], [0, 2], [0, 1], [0, 1], [0, 1]]
    assert np.allclose(sims[:4], 1)


def test_nearest_neighbours_do_not_depend_on_the_block_size():
    vectors = np.random.default_rng(1).normal(size=(300, 16)).astype(np.float32)
    whole, whole_sims = nearest_neighbours(vectors, 5, block_rows=300)
    for block_rows in (1, 7, 64):
        indices, sims = nearest_neighbours(vectors, 5, block_rows=block_rows)
        assert (indices == whole).all()
        assert np.allclose(sims, whole_sims, atol=1e-6)
    assert whole.shape == (300, 5)
    assert not (whole == np.arange(300)[:, None]).any()


@pytest.mark.parametrize(("n", "k"), [(0, 0), (1, 0), (2, 1), (6, 5)])
def test_tiny_corpora_have_fewer_neighbours(n, k):
    indices, sims = nearest_neighbours(np.ones((n, 3), dtype=np.float32), 5)
    assert indices.shape == sims.shape == (n, k)

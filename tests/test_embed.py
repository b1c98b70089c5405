"""Embed stage: the cache of embeddings keyed by model, precision and exact text.

The real model is never loaded here: a fake encoder stands in for it.
"""

from __future__ import annotations

import numpy as np
from fakes import FakeEncoder

from pipeline.config import EmbedConfig
from pipeline.embed import EmbeddingCache, cache_path, embed_with_cache, text_key


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

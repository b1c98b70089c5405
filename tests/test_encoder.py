"""The encoder: what it returns is checked, its precision follows the CPU, the model loads
offline without changing the process's environment."""

from __future__ import annotations

import os

import numpy as np
import pytest
from fakes import FakeEncoder, unit_rows

from pipeline import encoder as encoder_module
from pipeline.config import EmbedConfig
from pipeline.encoder import (
    OFFLINE_ENVIRONMENT,
    embed_texts,
    load_encoder,
    offline,
    precision_context,
    resolve_precision,
)
from pipeline.errors import PipelineError


def test_embed_texts_returns_float32_matrix_and_asks_for_unit_vectors():
    texts = ["first paper", "second paper", "third paper"]
    expected = unit_rows(3, dtype=np.float64)
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
        pytest.param(lambda s: unit_rows(len(s), width=768), id="wrong-width"),
        pytest.param(lambda s: unit_rows(len(s) - 1), id="too-few-rows"),
        pytest.param(lambda s: unit_rows(len(s))[0], id="one-dimensional"),
    ],
)
def test_embed_texts_rejects_wrong_shape(make):
    with pytest.raises(PipelineError, match="shape"):
        embed_texts(["a", "b", "c"], FakeEncoder(make), EmbedConfig())


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_embed_texts_rejects_non_finite_values(bad):
    def make(sentences):
        vectors = unit_rows(len(sentences))
        vectors[1, 5] = bad
        return vectors

    with pytest.raises(PipelineError, match="non-finite"):
        embed_texts(["a", "b", "c"], FakeEncoder(make), EmbedConfig())


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
    monkeypatch.setattr(encoder_module, "cpu_has_native_bf16", lambda: flags)
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


def test_offline_settings_hold_only_inside_and_are_restored(monkeypatch):
    import huggingface_hub.constants as hub

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    before = dict(os.environ)
    with offline():
        assert all(os.environ[name] == value for name, value in OFFLINE_ENVIRONMENT.items())
        assert hub.HF_HUB_OFFLINE is True
    assert dict(os.environ) == before
    assert hub.HF_HUB_OFFLINE is False

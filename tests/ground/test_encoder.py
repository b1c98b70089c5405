"""The encoder: what it returns is checked, its precision follows the CPU, the model loads
offline without changing the process's environment."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

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
from tests.support.fakes import FakeEncoder, unit_rows


def test_embed_texts_returns_float32_matrix_and_asks_for_unit_vectors():
    texts = ["first paper", "second paper", "third paper"]
    expected = unit_rows(7, dtype=np.float64)[:3]  # a batch of 7: the fill-up's rows dropped
    encoder = FakeEncoder(lambda sentences: unit_rows(len(sentences), dtype=np.float64))
    vectors = embed_texts(texts, encoder, EmbedConfig(batch_size=7, progress_bar=False))

    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    assert len(encoder.calls) == 1
    sent, kwargs = encoder.calls[0]
    assert sent == texts + [texts[-1]] * 4  # same texts, same order, the last fills up
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
    assert resolve_precision(EmbedConfig(precision=setting, cache_dir=None)) == expected


def _measured(tmp_path, content) -> EmbedConfig:
    (tmp_path / "modes.json").write_text(
        content if isinstance(content, str) else json.dumps(content), encoding="utf-8"
    )
    return EmbedConfig(cache_dir=str(tmp_path))


def test_auto_takes_the_mode_the_bench_measured_on_this_cpu(monkeypatch, tmp_path):
    monkeypatch.setattr(encoder_module, "cpu_has_native_bf16", lambda: True)
    monkeypatch.setattr(encoder_module, "cpu_identity", lambda: "this CPU")
    config = _measured(tmp_path, {"this CPU": {"choice": "int8"}, "other": {"choice": "fp32"}})
    assert resolve_precision(config) == "int8"
    assert resolve_precision(config.model_copy(update={"precision": "fp32"})) == "fp32"
    assert encoder_module.measured_precision(config) == "int8"


@pytest.mark.parametrize(
    "content",
    [
        pytest.param({"another CPU": {"choice": "int8"}}, id="other-cpu"),
        pytest.param({"this CPU": {"choice": "fp16"}}, id="unknown-mode"),
        pytest.param({"this CPU": "int8"}, id="not-an-entry"),
        pytest.param("{not json", id="unreadable"),
        pytest.param([1, 2], id="not-a-table"),
    ],
)
def test_auto_falls_back_to_the_flags_without_a_measurement_of_this_cpu(
    monkeypatch, tmp_path, content
):
    monkeypatch.setattr(encoder_module, "cpu_has_native_bf16", lambda: False)
    monkeypatch.setattr(encoder_module, "cpu_identity", lambda: "this CPU")
    assert resolve_precision(_measured(tmp_path, content)) == "fp32"


def test_cpu_identity_names_the_model_flags_and_cores(monkeypatch):
    info = "processor : 0\nmodel name : Some CPU 9000\nflags : fpu avx2 avx512f amx_bf16 sse\n"
    monkeypatch.setattr(encoder_module, "_cpuinfo", lambda: info)
    assert encoder_module.cpu_flags() == ["avx2", "avx512f", "amx_bf16"]
    assert encoder_module.cpu_has_native_bf16()
    identity = encoder_module.cpu_identity()
    assert identity.startswith("Some CPU 9000 | avx2 avx512f amx_bf16 | ")
    assert identity.endswith(" cores")


@pytest.mark.slow
def test_bf16_vectors_stay_within_cosine_0999_of_fp32_on_real_abstracts():
    """The real model on real abstracts: bf16 autocast must not move any vector noticeably.

    Runs whatever this CPU supports (bf16 is emulated, and slow, without AVX-512 BF16), on a
    sample small enough to stay quick either way.
    """
    from tests.support.paths import ROOT

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


@pytest.mark.slow
def test_int8_quantises_the_linear_layers_and_stays_near_fp32_on_real_abstracts():
    """int8 is torch's dynamic quantisation of the real model: every linear layer quantised,
    vectors still unit length and close to fp32's (not faithful enough to be `auto`'s choice
    unmeasured: docs/benchmarks.md's modes table)."""
    import torch
    from torch.ao.nn.quantized.dynamic import Linear as QuantisedLinear

    from tests.support.paths import ROOT

    texts = (ROOT / "data/raw/iclr2025_abstracts.txt").read_text(encoding="utf-8").split("\n\n")
    texts = [t.replace("\n", " ") for t in texts[1:9]]
    fp32_config = EmbedConfig(progress_bar=False, precision="fp32", cache_dir=None)
    int8_config = fp32_config.model_copy(update={"precision": "int8"})
    int8 = load_encoder(int8_config)
    kinds = {type(m) for m in int8.modules()}
    assert QuantisedLinear in kinds and torch.nn.Linear not in kinds  # none left in fp32
    cosine = (
        embed_texts(texts, load_encoder(fp32_config), fp32_config)
        * embed_texts(texts, int8, int8_config)
    ).sum(axis=1)
    assert len(texts) == 8 and 0.8 <= cosine.min() and cosine.max() < 0.99999, cosine


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

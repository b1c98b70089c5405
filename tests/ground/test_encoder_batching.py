"""A paper's vector depends on its text alone, not on the texts embedded with it: batches of one
length bucket, padded to it (encoder.embed_texts)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.config import EmbedConfig
from pipeline.encoder import (
    LENGTH_STEP,
    cpu_has_native_bf16,
    embed_texts,
    load_encoder,
    padded_lengths,
    precision_context,
)
from tests.support.fakes import FakeEncoder, unit_rows
from tests.support.paths import ROOT


def _words(n: int) -> str:
    return " ".join(["word"] * n)


def test_lengths_round_up_to_the_step_and_stop_at_the_models_limit():
    encoder = FakeEncoder(lambda s: unit_rows(len(s)))
    texts = [_words(1), _words(30), _words(31), _words(100), _words(1000)]
    # the fake's tokens: a word each and two markers
    assert padded_lengths(texts, encoder).tolist() == [32, 32, 64, 128, 256]
    assert padded_lengths(texts, encoder, step=1).tolist() == [3, 32, 33, 102, 256]
    assert LENGTH_STEP == 32


def test_each_bucket_is_embedded_apart_padded_to_its_length():
    def make(sentences):
        return np.array([unit_rows(200)[len(s.split())] for s in sentences])

    encoder = FakeEncoder(make)
    texts = [_words(100), _words(2), _words(40), _words(3), _words(101)]
    vectors = embed_texts(texts, encoder, EmbedConfig(batch_size=7, progress_bar=False))
    np.testing.assert_array_equal(vectors, make(texts).astype(np.float32))  # rows in place
    calls = [(sent, kwargs["processing_kwargs"]["text"]) for sent, kwargs in encoder.calls]
    assert calls == [  # every batch 7 texts: the last text again fills one up
        ([_words(2), _words(3)] + [_words(3)] * 5, {"padding": "max_length", "max_length": 32}),
        ([_words(40)] * 7, {"padding": "max_length", "max_length": 64}),
        ([_words(100)] + [_words(101)] * 6, {"padding": "max_length", "max_length": 128}),
    ]
    assert {kwargs["batch_size"] for _, kwargs in encoder.calls} == {7}
    int8 = FakeEncoder(make)
    embed_texts(texts, int8, EmbedConfig(precision="int8", progress_bar=False))
    assert {kwargs["batch_size"] for _, kwargs in int8.calls} == {1}  # scales by the batch
    assert embed_texts([], encoder, EmbedConfig()).shape == (0, 384)


def _abstracts() -> list[str]:
    return [
        block.replace("\n", " ")
        for path in sorted((ROOT / "data/raw").glob("*.txt"))
        for block in path.read_text(encoding="utf-8").split("\n\n")[1:]
        if block.strip()
    ]


@pytest.mark.slow  # the real model
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_real_vector_is_the_same_alone_and_among_other_texts(precision):
    if precision == "bf16" and not cpu_has_native_bf16():
        pytest.skip("bf16 is emulated on this CPU (and not what auto chooses)")
    config = EmbedConfig(progress_bar=False, precision=precision, cache_dir=None)
    texts = _abstracts()[:40] + ["Short title. A short abstract of a dozen words about graphs."]
    encoder = load_encoder(config)
    with precision_context(precision):
        together = embed_texts(texts, encoder, config)
        reversed_ = embed_texts(texts[::-1], encoder, config)[::-1]
        alone = np.stack([embed_texts([t], encoder, config)[0] for t in texts[::8]])
        some = embed_texts(texts[5:12], encoder, config)  # other batch fill-ups
    assert len(set(padded_lengths(texts, encoder).tolist())) >= 3  # several buckets
    np.testing.assert_array_equal(together, reversed_)
    np.testing.assert_array_equal(together[::8], alone)
    np.testing.assert_array_equal(together[5:12], some)

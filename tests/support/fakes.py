"""Small stand-ins for the real model in unit tests (the real one runs end to end)."""

from __future__ import annotations

import numpy as np


class FakeEncoder:
    """Returns a fixed matrix (or one built from the texts) and records how it was called."""

    def __init__(self, make):
        self.make = make
        self.calls: list[tuple[list[str], dict]] = []

    max_seq_length = 256

    def tokenizer(self, texts, truncation=True, max_length=256):
        """A token per word, and the two markers around them, cut at max_length."""
        return {"input_ids": [[0] * min(len(t.split()) + 2, max_length) for t in texts]}

    def encode(self, sentences, **kwargs):
        self.calls.append((list(sentences), kwargs))
        return self.make(sentences)


def unit_rows(n: int, width: int = 384, dtype=np.float64) -> np.ndarray:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, width))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(dtype)

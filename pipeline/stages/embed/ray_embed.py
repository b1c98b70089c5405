"""The embed stage's Ray adapter: the papers not in the cache, a chunk per documents shard
(`pipeline.document_shards`, written by the `shards` command), embedded by `ShardEncoder`
actors through the engine (`engines.map_chunks`: one encoder per actor, `engine.concurrency`
actors of one core each). Each actor reads its shard from the shared path, embeds the chunk's
papers and writes their vectors to the work folder (`work.py`), so a killed run resumes.

A chunk's papers are embedded in one call, as the local engine embeds each chunk, so both
engines give the same vectors (bf16 results depend on how texts are padded into batches). The
driver reads the vectors back and fills the cache. A chunk that fails for good stops the stage
with one line naming its shard.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pipeline import encoder as encoders
from pipeline import schemas, tables, timings
from pipeline.config import EmbedConfig, EngineConfig
from pipeline.engines import Actor, WorkerError, map_chunks
from pipeline.engines.session import ray_session
from pipeline.errors import PipelineError
from pipeline.stages.embed import embedding_span
from pipeline.stages.embed.work import ShardChunk, plan, read_vectors, work_folder
from pipeline.text import embedding_texts, text_key

log = logging.getLogger("pipeline.embed")
# A test hook, read on the driver: "<shard file name>:<marker file>" kills the actor that
# starts that shard (os._exit, a real crash) once, when the marker does not exist yet;
# "<shard file name>:always" kills it on every attempt.
FAULT_ENV = "TOPICMAP_RAY_FAULT"
THREADS_PER_ACTOR = 1  # each actor holds one CPU of the cluster


def _attempt(chunk: ShardChunk, fault: str | None) -> None:
    """Count an attempt at a chunk (the driver names the shard tried most when Ray gives up),
    then crash here if the test hook asks for it."""
    with open(chunk.attempts, "a", encoding="utf-8") as counted:
        counted.write(f"{socket.gethostname()} {os.getpid()}\n")
    if not fault:
        return
    name, _, marker = fault.partition(":")
    if chunk.source.name == name and (marker == "always" or not os.path.exists(marker)):
        if marker != "always":
            Path(marker).write_text("killed\n", encoding="utf-8")
        os._exit(1)


class ShardEncoder:
    """One encoder on one core; called with a chunk, it embeds it (unless a try before it
    did) and returns when its embedding began and ended (wall clock; NaN when found done)."""

    def __init__(self, embed: dict, precision: str, fault: str | None):
        import torch

        self.config = EmbedConfig(**{**embed, "progress_bar": False})
        self.precision = precision
        self.fault = fault
        self.encoder = encoders.load_encoder(self.config)
        torch.set_num_threads(THREADS_PER_ACTOR)

    def __call__(self, chunk: ShardChunk) -> tuple[float, float]:
        if chunk.done:
            return np.nan, np.nan
        begun = time.time()
        self.embed(chunk)
        return begun, time.time()

    def embed(self, chunk: ShardChunk) -> None:
        try:
            papers = tables.read_table(chunk.source, schemas.DOCUMENTS, ["title", "abstract"])
        except (OSError, PipelineError) as exc:
            raise WorkerError(
                f"{socket.gethostname()} cannot read {chunk.source} ({exc})"
            ) from None
        _attempt(chunk, self.fault)
        texts = embedding_texts(papers.iloc[list(chunk.rows)])
        with encoders.precision_context(self.precision):
            vectors = encoders.embed_texts(texts, self.encoder, self.config)
        tables.write_key_vectors(chunk.result, [text_key(t) for t in texts], vectors)


def failed_chunk(chunks: list[ShardChunk]) -> ShardChunk | None:
    """The chunk Ray gave up on: of those not done, the one tried most often."""

    def attempts(chunk):
        path = chunk.attempts
        return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0

    left = [c for c in chunks if not c.done]
    return max(left, key=lambda c: (attempts(c), -c.index), default=None)


def failed_what(chunks: list[ShardChunk]) -> str:
    chunk = failed_chunk(chunks)
    return f"embedding shard {chunk.source}" if chunk else "embedding a shard"


def run_actors(
    pending: list[ShardChunk],
    config: EmbedConfig,
    precision: str,
    engine: EngineConfig,
    out_dir: Path,
) -> None:
    """Embed the pending chunks on Ray actors, then log the figures and record those the Ray
    bench reads in the run's timings in `out_dir`."""
    fault = os.environ.get(FAULT_ENV)
    actor = Actor(ShardEncoder, (config.model_dump(), precision, fault))
    with ray_session(engine):  # timed once Ray is up (map_chunks joins this session)
        start = time.perf_counter()
        spans = map_chunks(
            engine,
            actor,
            pending,
            papers=lambda c: c.size,
            desc="embedding",
            what=lambda: failed_what(pending),
            then="rerun to resume",
        )
        seconds = time.perf_counter() - start
    total, actors = sum(c.size for c in pending), min(engine.concurrency, len(pending))
    working = embedding_span(spans)
    working = seconds if working is None else working
    log.info(
        "ray: embedded %d papers in %d shards on %d actors in %.1f s (%.1f papers/s; "
        "%.1f s of it embedding once the first actor was ready: %.1f papers/s)",
        total,
        len(pending),
        actors,
        seconds,
        total / max(seconds, 1e-9),
        working,
        total / max(working, 1e-9),
    )
    timings.record(
        out_dir,
        "embed",
        embedding_s=round(working, 3),
        ray_s=round(seconds, 3),
        shards=len(pending),
        actors=actors,
    )


def embed_on_ray(
    keys: list[str],
    groups: list[list[int]],
    sources: Callable[[], list[Path]],
    out_dir: Path,
    config: EmbedConfig,
    precision: str,
    engine: EngineConfig,
) -> np.ndarray:
    """The vectors of the papers in `groups` (positions in the table of `keys`, by documents
    shard; the shards' files are `sources()`), in order, embedded on Ray through a work folder
    of `out_dir` named by the work: chunks a killed run finished are not embedded again."""
    identity = f"{encoders.encoder_identity(config)} {precision}"
    placed = [f"{p}:{keys[p]}" for group in groups for p in group]
    folder = work_folder(out_dir, "embed", identity, placed, engine.shard_papers)
    chunks = plan(sources(), groups, keys, engine.shard_papers, folder)
    folder.mkdir(parents=True, exist_ok=True)
    pending = [c for c in chunks if not c.done]
    if len(pending) < len(chunks):
        log.info(
            "ray: %d of %d shards already embedded (resuming)",
            len(chunks) - len(pending),
            len(chunks),
        )
    if pending:
        run_actors(pending, config, precision, engine, out_dir)
    width = encoders.MODEL_WIDTH[config.model]
    return np.concatenate([read_vectors(c, width) for c in chunks])

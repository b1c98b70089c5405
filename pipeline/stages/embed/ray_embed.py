"""The embed stage on Ray: the documents shards (`pipeline.engines.document_shards`, written by
ingest with `engine: ray`) read by Ray Data actors (`map_batches` over the shards with work, one
encoder per actor, `engine.concurrency` actors of one core each). Each actor reads its shard
from the shared path, embeds the papers of it not in the cache, and writes their vectors to the
work folder.

A shard's papers are embedded in one call, as the local engine embeds each shard's, so both
engines give the same vectors (bf16 results depend on how texts are padded into batches). The
driver reads the vectors back and fills the cache. A dead actor is restarted and its shard
retried up to `engine.max_retries` times; a shard that fails for good stops the stage with one
line naming it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import warnings
from pathlib import Path

import numpy as np

from pipeline import encoder as encoders
from pipeline import progress, schemas, tables
from pipeline.config import EmbedConfig, EngineConfig
from pipeline.engines import shards as shard_files
from pipeline.engines.session import ray_session
from pipeline.errors import PipelineError
from pipeline.text import embedding_texts, text_key

log = logging.getLogger("pipeline.engines")
# A test hook, read on the driver: "<shard file name>:<marker file>" kills the actor that
# starts that shard (os._exit, a real crash) once, when the marker does not exist yet;
# "<shard file name>:always" kills it on every attempt.
FAULT_ENV = "TOPICMAP_RAY_FAULT"
WORKER_ERROR = "topicmap worker: "  # a worker's own one-line problem, found in Ray's error
THREADS_PER_ACTOR = 1  # each actor holds one CPU of the cluster


def _attempt(source: Path, attempts: Path, fault: str | None) -> None:
    """Count an attempt at a shard (the driver names the shard tried most when Ray gives up),
    then crash here if the test hook asks for it."""
    with open(attempts, "a", encoding="utf-8") as counted:
        counted.write(f"{socket.gethostname()} {os.getpid()}\n")
    if not fault:
        return
    name, _, marker = fault.partition(":")
    if source.name == name and (marker == "always" or not os.path.exists(marker)):
        if marker != "always":
            Path(marker).write_text("killed\n", encoding="utf-8")
        os._exit(1)


class EncoderActor:
    """One encoder on one core; each call embeds the shards named in the batch."""

    def __init__(self, embed: dict, precision: str, fault: str | None):
        import torch

        self.config = EmbedConfig(**{**embed, "progress_bar": False})
        self.precision = precision
        self.fault = fault
        self.encoder = encoders.load_encoder(self.config)
        torch.set_num_threads(THREADS_PER_ACTOR)

    def __call__(self, batch: dict) -> dict:
        """Embed the batch's shards; each row back: the shard and when its embedding started
        and finished (wall clock; NaN for a shard found done)."""
        done, started, finished = [], [], []
        for source, rows, result, attempts in zip(
            batch["source"], batch["rows"], batch["result"], batch["attempts"], strict=True
        ):
            source, result = Path(str(source)), Path(str(result))
            todo, begun = not result.exists(), time.time()
            if todo:
                self._embed(source, json.loads(str(rows)), result, Path(str(attempts)))
            started.append(begun if todo else np.nan)
            finished.append(time.time() if todo else np.nan)
            done.append(str(source))
        return {"source": np.array(done), "started": np.array(started),
                "finished": np.array(finished)}  # fmt: skip

    def _embed(self, source: Path, rows: list[int], result: Path, attempts: Path) -> None:
        try:
            papers = tables.read_table(source, schemas.DOCUMENTS, ["title", "abstract"])
        except (OSError, PipelineError) as exc:
            host = socket.gethostname()
            raise RuntimeError(f"{WORKER_ERROR}{host} cannot read {source} ({exc})") from None
        _attempt(source, attempts, self.fault)
        texts = embedding_texts(papers.iloc[rows])
        with encoders.precision_context(self.precision):
            vectors = encoders.embed_texts(texts, self.encoder, self.config)
        shard_files.write_vectors(result, [text_key(t) for t in texts], vectors)


def failed_shard(shards: list[shard_files.Shard]) -> shard_files.Shard | None:
    """The shard Ray gave up on: of those not done, the one tried most often."""

    def attempts(shard):
        path = shard.attempts
        return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0

    left = [s for s in shards if not s.done]
    return max(left, key=lambda s: (attempts(s), -s.index), default=None)


def failure_message(exc: BaseException, shards: list[shard_files.Shard], retries: int) -> str:
    text = str(exc)
    if WORKER_ERROR in text:
        return text.split(WORKER_ERROR, 1)[1].splitlines()[0]
    shard = failed_shard(shards)
    where = f"shard {shard.source}" if shard else "a shard"
    reason = type(exc).__name__
    return f"embedding {where} failed on Ray after {retries} retries ({reason}); rerun to resume"


def embedding_span(spans: list[tuple[float, float]]) -> float | None:
    """The actors' embedding itself, from the first shard begun to the last one done (None when
    every shard was found done)."""
    times = np.array(spans, dtype=float).reshape(-1, 2)
    times = times[~np.isnan(times).any(axis=1)]
    return float(times[:, 1].max() - times[:, 0].min()) if len(times) else None


def run_actors(pending: list[shard_files.Shard], config: EmbedConfig, precision: str,
               engine: EngineConfig) -> None:  # fmt: skip
    """Embed the pending shards on Ray Data actors, showing papers done / total and papers/s."""
    total = sum(s.size for s in pending)
    size_of = {str(s.source): s.size for s in pending}
    with ray_session(engine) as ray:
        items = [
            {
                "source": str(s.source),
                "rows": json.dumps(s.rows),
                "result": str(s.result),
                "attempts": str(s.attempts),
            }
            for s in pending
        ]
        dataset = ray.data.from_items(items, override_num_blocks=len(items))
        with warnings.catch_warnings():  # retries are still only ray_remote_args in Ray 2.60
            warnings.simplefilter("ignore", DeprecationWarning)
            embedded = dataset.map_batches(
                EncoderActor,
                fn_constructor_args=(config.model_dump(), precision, os.environ.get(FAULT_ENV)),
                batch_size=1,
                compute=ray.data.ActorPoolStrategy(size=min(engine.concurrency, len(pending))),
                num_cpus=THREADS_PER_ACTOR,
                max_restarts=engine.max_retries,
                max_task_retries=engine.max_retries,
            )
        start = time.perf_counter()
        spans = []
        with progress.bar(desc="embedding on Ray", total=total, unit="papers") as bar:
            try:
                for row in embedded.iter_rows():
                    bar.update(size_of[str(row["source"])])
                    spans.append((row["started"], row["finished"]))
            except Exception as exc:  # Ray wraps what failed in its own errors
                raise PipelineError(failure_message(exc, pending, engine.max_retries)) from None
        seconds = time.perf_counter() - start
    working = embedding_span(spans)
    working = seconds if working is None else working
    log.info(
        "ray: embedded %d papers in %d shards on %d actors in %.1f s (%.1f papers/s; "
        "%.1f s of it embedding once the first actor was ready: %.1f papers/s)",
        total, len(pending), min(engine.concurrency, len(pending)), seconds,
        total / max(seconds, 1e-9), working, total / max(working, 1e-9),
    )  # fmt: skip


def embed_on_ray(
    shards: list[shard_files.Shard], config: EmbedConfig, precision: str, engine: EngineConfig
) -> np.ndarray:
    """The vectors of the shards' papers, in order, embedded on Ray; shards already done (a
    killed run's, in the same work folder) are not embedded again."""
    for folder in {s.result.parent for s in shards}:
        folder.mkdir(parents=True, exist_ok=True)
    pending = [s for s in shards if not s.done]
    if len(pending) < len(shards):
        log.info("ray: %d of %d shards already embedded (resuming)", len(shards) - len(pending),
                 len(shards))  # fmt: skip
    if pending:
        run_actors(pending, config, precision, engine)
    width = encoders.MODEL_WIDTH[config.model]
    return np.concatenate([shard_files.read_vectors(s, width) for s in shards])

"""The Ray engine: the chunks mapped by Ray Data (`map_batches`, one chunk per batch) on
`engine.concurrency` workers of one core each: an Actor's instances in an actor pool (each
restarted, and its chunk retried, up to `engine.max_retries` times), a function as tasks (each
retried as often). Results come back by chunk as they finish.

A chunk and its result cross Ray pickled, as one bytes column each: Ray Data would otherwise
turn lists into arrays and needs every value in columns, and the work must see what the local
engine hands it.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable
from typing import Any

from pipeline import progress
from pipeline.config import EngineConfig
from pipeline.engines.chunks import WORKER_ERROR, Actor
from pipeline.engines.session import ray_session
from pipeline.errors import PipelineError

CPUS_PER_WORKER = 1


def _one(run: Callable[[Any], Any], batch: dict) -> dict:
    index, chunk = batch["index"][0], pickle.loads(batch["chunk"][0])
    return {"index": [int(index)], "result": [pickle.dumps(run(chunk))]}


class _ActorBatches:
    """Ray Data's callable class for an Actor: the actor built once, then a chunk per batch."""

    def __init__(self, actor: Actor):
        self.run = actor.build()

    def __call__(self, batch: dict) -> dict:
        return _one(self.run, batch)


def _task_batch(batch: dict, work: Callable[[Any], Any]) -> dict:
    return _one(work, batch)


def failure_line(exc: BaseException, what: str, retries: int, then: str) -> str:
    """The stage's one line when Ray gave up: a worker's own problem as it said it, else what
    failed, after how many retries, Ray's error's name and what to do."""
    text = str(exc)
    if WORKER_ERROR in text:
        return text.split(WORKER_ERROR, 1)[1].splitlines()[0]
    return f"{what} failed on Ray after {retries} retries ({type(exc).__name__}); {then}"


def _mapped(ray, engine: EngineConfig, work, items: list[dict]):
    workers = min(engine.concurrency, len(items))
    dataset = ray.data.from_items(items, override_num_blocks=len(items))
    if isinstance(work, Actor):
        fn, options = (
            _ActorBatches,
            {
                "compute": ray.data.ActorPoolStrategy(size=workers),
                "fn_constructor_args": (work,),
                "max_restarts": engine.max_retries,
                "max_task_retries": engine.max_retries,
            },
        )
    else:
        fn = _task_batch
        options = {
            "concurrency": workers,
            "max_retries": engine.max_retries,
            "fn_kwargs": {"work": work},
        }
    with warnings.catch_warnings():  # retries are still only ray_remote_args in Ray 2.60
        warnings.simplefilter("ignore", DeprecationWarning)
        return dataset.map_batches(fn, batch_size=1, num_cpus=CPUS_PER_WORKER, **options)


def map_on_ray(
    engine: EngineConfig,
    work,
    chunks: list,
    papers: Callable[[Any], int],
    desc: str,
    what: str | Callable[[], str],
    then: str,
) -> list:
    """The results of `work` on each chunk, in the chunks' order (see chunks.map_chunks)."""
    sizes = [papers(c) for c in chunks]
    results: list = [None] * len(chunks)
    items = [{"index": i, "chunk": pickle.dumps(c)} for i, c in enumerate(chunks)]
    with ray_session(engine) as ray:
        mapped = _mapped(ray, engine, work, items)
        with progress.bar(desc=f"{desc} on Ray", total=sum(sizes), unit="papers") as bar:
            try:
                for row in mapped.iter_rows():
                    index = int(row["index"])
                    results[index] = pickle.loads(row["result"])
                    bar.update(sizes[index])
            except Exception as exc:  # Ray wraps what failed in its own errors
                said = what() if callable(what) else what
                raise PipelineError(failure_line(exc, said, engine.max_retries, then)) from None
    return results

"""Per-paper work handed to Ray in chunks held in memory (placing papers into the model,
counting their terms): one chunk per Ray Data batch, the results back by the chunk's `start`,
with a bar of papers done and one line when Ray gives up. The embed stage's shards are files
and have their own loop (`pipeline.stages.embed.ray_embed`), which names the shard that failed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from pipeline import progress
from pipeline.config import EngineConfig
from pipeline.engines.session import ray_session
from pipeline.errors import PipelineError


def map_chunks(
    engine: EngineConfig, items: list[dict], fn, *, desc: str, total: int,
    done: Callable[[dict], int], convert: Callable[[dict], object], failure: str, stage: str,
    actor_args: tuple | None = None, fn_kwargs: dict | None = None,
) -> dict[int, object]:  # fmt: skip
    """start -> `convert(row)` for each chunk in `items` (dicts holding `start`), mapped by
    `fn` on Ray: an actor class given `actor_args` (`engine.concurrency` actors, each restarted
    up to `engine.max_retries` times), else a function run as tasks (up to
    `engine.concurrency` at once, each retried). `done(row)`: papers the row finished;
    `failure`: what failed, in the stage's one line ("placing papers"), and `stage` the stage
    to rerun."""
    size = min(engine.concurrency, len(items))
    results: dict[int, object] = {}
    with ray_session(engine) as ray:
        dataset = ray.data.from_items(items, override_num_blocks=len(items))
        if actor_args is not None:
            options = {"compute": ray.data.ActorPoolStrategy(size=size),
                       "fn_constructor_args": actor_args, "max_restarts": engine.max_retries,
                       "max_task_retries": engine.max_retries}  # fmt: skip
        else:
            options = {"concurrency": size, "max_retries": engine.max_retries}
        with warnings.catch_warnings():  # retries are still only ray_remote_args in Ray 2.60
            warnings.simplefilter("ignore", DeprecationWarning)
            mapped = dataset.map_batches(
                fn, batch_size=1, num_cpus=1, fn_kwargs=fn_kwargs, **options
            )
        with progress.bar(desc=desc, total=total, unit="papers") as bar:
            try:
                for row in mapped.iter_rows():
                    results[int(row["start"])] = convert(row)
                    bar.update(done(row))
            except Exception as exc:  # Ray wraps what failed in its own errors
                raise PipelineError(
                    f"{failure} on Ray failed after {engine.max_retries} retries "
                    f"({type(exc).__name__}); rerun the {stage} stage"
                ) from None
    return results

"""Placing papers into the fitted model on Ray: the papers the sampled fit did not see (and
papers added to a saved model), in chunks of `engine.shard_papers`, each chunk placed by a Ray
Data actor holding the model (`map_batches`, `engine.concurrency` actors), exactly as the local
engine places the same chunks (`place.place_in_chunks`). The fit itself stays on the driver.
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np

from pipeline import progress
from pipeline.cluster.model import TopicModel
from pipeline.cluster.place import Placement, joined, place
from pipeline.config import EngineConfig
from pipeline.engines.session import ray_session
from pipeline.engines.shards import chunk_bounds
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.cluster")


class PlaceActor:
    """One copy of the model per actor; each call places the chunks in the batch."""

    def __init__(self, model: TopicModel):
        self.model = model

    def __call__(self, batch: dict) -> dict:
        placed = [place(self.model, np.asarray(v, np.float32)) for v in batch["vectors"]]
        return {
            "start": np.asarray(batch["start"]),
            "topics": [p.topics for p in placed],
            "similarity": [p.similarity for p in placed],
            "coords": [p.coords for p in placed],
        }


def place_on_ray(model: TopicModel, vectors: np.ndarray, engine: EngineConfig) -> Placement:
    """`place` on Ray actors, a chunk at a time; no Ray is started for no papers."""
    vectors = np.asarray(vectors, dtype=np.float32)
    bounds = chunk_bounds(len(vectors), engine.shard_papers)
    if not bounds:
        return joined([])
    parts: dict[int, Placement] = {}
    with ray_session(engine) as ray:
        items = [{"start": s, "vectors": vectors[s:e]} for s, e in bounds]
        dataset = ray.data.from_items(items, override_num_blocks=len(items))
        with warnings.catch_warnings():  # retries are still only ray_remote_args in Ray 2.60
            warnings.simplefilter("ignore", DeprecationWarning)
            placed = dataset.map_batches(
                PlaceActor,
                fn_constructor_args=(model,),
                batch_size=1,
                compute=ray.data.ActorPoolStrategy(size=min(engine.concurrency, len(items))),
                num_cpus=1,
                max_restarts=engine.max_retries,
                max_task_retries=engine.max_retries,
            )
        start = time.perf_counter()
        with progress.bar(desc="placing on Ray", total=len(vectors), unit="papers") as bar:
            try:
                for row in placed.iter_rows():
                    topics = np.asarray(row["topics"], np.int32)
                    parts[int(row["start"])] = Placement(
                        topics, np.asarray(row["similarity"], np.float32),
                        np.asarray(row["coords"], np.float32).reshape(-1, 2),
                    )  # fmt: skip
                    bar.update(len(topics))
            except Exception as exc:  # Ray wraps what failed in its own errors
                raise PipelineError(
                    f"placing papers on Ray failed after {engine.max_retries} retries "
                    f"({type(exc).__name__}); rerun the cluster stage"
                ) from None
    seconds = time.perf_counter() - start
    log.info("ray: placed %d papers in %d chunks in %.1f s", len(vectors), len(bounds), seconds)
    return joined([parts[s] for s, _ in bounds])

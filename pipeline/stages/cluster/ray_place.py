"""Placing papers into the fitted model on Ray: the papers the sampled fit did not see (and
papers added to a saved model), in chunks of `engine.shard_papers`, each chunk placed by a Ray
Data actor holding the model (`map_batches`, `engine.concurrency` actors), exactly as the local
engine places the same chunks (`place.place_in_chunks`). The fit itself stays on the driver.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from pipeline.config import EngineConfig
from pipeline.engines.chunks import map_chunks
from pipeline.engines.shards import chunk_bounds
from pipeline.stages.cluster.model import TopicModel
from pipeline.stages.cluster.place import Placement, joined, place

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


def _placement(row: dict) -> Placement:
    return Placement(
        np.asarray(row["topics"], np.int32), np.asarray(row["similarity"], np.float32),
        np.asarray(row["coords"], np.float32).reshape(-1, 2),
    )  # fmt: skip


def place_on_ray(model: TopicModel, vectors: np.ndarray, engine: EngineConfig) -> Placement:
    """`place` on Ray actors, a chunk at a time; no Ray is started for no papers."""
    vectors = np.asarray(vectors, dtype=np.float32)
    bounds = chunk_bounds(len(vectors), engine.shard_papers)
    if not bounds:
        return joined([])
    start = time.perf_counter()
    parts = map_chunks(
        engine, [{"start": s, "vectors": vectors[s:e]} for s, e in bounds], PlaceActor,
        desc="placing on Ray", total=len(vectors), done=lambda row: len(row["topics"]),
        convert=_placement, failure="placing papers", stage="cluster", actor_args=(model,),
    )  # fmt: skip
    seconds = time.perf_counter() - start
    log.info("ray: placed %d papers in %d chunks in %.1f s", len(vectors), len(bounds), seconds)
    return joined([parts[s] for s, _ in bounds])

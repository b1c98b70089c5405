"""The engine's one seam (`pipeline.engines.map_chunks`): a function or an Actor over chunks,
the results in the chunks' order; here, and on a real local Ray instance with 1 or 2 workers
the same; a chunk that fails for good stops with one line."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from pipeline.config import EngineConfig
from pipeline.engines import Actor, WorkerError, chunk_bounds, map_chunks
from pipeline.engines.ray_data import failure_line
from pipeline.errors import PipelineError
from tests.support.paths import ROOT

CHUNKS = [np.arange(start, stop, dtype=np.float32) for start, stop in chunk_bounds(10, 4)]


class Scaler:
    """An actor: what it is built with (the model, for a stage) scales each chunk."""

    built = 0

    def __init__(self, factor: float):
        Scaler.built += 1
        self.factor = factor

    def __call__(self, chunk: np.ndarray) -> dict:
        return {"scaled": chunk * self.factor, "pid": os.getpid()}


def _summed(chunk: np.ndarray) -> float:
    return float(chunk.sum())


def _unreadable(chunk) -> None:
    raise WorkerError(f"node7 cannot read {chunk}")


def _fails(chunk) -> None:
    raise ValueError("a chunk that cannot be counted")


def _map(engine: EngineConfig, work, chunks=CHUNKS, what="summing") -> list:
    return map_chunks(engine, work, chunks, papers=len, desc="test", what=what, then="rerun it")


def test_chunks_are_consecutive_and_cover_the_items():
    assert chunk_bounds(10, 4) == [(0, 4), (4, 8), (8, 10)] and chunk_bounds(0, 4) == []


def test_the_local_engine_maps_in_order_building_an_actor_once_and_only_for_work():
    local = EngineConfig()
    assert _map(local, _summed) == [6.0, 22.0, 17.0]
    Scaler.built = 0
    results = _map(local, Actor(Scaler, (2.0,)))
    assert [r["scaled"].tolist() for r in results] == [(c * 2).tolist() for c in CHUNKS]
    assert Scaler.built == 1
    assert _map(local, Actor(Scaler, (2.0,)), chunks=[]) == [] and Scaler.built == 1


def test_a_workers_own_problem_is_the_stages_one_line():
    with pytest.raises(PipelineError, match=r"^node7 cannot read \[0\]$"):
        _map(EngineConfig(), _unreadable, chunks=[[0]])
    raised = RuntimeError(f"UserCodeException\n  {WorkerError('node7 cannot read /d/t (x)')}\n")
    assert failure_line(raised, "embedding", 3, "rerun") == "node7 cannot read /d/t (x)"
    died = RuntimeError("ActorDiedError: The actor died unexpectedly\n\tclass_name: ...")
    assert failure_line(died, "placing papers", 3, "rerun the cluster stage") == (
        "placing papers failed on Ray after 3 retries (RuntimeError); rerun the cluster stage"
    )


def test_the_local_engine_never_imports_ray():
    """`make all` does not need Ray: nothing on the local engine's way imports it."""
    code = (
        "import sys, pipeline.cli, pipeline.api\n"
        "import pipeline.stages.embed, pipeline.stages.cluster, pipeline.stages.label\n"
        "from pipeline.config import EngineConfig\n"
        "from pipeline.engines import map_chunks\n"
        "map_chunks(EngineConfig(), len, [[1]], papers=len, desc='', what='', then='')\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.fixture
def _ray_workers_import_this_checkout(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.parametrize("workers", [1, 2])
def test_ray_maps_functions_and_actors_as_the_local_engine(
    _ray_workers_import_this_checkout, workers
):
    ray = EngineConfig(kind="ray", concurrency=workers)
    assert _map(ray, _summed) == _map(EngineConfig(), _summed)
    results = _map(ray, Actor(Scaler, (2.0,)))
    for found, chunk in zip(results, CHUNKS, strict=True):
        np.testing.assert_array_equal(found["scaled"], chunk * 2)  # bit for bit, same dtype
        assert found["scaled"].dtype == np.float32
    assert len({r["pid"] for r in results} - {os.getpid()}) == len({r["pid"] for r in results})


@pytest.mark.slow
@pytest.mark.ray
def test_a_chunk_failing_for_good_stops_with_one_line(_ray_workers_import_this_checkout):
    """A Ray task that fails on every try: the stage's one line, not Ray's traceback."""
    engine = EngineConfig(kind="ray", concurrency=1, max_retries=1)
    with pytest.raises(PipelineError) as caught:
        map_chunks(
            engine,
            _fails,
            [[0]],
            papers=len,
            desc="counting",
            what="counting terms",
            then="rerun the label stage",
        )
    message = str(caught.value)
    assert message.startswith("counting terms failed on Ray after 1 retries (")
    assert message.endswith("); rerun the label stage") and "\n" not in message
    with pytest.raises(PipelineError, match=r"^node7 cannot read \[0\]$"):
        map_chunks(
            engine, _unreadable, [[0]], papers=len, desc="reading", what="reading", then="rerun"
        )

"""The seam between a stage and the engine: `map_chunks(engine, work, chunks, ...)` runs
`work` on each chunk (a slice of a stage's work: papers' vectors, texts, a documents shard's
papers to embed) here or on Ray and returns the results in the chunks' order. A chunk and its
result can be any picklable objects; both engines hand `work` the same chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.config import EngineConfig

WORKER_ERROR = "topicmap worker: "  # marks a worker's own one-line problem in Ray's errors


@dataclass(frozen=True)
class Actor:
    """Work that needs something loaded first (a model): `cls(*args)` is built once per worker
    (on the local engine: once) and called with each chunk."""

    cls: type
    args: tuple = ()

    def build(self) -> Callable[[Any], Any]:
        return self.cls(*self.args)


class WorkerError(RuntimeError):
    """A chunk's own problem, in one line (a worker cannot read its file): the stage stops with
    this line rather than the engine's account of the failure."""

    def __init__(self, line: str):
        super().__init__(WORKER_ERROR + line)
        self.line = line


def chunk_bounds(n: int, size: int) -> list[tuple[int, int]]:
    """(start, stop) of consecutive chunks of `size` items (the last one shorter)."""
    return [(start, min(start + size, n)) for start in range(0, n, size)]


def map_chunks(
    engine: EngineConfig,
    work: Callable[[Any], Any] | Actor,
    chunks: Sequence,
    *,
    papers: Callable[[Any], int],
    desc: str,
    what: str | Callable[[], str] = "the work",
    then: str = "rerun the stage",
) -> list:
    """[work(chunk) for chunk in chunks] on the configured engine, with a bar of papers done
    (`papers(chunk)` each; `desc` names the work). When Ray gives up on a chunk, the stage stops
    with one line: `what` failed (or a callable saying it once known), and `then`, what to do.
    No chunks: nothing runs (no Ray is started, no actor built)."""
    if not chunks:
        return []
    if engine.kind == "ray":
        from pipeline.engines.ray_data import map_on_ray

        return map_on_ray(engine, work, list(chunks), papers, desc, what, then)
    from pipeline.engines.local import map_here

    return map_here(work, list(chunks), papers, desc)

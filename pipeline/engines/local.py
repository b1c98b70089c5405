"""The local engine: the chunks mapped in this process, one after another, in order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipeline import progress
from pipeline.engines.chunks import Actor, WorkerError
from pipeline.errors import PipelineError


def map_here(work: Callable[[Any], Any] | Actor, chunks: list, papers, desc: str) -> list:
    """work(chunk) for each chunk (an Actor built once first), with a bar of papers done."""
    run = work.build() if isinstance(work, Actor) else work
    results = []
    with progress.bar(desc=desc, total=sum(papers(c) for c in chunks), unit="papers") as bar:
        for chunk in chunks:
            try:
                results.append(run(chunk))
            except WorkerError as exc:
                raise PipelineError(exc.line) from None
            bar.update(papers(chunk))
    return results

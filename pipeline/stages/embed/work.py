"""The Ray engine's embed work, resumable: each chunk is the papers to embed of one documents
shard (`pipeline.document_shards`), and its result a Parquet file of their vectors in a work
folder of the output folder (`<output_dir>/.work/embed-<digest>/`), written to a temporary name
and renamed into place. A chunk whose result file exists is done, so a rerun of the same work
(the same digest) after a killed run picks up from the results already written.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline import tables
from pipeline.document_shards import cut_name, shard_bounds
from pipeline.errors import PipelineError

WORK_DIR = ".work"


def work_folder(out_dir: Path, name: str, identity: str, keys: list[str], size: int) -> Path:
    """The work folder of this work: named by what decides its results (the items' keys in
    order, `identity`: the model and precision, and how the table is cut into shards)."""
    digest = hashlib.sha256(f"{identity}\x00{cut_name(size)}\x00".encode())
    for key in keys:
        digest.update(key.encode() + b"\x00")
    return Path(out_dir) / WORK_DIR / f"{name}-{digest.hexdigest()[:16]}"


@dataclass(frozen=True)
class ShardChunk:
    """One chunk of the work: the papers at `rows` of the documents shard `source` (their keys
    `keys`); once done, their vectors are `result`, a file of the work folder."""

    index: int
    source: Path
    rows: tuple[int, ...]
    keys: tuple[str, ...]
    result: Path

    @property
    def size(self) -> int:
        return len(self.rows)

    @property
    def attempts(self) -> Path:
        """A file of the work folder counting the tries at this chunk (a line each)."""
        return self.result.with_name(f"{self.source.stem}.attempts")

    @property
    def done(self) -> bool:
        return self.result.exists()


def plan(
    sources: list[Path], groups: list[list[int]], keys: list[str], size: int, folder: Path
) -> list[ShardChunk]:
    """The chunks with work in them: group i holds positions (in the whole table of `keys`) of
    papers in `sources[i]`, which holds the table's rows of `shard_bounds(len(keys), size)[i]`."""
    starts = [start for start, _ in shard_bounds(len(keys), size)]
    return [
        ShardChunk(
            i,
            Path(sources[i]),
            tuple(p - starts[i] for p in group),
            tuple(keys[p] for p in group),
            Path(folder) / f"vectors-{i:05d}.parquet",
        )
        for i, group in enumerate(groups)
        if group
    ]


def read_vectors(chunk: ShardChunk, width: int) -> np.ndarray:
    """A done chunk's vectors, checked against its papers (same keys, same order, same width)."""
    try:
        keys, vectors = tables.read_key_vectors(chunk.result, width)
    except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
        raise PipelineError(f"{chunk.result}: unreadable embed result ({exc})") from None
    if keys != list(chunk.keys):
        raise PipelineError(f"{chunk.result}: embed result does not match {chunk.source.name}")
    return vectors


def remove(folder: Path) -> None:
    """The work folder, once its results are in the stage's output (and `.work` if empty)."""
    shutil.rmtree(folder, ignore_errors=True)
    try:
        folder.parent.rmdir()
    except OSError:
        pass

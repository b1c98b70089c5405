"""Work cut into shards: the papers to embed of each documents shard (`document_shards`), whose
results are Parquet files in a work folder of the output folder
(`<output_dir>/.shards/<name>-<digest>/`), each written to a temporary name and renamed into
place. A shard whose result file exists is done, so a rerun of the same work (the same digest)
after a killed run picks up from the shards already written.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import tables
from pipeline.errors import PipelineError

WORK_DIR = ".shards"
# The tail of a table is cut finer: a shard holds at most a quarter of the papers left, down to
# 64 papers, so workers taking shards in turn finish close together (7 shards of 512 for 3,401
# papers left one of two workers idle for the last shard; the tail's 7 smaller shards do not).
TAIL_PARTS = 4
TAIL_MIN_PAPERS = 64


def chunk_bounds(n: int, size: int) -> list[tuple[int, int]]:
    """(start, stop) of consecutive chunks of `size` items (the last one shorter)."""
    return [(start, min(start + size, n)) for start in range(0, n, size)]


def shard_bounds(n: int, size: int) -> list[tuple[int, int]]:
    """(start, stop) of the shards of a table of `n` papers: `size` papers each, and where fewer
    than TAIL_PARTS * size papers are left, a TAIL_PARTS-th of those left (at least
    TAIL_MIN_PAPERS). Both engines embed in these shards, so they give the same vectors.

    Our own guided scheduling in a few lines: Ray Data hands blocks to actors as they come
    free but leaves their sizes to us, and the local engine must cut the same way."""
    bounds, start = [], 0
    while start < n:
        left = n - start
        step = min(size, left, max(TAIL_MIN_PAPERS, -(-left // TAIL_PARTS)))
        bounds.append((start, start + step))
        start += step
    return bounds


def work_folder(out_dir: Path, name: str, identity: str, keys: list[str], size: int) -> Path:
    """The work folder of this work: named by what decides its results (the items' keys in
    order, with their places; how the table is cut; `identity`: model and precision), so a rerun
    finds its shards."""
    cut = f"{size} tail {TAIL_PARTS} {TAIL_MIN_PAPERS}"  # how the table is cut into shards
    digest = hashlib.sha256(f"{identity}\x00{cut}\x00".encode())
    for key in keys:
        digest.update(key.encode() + b"\x00")
    return Path(out_dir) / WORK_DIR / f"{name}-{digest.hexdigest()[:16]}"


@dataclass(frozen=True)
class Shard:
    """One piece of work: the papers at `rows` of the shard file `source` (their keys `keys`);
    once done, their result is `result`, a file of the work folder."""

    index: int
    source: Path
    rows: tuple[int, ...]
    keys: tuple[str, ...]
    result: Path

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def size(self) -> int:
        return len(self.rows)

    @property
    def attempts(self) -> Path:
        """A file of the work folder counting the tries at this shard (a line each)."""
        return self.result.with_name(f"{self.source.stem}.attempts")

    @property
    def done(self) -> bool:
        return self.result.exists()


def plan(sources: list[Path], groups: list[list[int]], keys: list[str], size: int,
         folder: Path) -> list[Shard]:  # fmt: skip
    """The shards with work in them: group i holds positions (in the whole table of `keys`) of
    papers in `sources[i]`, which holds the table's rows of `shard_bounds(len(keys), size)[i]`."""
    starts = [start for start, _ in shard_bounds(len(keys), size)]
    return [
        Shard(i, Path(sources[i]), tuple(p - starts[i] for p in group),
              tuple(keys[p] for p in group), Path(folder) / f"vectors-{i:05d}.parquet")
        for i, group in enumerate(groups)
        if group
    ]  # fmt: skip


def write_vectors(path: Path, keys: list[str], vectors: np.ndarray) -> None:
    """A shard's result: (key, embedding) rows, float32, atomically."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), vectors.shape[1])
    table = pa.table({"key": pa.array(keys, pa.string()), "embedding": column})
    tables.atomic_write(Path(path), lambda tmp: pq.write_table(table, tmp))


def read_vectors(shard: Shard, width: int) -> np.ndarray:
    """A done shard's vectors, checked against its papers (same keys, same order, same width)."""
    try:
        table = pq.read_table(shard.result)
        flat = table.column("embedding").combine_chunks().flatten().to_numpy()
        vectors = flat.reshape(table.num_rows, width)
    except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
        raise PipelineError(f"{shard.result}: unreadable shard result ({exc})") from None
    if table.column("key").to_pylist() != list(shard.keys):
        raise PipelineError(f"{shard.result}: shard result does not match {shard.name}")
    return vectors.astype(np.float32, copy=False)


def remove(folder: Path) -> None:
    """The work folder, once its results are in the stage's output (and `.shards` if empty)."""
    shutil.rmtree(folder, ignore_errors=True)
    try:
        folder.parent.rmdir()
    except OSError:
        pass

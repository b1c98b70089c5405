"""The documents table as Parquet shards, for the Ray engine's workers: `documents.shards/`
beside documents.parquet, holding `part-00000.parquet`, ... in the table's order, cut as
`engines.shards.shard_bounds` says (`engine.shard_papers` papers each, smaller at the end).

With `engine: ray` the ingest stage writes them with documents.parquet; a stage that finds them
missing or not current (ingest ran on the local engine, or with another shard size) writes
them again from the table. Each shard records the fingerprint of the documents table it was cut
from, so shards of an older table are never read as this one's. The folder is written whole
under a temporary name and renamed into place.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from pipeline import schemas, tables
from pipeline.engines.shards import shard_bounds
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.engines")
SUFFIX = ".shards"
NOTE = "documents"  # the notes key holding the documents table's fingerprint


def _shard_notes(fingerprint: str, n_papers: int, size: int, rows: tuple[int, int]):
    """What a shard records: the table it was cut from (its fingerprint and papers), the shard
    size and the rows it holds, all a reader needs to know it is that table's, cut that way."""
    return {NOTE: fingerprint, "papers": str(n_papers), "shard_papers": str(size),
            "rows": f"{rows[0]}-{rows[1]}"}  # fmt: skip


def folder_of(documents: Path) -> Path:
    """Where the shards of `documents` live: documents.parquet -> documents.shards/ beside it."""
    return Path(documents).with_suffix(SUFFIX)


def part_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


def _ours(folder: Path) -> bool:
    """Whether `folder` holds nothing but shards (so it may be replaced or removed)."""
    return all(p.name.startswith("part-") and p.suffix == ".parquet" for p in folder.iterdir())


def drop(folder: Path) -> None:
    """Remove a shard folder (no longer current: the table was written on the local engine)."""
    if folder.is_dir():
        if not _ours(folder):
            raise PipelineError(f"{folder}: holds files that are not document shards; move them")
        shutil.rmtree(folder)


def write(papers: pd.DataFrame, folder: Path, size: int, fingerprint: str) -> list[Path]:
    """Cut `papers` (the documents table, whose fingerprint is `fingerprint`) into shards of at
    most `size` rows in a fresh folder, which then replaces `folder`."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    names = []
    try:
        for index, (start, stop) in enumerate(shard_bounds(len(papers), size)):
            names.append(part_name(index))
            notes = _shard_notes(fingerprint, len(papers), size, (start, stop))
            shard = papers.iloc[start:stop]
            tables.write_table(shard, tmp / names[-1], schemas.DOCUMENTS, notes=notes)
        os.chmod(tmp, 0o777 & ~tables.current_umask())  # mkdtemp makes it 0700
        drop(folder)
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for stale in folder.parent.glob(f".{folder.name}.*.tmp"):  # a killed run's (SIGKILL)
        shutil.rmtree(stale, ignore_errors=True)
    return [folder / name for name in names]


def _notes(path: Path) -> dict[str, str]:
    try:
        return tables.read_notes(path)
    except PipelineError:  # unreadable: not a current shard
        return {}


def current(folder: Path, n_papers: int, size: int, fingerprint: str) -> list[Path] | None:
    """The shard files of `folder` when they are this table's (its fingerprint, `n_papers` in
    shards of at most `size`), else None."""
    bounds = shard_bounds(n_papers, size)
    expected = [Path(folder) / part_name(i) for i in range(len(bounds))]
    found = sorted(Path(folder).glob("part-*.parquet")) if Path(folder).is_dir() else []
    if found != expected or any(
        _notes(path) != _shard_notes(fingerprint, n_papers, size, rows)
        for path, rows in zip(expected, bounds, strict=True)
    ):
        return None
    return expected


def ensure(papers: pd.DataFrame, documents: Path, size: int, fingerprint: str) -> list[Path]:
    """The shards of the documents table at `documents` (`papers`, read from it), written now
    when ingest did not leave current ones."""
    folder = folder_of(documents)
    found = current(folder, len(papers), size, fingerprint)
    if found is not None:
        return found
    log.info(
        "ray: writing %s as %d shards of at most %d papers in %s (ingest ran on the local "
        "engine, with another engine.shard_papers or an older version)",
        Path(documents).name, len(shard_bounds(len(papers), size)), size, folder,
    )  # fmt: skip
    return write(papers, folder, size, fingerprint)

"""The documents table as Parquet shards, for the Ray engine's workers: `documents.shards/`
beside documents.parquet, holding `part-00000.parquet`, ... in the table's order, cut as
`shard_bounds` says, and `manifest.json`, what they were cut from and how.

The ingest stage's `shards` command writes them (its one writer, `stages/ingest/shards.py`;
`make all` runs it when `engine.kind` is ray); the embed stage reads them. Both engines embed
in the same cut, so that both give the same vectors. The manifest names the documents table's
fingerprint, so shards of an older table are never read as this one's.
"""

from __future__ import annotations

import json
from pathlib import Path

SUFFIX = ".shards"
MANIFEST = "manifest.json"
# The tail of a table is cut finer: a shard holds at most a quarter of the papers left, down to
# 64 papers, so workers taking shards in turn finish close together (7 shards of 512 for 3,401
# papers left one of two workers idle for the last shard; the tail's 7 smaller shards do not).
TAIL_PARTS = 4
TAIL_MIN_PAPERS = 64


def shard_bounds(n: int, size: int) -> list[tuple[int, int]]:
    """(start, stop) of the shards of a table of `n` papers: `size` papers each, and where fewer
    than TAIL_PARTS * size papers are left, a TAIL_PARTS-th of those left (at least
    TAIL_MIN_PAPERS).

    Our own guided scheduling in a few lines: Ray Data hands blocks to actors as they come
    free but leaves their sizes to us, and the local engine must cut the same way."""
    bounds, start = [], 0
    while start < n:
        left = n - start
        step = min(size, left, max(TAIL_MIN_PAPERS, -(-left // TAIL_PARTS)))
        bounds.append((start, start + step))
        start += step
    return bounds


def cut_name(size: int) -> str:
    """How a table is cut into shards of `size` (what a result of the cut is named by too)."""
    return f"{size} tail {TAIL_PARTS} {TAIL_MIN_PAPERS}"


def folder_of(documents: Path) -> Path:
    """Where the shards of `documents` live: documents.parquet -> documents.shards/ beside it."""
    return Path(documents).with_suffix(SUFFIX)


def manifest_of(documents: Path) -> Path:
    return folder_of(documents) / MANIFEST


def part_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


def manifest(fingerprint: str, n_papers: int, size: int) -> dict:
    """What the shards of the documents table (its fingerprint, `n_papers`) cut into shards of
    at most `size` are: the table, the cut, and each part's file and rows."""
    parts = [
        {"file": part_name(i), "rows": [start, stop]}
        for i, (start, stop) in enumerate(shard_bounds(n_papers, size))
    ]
    return {"documents": fingerprint, "papers": n_papers, "cut": cut_name(size), "parts": parts}


def current(path: Path, n_papers: int, size: int, fingerprint: str) -> list[Path] | None:
    """The shard files the manifest at `path` lists when they are this table's (its
    fingerprint, `n_papers` in shards of at most `size`) and all there, else None."""
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing or unreadable: not current
        return None
    if found != manifest(fingerprint, n_papers, size):
        return None
    files = [Path(path).parent / part["file"] for part in found["parts"]]
    return files if all(f.is_file() for f in files) else None

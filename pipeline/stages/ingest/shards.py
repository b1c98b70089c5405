"""The `shards` command: documents.parquet -> documents.shards/ (`pipeline.document_shards`),
the documents cut into Parquet shards of `engine.shard_papers` papers for the Ray engine's
workers, and their manifest. The folder's one writer: `make all` and `topicmap build` run it
after ingest when `engine.kind` is ray, and the embed stage only reads what it wrote.

Current shards (this table's, cut this way) are kept and only the manifest is written again;
otherwise the folder is written whole under a temporary name and renamed into place.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from pipeline import schemas, tables
from pipeline.config import EngineConfig
from pipeline.document_shards import MANIFEST, current, manifest
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.ingest")


def _ours(folder: Path) -> bool:
    """Whether `folder` holds nothing but shards and their manifest (so it may be replaced)."""
    return all(
        (p.name.startswith("part-") and p.suffix == ".parquet") or p.name == MANIFEST
        for p in folder.iterdir()
    )


def _manifest_text(fingerprint: str, n_papers: int, size: int) -> str:
    return json.dumps(manifest(fingerprint, n_papers, size), indent=2) + "\n"


def write(papers: pd.DataFrame, folder: Path, size: int, fingerprint: str) -> list[Path]:
    """Cut `papers` (the documents table, whose fingerprint is `fingerprint`) into shards of at
    most `size` rows and their manifest in a fresh folder, which then replaces `folder`."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    if folder.is_dir() and not _ours(folder):
        raise PipelineError(f"{folder}: holds files that are not document shards; move them")
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    cut = manifest(fingerprint, len(papers), size)["parts"]
    try:
        for part in cut:
            start, stop = part["rows"]
            tables.write_table(papers.iloc[start:stop], tmp / part["file"], schemas.DOCUMENTS)
        (tmp / MANIFEST).write_text(_manifest_text(fingerprint, len(papers), size), "utf-8")
        os.chmod(tmp, 0o777 & ~tables.current_umask())  # mkdtemp makes it 0700
        if folder.is_dir():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for stale in folder.parent.glob(f".{folder.name}.*.tmp"):  # a killed run's (SIGKILL)
        shutil.rmtree(stale, ignore_errors=True)
    return [folder / part["file"] for part in cut]


def run(engine: EngineConfig, documents: Path, document_shards: Path) -> None:
    """Write the shards of `documents` into the folder of `document_shards` (their manifest)
    unless current ones are there; the manifest is written either way (Make's target)."""
    if Path(document_shards).name != MANIFEST:
        raise PipelineError(f"{document_shards}: the shards' manifest must be named {MANIFEST}")
    fingerprint = tables.read_lineage(documents, "documents").fingerprint
    size, folder = engine.shard_papers, Path(document_shards).parent
    n_papers = pq.read_metadata(documents).num_rows  # the table itself only when cutting it
    if current(document_shards, n_papers, size, fingerprint) is not None:
        tables.write_text(document_shards, _manifest_text(fingerprint, n_papers, size))
        log.info("the documents shards in %s are current", folder)
        return
    papers = tables.read_table(documents, schemas.DOCUMENTS)
    written = write(papers, folder, size, fingerprint)
    log.info("the documents as %d shards of at most %d papers in %s", len(written), size, folder)

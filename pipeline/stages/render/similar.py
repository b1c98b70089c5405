"""Each paper's most similar papers (the map's panel), kept between builds in
`<output>/.render/similar.parquet` so that a build adding a few papers to a large corpus
computes theirs, not everyone's: at 100,000 papers the full search (pynndescent above
neighbours.EXACT_MAX) is most of the render stage.

A paper is known when the kept table holds its doc_id with the same vector (a fingerprint of
its bytes). Known papers keep their kept list merged with the new papers (the union's best k,
ties to the lower index, as neighbours.top_k breaks them); a known paper one of whose kept
neighbours is gone or changed, and every new or changed paper, is searched afresh against all
papers. Up to EXACT_MAX papers this is what a full search gives (the kept lists hold the best of
the papers that stay, and every new paper is compared); above it the kept lists are
pynndescent's, as a build from scratch would compute them. When more than REDO_SHARE of the
papers would be searched afresh, all are (a full search is then as cheap), and so they are when
the known papers' order changed (a refit: papers added before take their doc_id's place).
pynndescent's own update needs its index pickled between builds, which this project does not
keep.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import tables
from pipeline.errors import PipelineError
from pipeline.neighbours import neighbours_among, similar_papers, unit_rows
from pipeline.stages.render.mapview import N_NEIGHBOURS, Similar, is_added, pages_order

log = logging.getLogger("pipeline.render")

FOLDER = ".render"  # in the output folder: render's own, not a table other stages read
FILE = "similar.parquet"
REDO_SHARE = 0.2  # above this share of papers to search afresh, search all
BLOCK_VALUES = 1 << 24  # similarities computed at a time


@dataclass(frozen=True)
class Kept:
    """The similar papers of a set of papers in the pages' order (pages_order): `prints` each
    paper's vector fingerprint, `neighbours` rows into that order, `similarities` their cosine."""

    doc_ids: list[str]
    prints: np.ndarray
    neighbours: np.ndarray
    similarities: np.ndarray


def fingerprints(vectors: np.ndarray) -> np.ndarray:
    """A 64-bit fingerprint of each row's bytes (a multiply-sum over its 32-bit words with fixed
    odd multipliers, wrapping), a block of rows at a time: a changed vector changes it."""
    words = np.ascontiguousarray(vectors, dtype=np.float32).view(np.uint32)
    rng = np.random.default_rng(20261205)
    multipliers = rng.integers(1, 2**63, size=words.shape[1], dtype=np.uint64) | np.uint64(1)
    out = np.empty(len(words), dtype=np.uint64)
    step = max(1, BLOCK_VALUES // max(words.shape[1], 1))
    with np.errstate(over="ignore"):
        for start in range(0, len(words), step):
            block = words[start : start + step].astype(np.uint64)
            out[start : start + step] = (block * multipliers).sum(axis=1, dtype=np.uint64)
    return out


def _merge(indices: np.ndarray, similarities: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's best k of its candidates: highest similarity first, ties to the lower index."""
    order = np.lexsort((indices, -similarities), axis=1)[:, :k]
    return np.take_along_axis(indices, order, axis=1), np.take_along_axis(similarities, order, 1)


def _searched(unit: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """`rows`' k most similar other papers among all, exactly."""
    found, values = neighbours_among(unit[rows], unit, k + 1)
    values = np.where(found == rows[:, None], -np.inf, values).astype(np.float32)
    return _merge(found, values, k)


def _with_new(
    unit: np.ndarray, keep: np.ndarray, kept: tuple[np.ndarray, np.ndarray], new: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The `keep` rows' kept lists (rows already in this build's order) merged with the `new`
    rows, a block of rows at a time."""
    indices, values = kept
    k = indices.shape[1]
    if len(new) == 0:
        return indices, values
    out_i, out_v = np.empty_like(indices), np.empty_like(values)
    step = max(1, BLOCK_VALUES // len(new))
    for start in range(0, len(keep), step):
        part = slice(start, start + step)
        sims = (unit[keep[part]] @ unit[new].T).astype(np.float32)
        both_i = np.concatenate([indices[part], np.broadcast_to(new, sims.shape)], axis=1)
        both_v = np.concatenate([values[part], sims], axis=1)
        out_i[part], out_v[part] = _merge(both_i, both_v, k)
    return out_i, out_v


def update(doc_ids: list[str], vectors: np.ndarray, previous: Kept | None, k: int) -> Kept:
    """Pure core: the similar papers of `doc_ids` (the pages' order) from `vectors` (that
    order), reusing `previous` where it holds them (None: search all)."""
    prints = fingerprints(vectors)
    n = len(doc_ids)
    k_now = min(k, max(n - 1, 0))
    full = None
    if previous is None or previous.neighbours.shape[1] != k_now or n == 0:
        full = "nothing kept"
    else:
        at = pd.Index(previous.doc_ids).get_indexer(doc_ids)  # -1: new
        known = at >= 0
        known[known] = previous.prints[at[known]] == prints[known]
        to_new = np.full(len(previous.doc_ids), -1, dtype=np.int64)
        to_new[at[known]] = np.flatnonzero(known)
        keep = np.flatnonzero(known)
        remapped = to_new[previous.neighbours[at[keep]]]
        lost = (remapped < 0).any(axis=1)  # a kept neighbour gone or changed
        redo = np.sort(np.concatenate([np.flatnonzero(~known), keep[lost]]))
        if len(redo) > REDO_SHARE * n:
            full = f"{len(redo)} of {n} papers new, changed or next to one"
        elif (np.diff(at[keep]) < 0).any():  # ties are broken by place: kept lists would differ
            full = "the papers' order changed (a refit places added papers among the fitted)"
    if full is not None:
        neighbours, similarities = similar_papers(vectors, k)
        log.info("similar papers of all %d papers searched (%s)", n, full)
        return Kept(list(doc_ids), prints, neighbours, similarities)
    new = np.flatnonzero(~known)
    if not len(new) and not len(redo) and len(previous.doc_ids) == n:
        return previous  # the same papers and vectors: nothing to search or to write
    unit = unit_rows(vectors)
    clean = keep[~lost]
    neighbours = np.empty((n, k_now), dtype=np.int64)
    similarities = np.empty((n, k_now), dtype=np.float32)
    kept = (remapped[~lost], previous.similarities[at[clean]])
    neighbours[clean], similarities[clean] = _with_new(unit, clean, kept, new)
    if len(redo):
        neighbours[redo], similarities[redo] = _searched(unit, redo, k_now)
    log.info(
        "similar papers kept for %d of %d papers (%d searched afresh)", len(clean), n, len(redo)
    )
    return Kept(list(doc_ids), prints, neighbours, similarities)


def read(folder: Path) -> Kept | None:
    """The similar papers kept in the output `folder`, or None (none, or unreadable: noted)."""
    path = Path(folder) / FOLDER / FILE
    if not path.exists():
        return None
    try:
        table = pq.read_table(path)

        def matrix(name: str) -> np.ndarray:
            column = table.column(name).combine_chunks()
            return column.flatten().to_numpy().reshape(len(table), column.type.list_size)

        return Kept(
            table.column("doc_id").to_pylist(),
            table.column("print").to_numpy().astype(np.uint64),
            matrix("neighbours").astype(np.int64),
            matrix("similarities").astype(np.float32),
        )
    except (OSError, ValueError, KeyError, AttributeError, pa.ArrowException) as exc:
        log.info("the kept similar papers are not readable, all searched: %s", exc)
        return None


def write(folder: Path, kept: Kept) -> None:
    """Keep the similar papers in the output `folder` (written atomically)."""
    path = Path(folder) / FOLDER / FILE
    k = kept.neighbours.shape[1] if kept.neighbours.ndim == 2 else 0
    if k == 0:  # one paper or none: nothing worth keeping
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "doc_id": pa.array(kept.doc_ids, pa.string()),
            "print": pa.array(kept.prints, pa.uint64()),
            "neighbours": pa.FixedSizeListArray.from_arrays(
                pa.array(kept.neighbours.astype(np.int32).ravel()), k
            ),
            "similarities": pa.FixedSizeListArray.from_arrays(
                pa.array(kept.similarities.astype(np.float32).ravel()), k
            ),
        }
    )
    tables.atomic_write(path, lambda tmp: pq.write_table(table, tmp))


def similar_for(
    folder: Path, doc_ids: list[str], vectors: np.ndarray, placed: pd.DataFrame
) -> Similar:
    """The papers' Similar (mapview.similar_of's, in the pages' order; `placed`: the clusters
    table's doc_id and placed), reusing and then keeping the similar papers of the output
    `folder`."""
    at = pd.Index(placed["doc_id"]).get_indexer(doc_ids)
    if (at < 0).any():
        raise PipelineError("the embeddings do not hold the clustered papers: rerun make")
    order = pages_order(doc_ids, is_added(placed["placed"].to_numpy())[at])
    previous = read(folder)
    kept = update([doc_ids[i] for i in order], np.asarray(vectors)[order], previous, N_NEIGHBOURS)
    if kept is not previous:
        write(folder, kept)
    return Similar(kept.doc_ids, kept.neighbours, kept.similarities)

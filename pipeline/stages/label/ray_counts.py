"""Counting the papers' terms on Ray: the fitted papers' texts in chunks of
`engine.shard_papers`, each chunk counted by a Ray Data task (`map_batches`, up to
`engine.concurrency` at once) exactly as the local engine counts the same chunk
(`counts.count_chunk`); the driver sums the chunks' tables. Labels are then made on the driver.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from scipy import sparse

from pipeline.config import EngineConfig
from pipeline.engines.chunks import map_chunks
from pipeline.engines.shards import chunk_bounds
from pipeline.stages.label.counts import Counter, TermCounts, count_chunk, summed

log = logging.getLogger("pipeline.label")


def count_batch(batch: dict, max_ngram: int) -> dict:
    """One chunk per batch, its table flattened for the trip back: groups, terms, sizes and
    the entries of both matrices (which have the same places)."""
    table = count_chunk(list(batch["texts"][0]), np.asarray(batch["groups"][0]), max_ngram)
    uses, papers = table.uses.tocoo(), table.papers.tocoo()
    return {
        "start": np.asarray(batch["start"]),
        "groups": [table.groups],
        "terms": [np.asarray(table.vocabulary.tolist(), dtype=str)],
        "sizes": [table.sizes],
        "rows": [uses.row],
        "columns": [uses.col],
        "uses": [uses.data],
        "paper_rows": [papers.row],
        "paper_columns": [papers.col],
        "papers": [papers.data],
    }


def unflattened(row: dict) -> TermCounts:
    groups = np.asarray(row["groups"], np.int64)
    terms = np.asarray(row["terms"], dtype=object)
    shape = (len(groups), len(terms))

    def matrix(values, rows, columns) -> sparse.csr_matrix:
        where = (np.asarray(rows, np.int64), np.asarray(columns, np.int64))
        built = sparse.csr_matrix((np.asarray(values, np.int64), where), shape=shape)
        built.sort_indices()
        return built

    return TermCounts(
        groups, terms, matrix(row["uses"], row["rows"], row["columns"]),
        matrix(row["papers"], row["paper_rows"], row["paper_columns"]),
        np.asarray(row["sizes"], np.int64),
    )  # fmt: skip


def ray_counter(engine: EngineConfig) -> Counter:
    """`count` (see counts.Counter) on Ray tasks; no Ray is started for no papers."""

    def count(texts: list[str], groups: np.ndarray, max_ngram: int) -> TermCounts:
        groups = np.asarray(groups, dtype=np.int64)
        bounds = chunk_bounds(len(texts), engine.shard_papers)
        if not bounds:
            return summed([])
        start = time.perf_counter()
        items = [{"start": s, "texts": texts[s:e], "groups": groups[s:e]} for s, e in bounds]
        parts = map_chunks(
            engine, items, count_batch, desc="counting terms on Ray", total=len(texts),
            done=lambda row: int(np.sum(row["sizes"])), convert=unflattened,
            failure="counting terms", stage="label", fn_kwargs={"max_ngram": max_ngram},
        )  # fmt: skip
        seconds = time.perf_counter() - start
        log.info("ray: counted the terms of %d papers in %d chunks in %.1f s", len(texts),
                 len(bounds), seconds)  # fmt: skip
        return summed([parts[s] for s, _ in bounds])

    return count

"""The term counts labels are made from, counted once, paper by paper: for each group of papers
(a topic), how often its papers use each term (the counts c-TF-IDF weighs) and how many of its
papers use it (the shares CommonTerms keeps terms by and themes are named by).

Papers are counted a chunk of `engine.shard_papers` at a time, through the engine
(`engines.map_chunks`): here (the local engine) or by Ray Data tasks (`engine: ray`). A chunk's
table holds its own terms; the driver sums the chunks' tables over the union of their terms, so
both engines give the same counts. Terms are `pipeline.text`'s, counted per paper: never
across two papers' texts.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from pipeline.config import EngineConfig
from pipeline.engines import chunk_bounds, map_chunks
from pipeline.text import term_analyzer

log = logging.getLogger("pipeline.label")


@dataclass(frozen=True)
class TermCounts:
    """Group x term tables: `groups` (sorted ids, the rows), `vocabulary` (sorted terms, the
    columns), `uses` (times the group's papers use the term), `papers` (the group's papers using
    it) and `sizes` (papers per group)."""

    groups: np.ndarray
    vocabulary: np.ndarray
    uses: sparse.csr_matrix
    papers: sparse.csr_matrix
    sizes: np.ndarray

    def row(self, group: int) -> int:
        return int(np.searchsorted(self.groups, group))

    def papers_using(self, group: int) -> dict[str, int]:
        """term -> papers of `group` using it (the terms its papers use)."""
        line = self.papers.getrow(self.row(group))
        pairs = zip(line.indices.tolist(), line.data.tolist(), strict=True)
        return {str(self.vocabulary[i]): n for i, n in pairs}

    def merged(self, into: dict[int, int]) -> TermCounts:
        """The groups summed into larger ones (`into`: group -> its new group; topics into
        themes); a group not in `into` keeps its id."""
        target = np.array([into.get(int(g), int(g)) for g in self.groups], dtype=np.int64)
        ids, member = _membership(target)
        return TermCounts(
            ids,
            self.vocabulary,
            _int(member @ self.uses),
            _int(member @ self.papers),
            np.rint(member @ self.sizes).astype(np.int64),
        )


def _membership(labels: np.ndarray) -> tuple[np.ndarray, sparse.csr_matrix]:
    """(the sorted distinct labels, label x item matrix with a 1 where the item has the label):
    multiplied with an item x term table it sums the table by label."""
    ids = np.unique(labels)
    rows = np.searchsorted(ids, labels)
    member = sparse.csr_matrix(
        (np.ones(len(labels)), (rows, np.arange(len(labels)))), shape=(len(ids), len(labels))
    )
    return ids, member


def _int(matrix) -> sparse.csr_matrix:
    matrix = sparse.csr_matrix(matrix, dtype=np.int64)
    matrix.sort_indices()
    return matrix


def _sizes(member: sparse.csr_matrix) -> np.ndarray:
    return np.asarray(member.sum(axis=1), dtype=np.int64).ravel()


def empty_counts(groups: np.ndarray) -> TermCounts:
    ids, member = _membership(np.asarray(groups, dtype=np.int64))
    none = sparse.csr_matrix((len(ids), 0), dtype=np.int64)
    return TermCounts(ids, np.array([], dtype=object), none, none.copy(), _sizes(member))


def count_chunk(texts: Sequence[str], groups: np.ndarray, max_ngram: int) -> TermCounts:
    """One chunk's table, over the terms its papers use: scikit-learn's CountVectorizer with the
    term analyser makes the paper x term counts, which are summed by group."""
    from sklearn.feature_extraction.text import CountVectorizer

    groups = np.asarray(groups, dtype=np.int64)
    try:
        vectorizer = CountVectorizer(analyzer=term_analyzer(max_ngram))
        per_paper = vectorizer.fit_transform(list(texts))
    except ValueError:  # no term in any text (e.g. papers of one filler word each)
        return empty_counts(groups)
    ids, member = _membership(groups)
    used = (per_paper > 0).astype(np.int64)
    terms = np.asarray(vectorizer.get_feature_names_out(), dtype=object)
    return TermCounts(ids, terms, _int(member @ per_paper), _int(member @ used), _sizes(member))


def summed(parts: list[TermCounts]) -> TermCounts:
    """The chunks' tables summed over the union of their groups and terms (in Python's string
    order, as CountVectorizer sorts its vocabulary)."""
    parts = [p for p in parts if len(p.groups)]
    if not parts:
        return empty_counts(np.zeros(0, np.int64))
    ids = np.unique(np.concatenate([p.groups for p in parts]))
    vocabulary = sorted(set().union(*(p.vocabulary.tolist() for p in parts)))
    column_of = {term: i for i, term in enumerate(vocabulary)}
    shape = (len(ids), len(vocabulary))
    uses: list[tuple] = []
    papers: list[tuple] = []
    sizes = np.zeros(len(ids), np.int64)
    for part in parts:
        rows = np.searchsorted(ids, part.groups)
        terms = part.vocabulary.tolist()
        columns = np.fromiter((column_of[t] for t in terms), np.int64, len(terms))
        uses.append(_moved(part.uses, rows, columns))
        papers.append(_moved(part.papers, rows, columns))
        np.add.at(sizes, rows, part.sizes)
    return TermCounts(
        ids,
        np.array(vocabulary, dtype=object),
        _stacked(uses, shape),
        _stacked(papers, shape),
        sizes,
    )


def _moved(matrix: sparse.csr_matrix, rows: np.ndarray, columns: np.ndarray):
    coo = matrix.tocoo()
    return rows[coo.row], columns[coo.col], coo.data


def _stacked(pieces: list, shape: tuple[int, int]) -> sparse.csr_matrix:
    """Entries from every chunk in one matrix; entries at the same place are summed."""
    rows, columns, data = (np.concatenate(p) for p in zip(*pieces, strict=True))
    return _int(sparse.coo_matrix((data, (rows, columns)), shape=shape))


def count_of(chunk: tuple[list[str], np.ndarray, int]) -> TermCounts:
    """The engine's work: one chunk's (texts, groups, max_ngram) counted."""
    return count_chunk(*chunk)


def count_terms(
    texts: list[str], groups: np.ndarray, max_ngram: int, engine: EngineConfig
) -> TermCounts:
    """The papers' term counts by group, counted a chunk of `engine.shard_papers` papers at a
    time on the configured engine and summed; no engine runs for no papers."""
    groups = np.asarray(groups, dtype=np.int64)
    bounds = chunk_bounds(len(texts), engine.shard_papers)
    chunks = [(list(texts[s:e]), groups[s:e], max_ngram) for s, e in bounds]
    start = time.perf_counter()
    parts = map_chunks(
        engine,
        count_of,
        chunks,
        papers=lambda chunk: len(chunk[0]),
        desc="counting terms",
        what="counting terms",
        then="rerun the label stage",
    )
    if chunks:
        log.info(
            "counted the terms of %d papers in %d chunks on the %s engine in %.1f s",
            len(texts),
            len(chunks),
            engine.kind,
            time.perf_counter() - start,
        )
    return summed(parts)

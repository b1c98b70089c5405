"""Terms that tell a group's papers (a topic's, a theme's) from its nearest groups' papers: the
candidates a label is chosen from, best first.

A term's score in a group is (its share of the group's papers + its share of their titles) x
log(that share / its share of the nearest groups' papers): how much it says about the group
(titles name a paper's subject, so a term in them counts again) times how far it tells the group
from the groups a reader could mistake it for. A term the nearest groups use as often scores
nothing, and so does one no more common in the group than in the whole corpus (a merely frequent
word); only terms that `min_share` of the group's papers use are candidates. Our own few lines:
it is a form of the informativeness in themes.py, measured against neighbours rather than the
corpus, over the counts the stage has already made.
"""

from __future__ import annotations

import functools
import re

import numpy as np
from scipy import sparse

from pipeline.phrases import singular
from pipeline.stages.label.counts import TermCounts
from pipeline.text import term_words

CORPUS_LIFT = 2.0  # a candidate is at least this many times as common in its group as elsewhere


def nearest_groups(centroids: np.ndarray, k: int) -> list[np.ndarray]:
    """Per group (a row of unit `centroids`), the indices of its `k` most similar other
    groups, most similar first (ties: lower index)."""
    similarity = centroids @ centroids.T
    found = []
    for i, row in enumerate(similarity):
        order = [j for j in np.lexsort((np.arange(len(row)), -row)) if j != i]
        found.append(np.asarray(order[:k], dtype=np.int64))
    return found


def _row_counts(matrix, row: int, columns: np.ndarray) -> np.ndarray:
    return np.asarray(matrix[row][:, columns].todense(), dtype=float).ravel()


def contrast_terms(
    counts: TermCounts,
    title_counts: TermCounts,
    neighbours: dict[int, list[int]],
    min_share: float,
) -> dict[int, list[tuple[str, float]]]:
    """group -> its candidate terms with their scores, best first (ties: by term). `counts`: the
    papers' term counts by group, `title_counts` their titles' (same groups), `neighbours`:
    group -> the groups it is told apart from."""
    papers = counts.papers.tocsr()
    sizes = counts.sizes.astype(float)
    everywhere = np.asarray(papers.sum(axis=0), dtype=float).ravel()
    title_column = {t: i for i, t in enumerate(title_counts.vocabulary.tolist())}
    titles = title_counts.papers.tocsr()
    total = float(sizes.sum())
    found = {}
    for g, group in enumerate(counts.groups.tolist()):
        line = papers.getrow(g)
        columns, inside = line.indices, line.data.astype(float)
        keep = inside >= max(min_share * sizes[g], min(2.0, sizes[g]))
        columns, inside = columns[keep], inside[keep]
        share = inside / max(sizes[g], 1.0)
        rows = [counts.row(n) for n in neighbours.get(group, [])]
        near_size = float(sizes[rows].sum()) if rows else 0.0
        near = sum((_row_counts(papers, r, columns) for r in rows), np.zeros(len(columns)))
        near_share = (near + 1.0) / (near_size + 1.0)  # +1: never 0
        rest_share = (everywhere[columns] - inside + 1.0) / (total - sizes[g] + 1.0)
        title_share = np.zeros(len(columns))
        t_row = title_counts.row(group) if group in set(title_counts.groups.tolist()) else None
        terms = counts.vocabulary[columns]
        if t_row is not None:
            line = titles.getrow(t_row).toarray().ravel()
            title_share = np.array(
                [line[title_column[t]] if t in title_column else 0.0 for t in terms]
            ) / max(sizes[g], 1.0)
        score = (share + title_share) * np.log(share / near_share)
        good = (score > 0) & (share >= CORPUS_LIFT * rest_share)
        order = [i for i in np.lexsort((terms, -score)) if good[i]]
        found[group] = [(str(terms[i]), round(float(score[i]), 6)) for i in order]
    return found


class WordEvidence:
    """Which papers use which words (the words of their terms, plurals folded), to judge a
    label by the papers it names: `score(words, inside, outside)` is m x log(m / m') where m is
    the mean over the `inside` papers (a group's) of the rarity-weighted (idf) sum of the
    label's words they use, m' the same over the `outside` papers (its nearest groups'). A
    label whose words its papers use, and its neighbours' papers do not, scores highest."""

    def __init__(self, texts: list[str], analyzer):
        from sklearn.feature_extraction.text import CountVectorizer

        read = functools.partial(words_in, analyzer=analyzer)
        vectorizer = CountVectorizer(analyzer=read, binary=True, dtype=np.float64)
        try:
            self.incidence = vectorizer.fit_transform(texts).tocsc()
            self.column = dict(vectorizer.vocabulary_)
        except ValueError:  # no word at all
            self.incidence, self.column = sparse.csc_matrix((len(texts), 0)), {}
        used = np.asarray(self.incidence.sum(axis=0)).ravel()
        self.idf = np.log(max(len(texts), 1) / np.maximum(used, 1.0))

    def score(self, words: set[str], inside: np.ndarray, outside: np.ndarray) -> float:
        columns = sorted(self.column[w] for w in words if w in self.column)
        if not columns or not len(inside):
            return -np.inf
        named = self.incidence[:, columns] @ self.idf[columns]
        mine = float(named[inside].mean())
        theirs = float(named[outside].mean()) if len(outside) else 0.0
        if mine <= 0:
            return -np.inf
        return mine * np.log(mine / (theirs + 1e-3))


def words_in(text: str, analyzer) -> set[str]:
    """A text's words as WordEvidence counts a paper's: the `analyzer`'s terms cut into words
    (`term_words`), plurals folded."""
    return set().union(*map(_folded_words, analyzer(text)))


@functools.lru_cache(maxsize=1 << 18)
def _folded_words(term: str) -> frozenset[str]:
    """A term's words, plurals folded (terms repeat across papers: each is split once)."""
    return frozenset(singular(w) for w in term_words(term))


def label_words(*terms: str) -> set[str]:
    """The words a label of these terms names (a term may be a whole label: its commas and
    colons part its phrases), plurals folded."""
    phrases = [p for term in terms for p in re.split(r"[,:]", term)]
    return {singular(w) for phrase in phrases for w in term_words(phrase)}

"""Group labels (themes, areas) chosen together so that a reader who matches each paper to the
label whose words it uses most picks its own group's label.

Each group has its options (label texts, simplest first). A paper's score for a label is the sum
of the rarity (idf, `WordEvidence` over `reader_words`: every word, as a reader sees it) of the
label's words it uses, plurals folded (a group label's words read as the papers' are,
`read_words`; a topic label's as its terms, `label_words`); a paper is matched when its own
group's label scores strictly highest (a tie is a miss). Starting from every group's first
option, each group in turn takes the option that matches the most papers of all groups, the
other labels held; rounds repeat until no label changes (at most ROUNDS). Ties keep the earlier
option, so a longer label must match more papers than a shorter one. Two groups never hold the
same label text, nor labels with the same head phrase (`heads`).
Our own few lines: a coordinate ascent on the label stage's own word evidence (no encoder,
not the metrics stage's BM25).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from scipy import sparse

from pipeline.stages.label.contrast import WordEvidence, label_words, words_in
from pipeline.text import term_analyzer

Reading = Callable[[str], set[str]]  # a label's words, as its choice counts them
ROUNDS = 4  # passes over the groups at most
OPTION_BLOCK = 256  # options scored at once: papers x OPTION_BLOCK scores held
_WORD = re.compile(r"[^\W\d_]{2,}")  # a reader's words: runs of two or more letters


def reader_words(text: str) -> list[str]:
    """The words a reader matches a label by: every run of two or more letters, lower-cased,
    stop words and filler included (a label's `tasks` or `models` is read too); in a text
    with other scripts, its terms' words as well (Chinese and Japanese are cut into words)."""
    found = _WORD.findall(text.lower())
    return found if text.isascii() else found + list(term_analyzer()(text))


def reader_evidence(texts: list[str]) -> WordEvidence:
    """Which papers (`texts`) use which of a reader's words (`reader_words`), plurals folded."""
    return WordEvidence(texts, reader_words)


def read_words(text: str) -> set[str]:
    """A label's words read as the papers' are (`reader_evidence`): `multi-agent` is `multi`
    and `agent`. Group labels are read so; read as terms (`label_words`, hyphenated words
    whole), such words named no paper and counted nothing (0.610 -> 0.629 of the 3,401 papers
    matched to their theme's label, docs/quality.md)."""
    return words_in(text, reader_words)


def _weights(evidence: WordEvidence, texts: list[str], read: Reading) -> sparse.csc_matrix:
    """words x texts: the idf of each word a text names (`read`)."""
    pairs = [
        (evidence.column[word], k)
        for k, text in enumerate(texts)
        for word in sorted(read(text))
        if word in evidence.column
    ]
    columns = np.array([c for c, _ in pairs], dtype=np.int64)
    return sparse.csc_matrix(
        (evidence.idf[columns], (columns, [k for _, k in pairs])),
        shape=(len(evidence.idf), len(texts)),
    )


def option_scores(
    evidence: WordEvidence, papers: np.ndarray, texts: list[str], read: Reading = label_words
) -> np.ndarray:
    """papers x texts: each paper's summed idf of the words of each text (`read`) it uses."""
    return np.asarray((evidence.incidence[papers] @ _weights(evidence, texts, read)).todense())


def _matched(scores: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Which papers' own column (`own`) is their unique best."""
    mine = scores[np.arange(len(own)), own]
    return (scores >= mine[:, None]).sum(axis=1) == 1


class _Rivals:
    """For each paper, the two best labels other than its own group's (values and columns),
    kept as the labels change: the best label a paper could be mistaken for, leaving out any one
    group, without a pass over every group (papers x groups) for each group."""

    def __init__(self, table: np.ndarray, own: np.ndarray):
        self.table, self.own = table, own
        n = len(own)
        self.first, self.second = np.full(n, -np.inf), np.full(n, -np.inf)
        self.column = np.full(n, -1, dtype=np.int64)
        self.column2 = np.full(n, -1, dtype=np.int64)
        self.refresh(np.arange(n))

    def refresh(self, rows: np.ndarray) -> None:
        """Recompute the two best of `rows` from the table (a block of rows at a time)."""
        step = max(1, (1 << 22) // max(self.table.shape[1], 1))
        for start in range(0, len(rows), step):
            part = rows[start : start + step]
            values = self.table[part].copy()
            values[np.arange(len(part)), self.own[part]] = -np.inf
            if values.shape[1] < 2:
                values = np.hstack([values, np.full((len(part), 2 - values.shape[1]), -np.inf)])
            top = np.argpartition(-values, 1, axis=1)[:, :2]
            pair = np.take_along_axis(values, top, axis=1)
            self.first[part], self.second[part] = pair[:, 0], pair[:, 1]
            self.column[part], self.column2[part] = top[:, 0], top[:, 1]

    def without(self, g: int) -> np.ndarray:
        """Each paper's best label that is neither its own nor group g's."""
        return np.where(self.column == g, self.second, self.first)

    def set_column(self, g: int, values: np.ndarray) -> None:
        """Group g's label now scores `values`: a paper whose score for g fell while g was one
        of its two best is recomputed; any other changed paper takes g's new score in."""
        changed = np.flatnonzero((self.table[:, g] != values) & (self.own != g))
        fell = values[changed] < self.table[changed, g]
        held = (self.column[changed] == g) | (self.column2[changed] == g)
        self.table[:, g] = values
        self.refresh(changed[fell & held])
        rows = changed[~(fell & held)]
        v = values[rows]
        at_first = self.column[rows] == g  # rose while first: stays first
        self.first[rows[at_first]] = v[at_first]
        rest, v = rows[~at_first], v[~at_first]
        was_second = self.column2[rest] == g  # rose while second: drop it from second first
        top = v > self.first[rest]
        # above the first: the first moves down (unless g was the second, which it replaces)
        down = rest[top]
        self.second[down] = self.first[down]
        self.column2[down] = self.column[down]
        self.first[down], self.column[down] = v[top], g
        mid = ~top & ((v > self.second[rest]) | was_second)
        self.second[rest[mid]], self.column2[rest[mid]] = v[mid], g


def _counted(rivals: _Rivals, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The papers whose match depends on group `g`'s label, the other groups' labels held:
    its own papers (matched where g's label beats their best rival, `bar`) and the others'
    papers their own label matches against every label but g's (matched while g's label stays
    below their own's score, `bar`); every other paper is missed whatever g's label. Returns
    (rows, bar, whether each row is g's)."""
    own, table = rivals.own, rivals.table
    in_g = own == g
    mine = table[np.arange(len(own)), own]
    rival = rivals.without(g)  # the best label that is neither g's nor the paper's own
    rows = np.flatnonzero(in_g | (mine > rival))
    return rows, np.where(in_g[rows], rival[rows], mine[rows]), in_g[rows]


def _best_option(scores: np.ndarray, bar: np.ndarray, of_g: np.ndarray) -> np.ndarray:
    """Per option (columns of `scores`, of the rows `_counted` gives), the papers matched with
    it as the group's label: its own papers (`of_g`) where it scores above `bar`, the others'
    where it scores below."""
    above = (scores[of_g] > bar[of_g, None]).sum(axis=0)
    return above + (scores[~of_g] < bar[~of_g, None]).sum(axis=0)


class _Scorer:
    """The groups' papers (`own`: each one's group) and how they score any group's options."""

    def __init__(self, options, groups, evidence: WordEvidence, rows, read: Reading):
        self.options, self.groups, self.evidence, self.read = options, groups, evidence, read
        empty = np.zeros(0, np.int64)
        papers = np.concatenate([rows.get(g, empty) for g in groups]).astype(np.int64)
        own = np.concatenate([np.full(len(rows.get(g, ())), i) for i, g in enumerate(groups)])
        self.own = own.astype(np.int64)
        self.incidence = evidence.incidence[papers].tocsc()  # the papers' words, by word

    def scores(self, i: int, picked: range, rows: np.ndarray | None = None) -> np.ndarray:
        """papers (`rows` of them, else all) x the `picked` options of group i (option_scores,
        from the words they name): made again at each turn rather than held, since all groups'
        would be papers x all options; OPTION_BLOCK at a time, so a group's thousands of options
        never are. A sparse table of the papers' words times a dense one of the options' (a
        sparse product made dense took twice as long)."""
        texts = [self.options[self.groups[i]][k] for k in picked]
        weights = _weights(self.evidence, texts, self.read)
        used = np.unique(weights.indices)
        words = self.incidence[:, used]
        if rows is not None:
            words = words.tocsr()[rows]
        return words @ weights[used].toarray()

    def hits(self, i: int, rivals: _Rivals) -> np.ndarray:
        """Per option of group i, the papers matched with it (`_best_option` over the papers
        `_counted` finds: the rest are missed whatever the option)."""
        count = len(self.options[self.groups[i]])
        blocks = [range(s, min(s + OPTION_BLOCK, count)) for s in range(0, count, OPTION_BLOCK)]
        rows, bar, of_g = _counted(rivals, i)
        return np.concatenate([_best_option(self.scores(i, b, rows), bar, of_g) for b in blocks])


def matched_labels(
    options: dict[int, list[str]],
    heads: dict[int, list[frozenset]],
    evidence: WordEvidence,
    rows: dict[int, np.ndarray],
    read: Reading = label_words,
) -> dict[int, int]:
    """group -> the index of its chosen option. `options`: each group's label texts, simplest
    first; `heads`: each option's head phrase (no two groups share one); `rows`: each group's
    papers (rows of `evidence`); `read`: a label's words (topic labels: `label_words`, group
    labels: `read_words`)."""
    groups = sorted(options)
    if not groups:
        return {}
    scorer = _Scorer(options, groups, evidence, rows, read)
    chosen = {g: 0 for g in groups}
    table = np.empty((len(scorer.own), len(groups)))
    for i in range(len(groups)):
        table[:, i] = scorer.scores(i, range(1))[:, 0]
    rivals = _Rivals(table, scorer.own)
    for _ in range(ROUNDS):
        changed = False
        for i, g in enumerate(groups):
            if len(options[g]) < 2:  # nothing to choose (a label held fixed)
                continue
            matched = scorer.hits(i, rivals)
            held = {options[h][chosen[h]] for h in groups if h != g}
            held_heads = {heads[h][chosen[h]] for h in groups if h != g}
            free = [
                k
                for k in range(len(options[g]))
                if options[g][k] not in held and heads[g][k] not in held_heads
            ]
            if not free:
                continue
            best = max(free, key=lambda k: (matched[k], -k))
            if best != chosen[g] and (chosen[g] not in free or matched[best] > matched[chosen[g]]):
                chosen[g], changed = best, True
                rivals.set_column(i, scorer.scores(i, range(best, best + 1))[:, 0])
        if not changed:
            break
    return chosen


def matched_share(
    texts: dict[int, str], evidence: WordEvidence, rows: dict[int, np.ndarray]
) -> float:
    """The share of the groups' papers whose own label (`texts`) scores strictly highest."""
    groups = sorted(texts)
    papers = np.concatenate([rows[g] for g in groups]).astype(np.int64)
    own = np.concatenate([np.full(len(rows[g]), i) for i, g in enumerate(groups)]).astype(int)
    table = option_scores(evidence, papers, [texts[g] for g in groups], read_words)
    return float(_matched(table, own).mean()) if len(own) else 0.0

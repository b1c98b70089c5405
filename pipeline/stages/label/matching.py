"""Group labels (themes, areas) chosen together so that a reader who matches each paper to the
label whose words it uses most picks its own group's label.

Each group has its options (label texts, simplest first). A paper's score for a label is the sum
of the rarity (idf, `WordEvidence` over `reader_words`: every word, as a reader sees it) of the
label's words it uses, plurals folded; a paper is
matched when its own group's label scores strictly highest (a tie is a miss). Starting from
every group's first option, each group in turn takes the option that matches the most papers
of all groups, the other labels held; rounds repeat until no label changes (at most ROUNDS).
Ties keep the earlier option, so a longer label must match more papers than a shorter one.
Two groups never hold the same label text, nor labels with the same head phrase (`heads`).
Our own few lines: a coordinate ascent on the label stage's own word evidence (no encoder,
not the metrics stage's BM25).
"""

from __future__ import annotations

import re

import numpy as np
from scipy import sparse

from pipeline.stages.label.contrast import WordEvidence, label_words
from pipeline.text import term_analyzer

ROUNDS = 4  # passes over the groups at most
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


def option_scores(evidence: WordEvidence, papers: np.ndarray, texts: list[str]) -> np.ndarray:
    """papers x texts: each paper's summed idf of the words of each text it uses."""
    pairs = [
        (evidence.column[word], k)
        for k, text in enumerate(texts)
        for word in sorted(label_words(text))
        if word in evidence.column
    ]
    columns = np.array([c for c, _ in pairs], dtype=np.int64)
    weights = sparse.csc_matrix(
        (evidence.idf[columns], (columns, [k for _, k in pairs])),
        shape=(len(evidence.idf), len(texts)),
    )
    return np.asarray((evidence.incidence[papers] @ weights).todense())


def _matched(scores: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Which papers' own column (`own`) is their unique best."""
    mine = scores[np.arange(len(own)), own]
    return (scores >= mine[:, None]).sum(axis=1) == 1


def _best_option(table: np.ndarray, g: int, own: np.ndarray, option_columns: np.ndarray):
    """Per option (columns of `option_columns`) of group `g`, the papers matched with it as
    g's label, the other groups' labels (`table`'s other columns) held."""
    others = table.copy()
    others[:, g] = -np.inf
    mine = np.where(own == g, -np.inf, table[np.arange(len(own)), own])
    others[np.arange(len(own)), own] = -np.inf
    rival = others.max(axis=1)  # the best label that is neither g's nor the paper's own
    in_g = own == g
    hits = np.where(
        in_g[:, None],
        option_columns > rival[:, None],
        (mine > rival)[:, None] & (mine[:, None] > option_columns),
    )
    return hits.sum(axis=0)


def matched_labels(
    options: dict[int, list[str]],
    heads: dict[int, list[frozenset]],
    evidence: WordEvidence,
    rows: dict[int, np.ndarray],
) -> dict[int, int]:
    """group -> the index of its chosen option. `options`: each group's label texts, simplest
    first; `heads`: each option's head phrase (no two groups share one); `rows`: each group's
    papers (rows of `evidence`)."""
    groups = sorted(options)
    if not groups:
        return {}
    papers = np.concatenate([rows.get(g, np.zeros(0, np.int64)) for g in groups]).astype(np.int64)
    own = np.concatenate([np.full(len(rows.get(g, ())), i) for i, g in enumerate(groups)])
    own = own.astype(np.int64)
    scores = {g: option_scores(evidence, papers, options[g]) for g in groups}
    chosen = {g: 0 for g in groups}
    for _ in range(ROUNDS):
        changed = False
        for i, g in enumerate(groups):
            table = np.stack([scores[h][:, chosen[h]] for h in groups], axis=1)
            hits = _best_option(table, i, own, scores[g])
            held = {options[h][chosen[h]] for h in groups if h != g}
            held_heads = {heads[h][chosen[h]] for h in groups if h != g}
            free = [
                k
                for k in range(len(options[g]))
                if options[g][k] not in held and heads[g][k] not in held_heads
            ]
            if not free:
                continue
            best = max(free, key=lambda k: (hits[k], -k))
            if best != chosen[g] and (chosen[g] not in free or hits[best] > hits[chosen[g]]):
                chosen[g], changed = best, True
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
    table = option_scores(evidence, papers, [texts[g] for g in groups])
    return float(_matched(table, own).mean()) if len(own) else 0.0

"""A theme's terms name what its topics share: the candidates are its topics' own terms (their
labels' terms first), ranked by the theme-level class-based TF-IDF against the other themes
(BERTopic's ClassTfidfTransformer over the papers of each theme) times how much of the theme
uses the term: the share of its papers in topics where at least `min_term_share` of the papers
use it. A term one topic lives on ("imagenet" in a vision theme) ranks below one its topics
share ("vision transformers" where several of them are about it), and a term every theme uses
ranks below one that sets this theme apart.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix

from pipeline.config import LabelConfig
from pipeline.label.terms import distinct_terms
from pipeline.text import term_analyzer


def theme_candidates(
    themes: dict[int, int], topic_terms: dict[int, list[str]], topic_labels: dict[int, str]
) -> dict[int, list[str]]:
    """theme -> its topics' label terms, then their other terms (each once, largest topic's
    first: topics are numbered by size)."""
    candidates: dict[int, list[str]] = {}
    for topic in sorted(themes):
        label_terms = [t for t in topic_labels.get(topic, "").split(", ") if t]
        found = candidates.setdefault(themes[topic], [])
        found.extend(label_terms)
    for topic in sorted(themes):
        candidates[themes[topic]].extend(topic_terms.get(topic, []))
    return {h: list(dict.fromkeys(terms)) for h, terms in candidates.items()}


def usage(texts: list[str], vocabulary: list[str], max_ngram: int) -> csr_matrix:
    """papers x vocabulary: 1 where the paper uses the term (the label stage's tokeniser)."""
    index = {term: i for i, term in enumerate(vocabulary)}
    analyzer = term_analyzer(max_ngram)
    rows, cols = [], []
    for row, text in enumerate(texts):
        found = {index[t] for t in analyzer(text) if t in index}
        rows.extend([row] * len(found))
        cols.extend(sorted(found))
    data = np.ones(len(rows), dtype=np.float64)
    return csr_matrix((data, (rows, cols)), shape=(len(texts), len(vocabulary)))


def group_counts(groups: np.ndarray, used: csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(group ids, groups x vocabulary: how many of each group's papers use each term)."""
    ids, rows = np.unique(groups, return_inverse=True)
    member = csr_matrix(
        (np.ones(len(groups)), (rows, np.arange(len(groups)))), shape=(len(ids), len(groups))
    )
    return ids, np.asarray((member @ used).todense())


def class_tfidf(counts: np.ndarray) -> np.ndarray:
    """BERTopic's class-based TF-IDF of a classes x terms count table."""
    from bertopic.vectorizers import ClassTfidfTransformer

    model = ClassTfidfTransformer(reduce_frequent_words=True)
    return np.asarray(model.fit_transform(csr_matrix(counts)).todense())


def shared_share(
    theme_topics: list[int], topic_row: dict[int, int], topic_counts: np.ndarray,
    topic_sizes: dict[int, int], min_share: float,
) -> np.ndarray:  # fmt: skip
    """Per term: the share of the theme's papers in its topics where at least `min_share` of
    the topic's papers use the term."""
    total = sum(topic_sizes[t] for t in theme_topics) or 1
    shared = np.zeros(topic_counts.shape[1])
    for topic in theme_topics:
        common = topic_counts[topic_row[topic]] >= min_share * topic_sizes[topic]
        shared += common * topic_sizes[topic]
    return shared / total


def theme_terms(
    texts: list[str],
    topics: np.ndarray,
    themes: dict[int, int],
    topic_terms: dict[int, list[str]],
    topic_labels: dict[int, str],
    config: LabelConfig,
) -> dict[int, list[str]]:
    """theme -> its best `n_terms` terms, best first (see the module's docstring); `texts` and
    `topics` are the fitted papers' term texts and topics (-1: unassigned)."""
    candidates = theme_candidates(themes, topic_terms, topic_labels)
    vocabulary = sorted({t for terms in candidates.values() for t in terms})
    if not vocabulary:
        return {h: [] for h in candidates}
    used = usage(texts, vocabulary, config.max_ngram)
    seen = np.asarray(used.sum(axis=0)).ravel() > 0  # a term no fitted paper uses has no score
    vocabulary = [t for t, s in zip(vocabulary, seen, strict=True) if s]
    used = used[:, np.flatnonzero(seen)]
    candidates = {h: [t for t in terms if t in set(vocabulary)] for h, terms in candidates.items()}
    paper_themes = np.array([themes.get(int(t), -1) for t in topics])
    theme_ids, theme_counts = group_counts(paper_themes, used)
    scores = class_tfidf(theme_counts)
    topic_ids, topic_counts = group_counts(np.asarray(topics), used)
    topic_row = {int(t): i for i, t in enumerate(topic_ids)}
    topic_sizes = {int(t): int((topics == t).sum()) for t in topic_ids}
    column = {term: i for i, term in enumerate(vocabulary)}
    result = {}
    for row, theme in enumerate(theme_ids.tolist()):
        if theme < 0:
            continue
        members = sorted(t for t, h in themes.items() if h == theme and t in topic_row)
        shared = shared_share(members, topic_row, topic_counts, topic_sizes, config.min_term_share)
        cols = [column[t] for t in candidates[theme]]
        score = scores[row, cols] * shared[cols]
        order = sorted(range(len(cols)), key=lambda i: (-score[i], i))
        ranked = [candidates[theme][i] for i in order if score[i] > 0]
        ranked += [candidates[theme][i] for i in order if score[i] <= 0]
        result[theme] = distinct_terms(ranked)[: config.n_terms]
    return result

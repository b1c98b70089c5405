"""Which topics form a theme: Ward groups of the topics by what they are about and the words
their papers use, then a theme whose terms rarely share a paper gives up the topic that made it
so.

Each topic is a point of its unit mean embedding beside its word profile: the share of its
papers using each term, weighted by the term's rarity (idf over the papers) and scaled to length
WORD_WEIGHT. Ward on the embeddings alone joined topics whose papers read alike in the encoder
but share few words (recurrent networks, PDEs, continual learning and distillation in one theme,
its terms' NPMI 0.04); the words keep such topics apart.

Then cohesion (`cohesive_themes`): while a theme's telling terms (themes.telling_terms) score an
NPMI under MIN_NPMI over the papers (the co-occurrence measure of pipeline.scores, as the
metrics stage scores them), the move of one of its topics to one of the NEAR_THEMES themes
whose centre is nearest that topic, and at most NEAR_MARGIN (cosine) further from it than the
rest of its own theme, that leaves the fewest themes under MIN_NPMI and then the highest lowest
NPMI is made, if it makes either better; at most MAX_MOVES moves, and no new theme. A topic
only moves to a theme it lies about as near as its own, so a small odd topic does not hide in
a large unrelated theme. (On the 3,401 ICLR + ICML 2023 papers the three topics moved,
continual learning, time series and speech, lay 0.009-0.029 further from the theme they joined
than from their own: the margin was set by them.)
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from pipeline.centroids import topic_centroids, ward_groups
from pipeline.config import LabelConfig
from pipeline.scores import npmi_pair
from pipeline.stages.label.counts import TermCounts

log = logging.getLogger("pipeline.label")

MIN_THEMES, MAX_THEMES = 8, 20
WORD_WEIGHT = 0.5  # length of a topic's word profile beside its unit mean embedding
MIN_NPMI = 0.1  # a theme's terms share papers at least this much (NPMI)
NEAR_THEMES = 3  # a topic may move to one of this many themes nearest it
NEAR_MARGIN = 0.03  # ... lying at most this much further (cosine) than the rest of its own
MAX_MOVES = 20  # cohesion moves at most


def theme_count(n_topics: int, setting: int | str) -> int:
    """Themes to form over `n_topics`: 8-20 (auto: about a quarter of the topics) or as set,
    but never more than half the topics; with fewer than 4 topics, one level (a theme each)."""
    wanted = min(MAX_THEMES, max(MIN_THEMES, round(n_topics / 4)))
    wanted = wanted if setting == "auto" else int(setting)
    if n_topics < 4:
        return n_topics
    return min(wanted, n_topics // 2)


def word_profiles(counts: TermCounts, ids: np.ndarray) -> np.ndarray:
    """topics (`ids`, rows of `counts`) x terms: the share of each topic's papers using each
    term times the term's idf over all papers, scaled to unit length (zero rows stay zero)."""
    papers = counts.papers.tocsr().astype(float)
    df = np.asarray(papers.sum(axis=0)).ravel()
    idf = np.log(max(float(counts.sizes.sum()), 1.0) / np.maximum(df, 1.0))
    rows = [counts.row(int(t)) for t in ids]
    sizes = np.maximum(counts.sizes[rows].astype(float), 1.0)
    profile = np.asarray(papers[rows].multiply(idf[None, :]).todense()) / sizes[:, None]
    norms = np.linalg.norm(profile, axis=1, keepdims=True)
    return profile / np.where(norms > 0, norms, 1.0)


def numbered(ids: np.ndarray, groups: np.ndarray, topics: np.ndarray) -> dict[int, int]:
    """topic -> theme, the themes numbered by papers, largest first (ties: lowest topic)."""
    papers = pd.Series(topics[topics >= 0]).value_counts()
    size = {g: sum(papers[t] for t, h in zip(ids, groups, strict=True) if h == g) for g in groups}
    order = sorted(set(groups.tolist()), key=lambda g: (-size[g], min(ids[groups == g])))
    number = {g: i for i, g in enumerate(order)}
    return {int(t): number[g] for t, g in zip(ids, groups, strict=True)}


def assign_themes(
    vectors: np.ndarray,
    topics: np.ndarray,
    config: LabelConfig,
    counts: TermCounts | None = None,
) -> dict[int, int]:
    """topic -> theme: Ward groups of the topics' mean embeddings beside their word profiles
    (`counts`: the papers' term counts by topic; without them, the embeddings alone),
    numbered by papers, largest first. Logs a note where there are too few topics for the
    themes asked for."""
    ids, centroids = topic_centroids(vectors, topics)
    n_themes = theme_count(len(ids), config.n_themes)
    if n_themes == len(ids):
        log.info("note: only %d topics, too few to group: one level (each its own theme)", len(ids))
    elif n_themes < MIN_THEMES:
        log.info("note: only %d topics: %d themes (8-20 need at least 16)", len(ids), n_themes)
    points = centroids
    if counts is not None and len(counts.vocabulary):
        points = np.hstack([centroids, WORD_WEIGHT * word_profiles(counts, ids)])
    return numbered(ids, ward_groups(points, n_themes), topics)


class Cooccurrence:
    """Which papers use which terms (`incidence`: papers x `vocabulary`, binary), to score a
    list of terms by their mean NPMI over pairs, as pipeline.scores does."""

    def __init__(self, incidence, vocabulary: list[str]):
        self.incidence = incidence.tocsc()
        self.column = {t: i for i, t in enumerate(vocabulary)}

    def npmi(self, terms: list[str]) -> float:
        columns = [self.column[t] for t in dict.fromkeys(terms) if t in self.column]
        if len(columns) < 2:
            return float("nan")
        part = self.incidence[:, columns]
        together = np.asarray((part.T @ part).todense())
        alone, n = np.diag(together), self.incidence.shape[0]
        pairs = [
            npmi_pair(int(alone[i]), int(alone[j]), int(together[i, j]), n)
            for i in range(len(columns))
            for j in range(i + 1, len(columns))
        ]
        return float(np.mean(pairs))


class Cohesion:
    """A set of topics' cohesion: the NPMI of the telling terms (themes.telling_terms) a theme
    of just those topics would have, remembered by the set."""

    def __init__(self, counts: TermCounts, cooccurrence: Cooccurrence, config: LabelConfig):
        self.counts, self.cooccurrence, self.config = counts, cooccurrence, config
        self.known: dict[frozenset, float] = {}

    def __call__(self, members: frozenset) -> float:
        if members not in self.known:
            from pipeline.stages.label.themes import telling_terms

            into = {int(t): 1 if int(t) in members else 0 for t in self.counts.groups}
            found = telling_terms(
                self.counts.merged(into), self.config.theme_term_share, self.config.n_terms
            )
            score = self.cooccurrence.npmi([term for term, _ in found.get(1, [])])
            self.known[members] = -1.0 if np.isnan(score) else score
        return self.known[members]


def _standing(scores: list[float]) -> tuple[int, float]:
    """How a grouping stands (lower is better): themes under MIN_NPMI, then minus the lowest."""
    return sum(s < MIN_NPMI for s in scores), -min(scores)


def _moves(themes: dict[int, int], worst: int, centres: dict[int, np.ndarray]):
    """(topic, theme) moves out of theme `worst`: each of its topics to those of its
    NEAR_THEMES nearest other themes (by the cosine of their topics' mean centre) that it lies
    at most NEAR_MARGIN further from than from the rest of its own theme."""

    def nearness(topic: int, theme: int) -> float:
        centre = np.mean([centres[t] for t in themes if themes[t] == theme and t != topic], 0)
        return float(centres[topic] @ centre / max(np.linalg.norm(centre), 1e-12))

    groups = sorted(set(themes.values()) - {worst})
    for topic in sorted(t for t in themes if themes[t] == worst):
        home = nearness(topic, worst)
        near = sorted(groups, key=lambda h: (-nearness(topic, h), h))[:NEAR_THEMES]
        for target in near:
            if nearness(topic, target) >= home - NEAR_MARGIN:
                yield topic, target


def cohesive_themes(
    themes: dict[int, int], centres: dict[int, np.ndarray], cohesion: Cohesion
) -> dict[int, int]:
    """`themes` (topic -> theme) after the cohesion moves of the module's docstring, numbered
    as before; `centres`: each topic's unit mean embedding."""
    themes = dict(themes)

    def scores(grouping: dict[int, int]) -> dict[int, float]:
        members: dict[int, set] = {}
        for topic, theme in grouping.items():
            members.setdefault(theme, set()).add(topic)
        return {h: cohesion(frozenset(m)) for h, m in members.items()}

    current = scores(themes)
    for _ in range(MAX_MOVES):
        several = [h for h in current if sum(1 for g in themes.values() if g == h) >= 2]
        worst = min(several, key=lambda h: (current[h], h), default=None)
        if worst is None or current[worst] >= MIN_NPMI:
            break
        best, standing = None, _standing(list(current.values()))
        for topic, target in _moves(themes, worst, centres):
            trial = {**themes, topic: target}
            found = scores(trial)
            if _standing(list(found.values())) < standing:
                best, standing = (trial, found, topic, target), _standing(list(found.values()))
        if best is None:
            break
        themes, current, topic, target = best
        low = min(current.values())
        log.info("theme cohesion: topic %d to theme %d (lowest NPMI %.3f)", topic, target, low)
    return themes


def make_themes(
    vectors: np.ndarray,
    topics: np.ndarray,
    texts: list[str],
    counts: TermCounts,
    config: LabelConfig,
) -> dict[int, int]:
    """topic -> theme: `assign_themes`, then `cohesive_themes` where themes group topics,
    numbered by papers, largest first. `texts`: the papers' texts terms are counted in
    (`topics`: each one's), `counts`: their term counts by topic."""
    themes = assign_themes(vectors, topics, config, counts)
    if len(set(themes.values())) == len(themes) or not len(counts.vocabulary):
        return themes
    from sklearn.feature_extraction.text import CountVectorizer

    from pipeline.text import term_analyzer

    vocabulary = counts.vocabulary.tolist()
    reader = CountVectorizer(
        analyzer=term_analyzer(config.max_ngram), binary=True, vocabulary=vocabulary
    )
    cohesion = Cohesion(counts, Cooccurrence(reader.fit_transform(texts), vocabulary), config)
    ids, centroids = topic_centroids(vectors, topics)
    centres = dict(zip(ids.tolist(), centroids, strict=True))
    moved = cohesive_themes(themes, centres, cohesion)
    order = np.array(sorted(moved))
    return numbered(order, np.array([moved[t] for t in order]), topics)

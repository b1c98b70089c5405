"""Areas: a third level above the themes where the corpus is large (more than
`label.area_min_papers` papers or `label.area_min_topics` topics), as datamapplot and Toponymy
layer their labels. The themes' mean embeddings are grouped by Ward into 3-8 areas (about a
quarter as many as themes), numbered by papers, largest first; an area is named as a theme is
(themes.group_labels), from the phrase its themes share and its themes' heads."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.centroids import topic_centroids, ward_groups
from pipeline.config import LabelConfig
from pipeline.stages.label.counts import TermCounts
from pipeline.stages.label.names import Label
from pipeline.stages.label.themes import Evidence, group_labels

MIN_AREAS, MAX_AREAS = 3, 8


def area_count(n_papers: int, n_themes: int, n_topics: int, config: LabelConfig) -> int:
    """Areas to form: none in a corpus of at most `area_min_papers` papers and
    `area_min_topics` topics, else about a quarter of the themes (3-8), fewer than the themes."""
    large = n_papers > config.area_min_papers or n_topics > config.area_min_topics
    if not large or n_themes < 2 * MIN_AREAS:
        return 0
    return min(MAX_AREAS, max(MIN_AREAS, round(n_themes / 4)), n_themes - 1)


def assign_areas(
    vectors: np.ndarray, topics: np.ndarray, themes: dict[int, int], n_areas: int
) -> dict[int, int]:
    """theme -> area: Ward groups of the themes' mean embeddings (papers of no theme left
    out), numbered by papers, largest first; {} for no areas."""
    if n_areas < 1:
        return {}
    theme_of = np.array([themes.get(int(t), -1) for t in topics], dtype=np.int64)
    ids, centroids = topic_centroids(vectors, theme_of)
    groups = ward_groups(centroids, n_areas)
    papers = pd.Series(theme_of[theme_of >= 0]).value_counts()
    size = {g: int(sum(papers[h] for h in ids[groups == g])) for g in set(groups.tolist())}
    order = sorted(size, key=lambda g: (-size[g], int(min(ids[groups == g]))))
    number = {g: i for i, g in enumerate(order)}
    return {int(h): number[g] for h, g in zip(ids, groups, strict=True)}


def area_labels(
    counts: TermCounts,
    title_counts: TermCounts,
    themes: dict[int, int],
    areas: dict[int, int],
    theme_labels: dict[int, Label],
    evidence: Evidence,
    config: LabelConfig,
) -> dict[int, Label]:
    """area -> Label, from the papers' term counts by topic (`counts`, `title_counts`)
    summed by theme; `evidence`: the words papers use and each topic's papers."""
    if not areas:
        return {}
    into = {int(t): themes.get(int(t), -1) for t in counts.groups}
    by_theme, titles = counts.merged(into), title_counts.merged(into)
    size = dict(zip(by_theme.groups.tolist(), by_theme.sizes.tolist(), strict=True))
    members = {
        a: sorted((h for h in areas if areas[h] == a), key=lambda h: (-size.get(h, 0), h))
        for a in set(areas.values())
    }
    words, papers_of = evidence
    theme_rows = {
        h: np.concatenate([papers_of[t] for t in themes if themes[t] == h and t in papers_of])
        for h in areas
    }
    return group_labels(
        by_theme, titles, members, theme_labels, (words, theme_rows), config.min_term_share, "Area"
    )

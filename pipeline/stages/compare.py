"""Stage compare: documents + clusters + topics + themes -> venue_topics.parquet and
venue_years.parquet, the one owner of the venue statistics: for every topic and theme and every
venue (and, in venue_years, every year), the papers it holds there, their share of the venue's
papers (and the venue's papers), and whether the topic is significantly over- or
under-represented at the venue compared with all other venues together (that year's, in
venue_years). Papers without a year are left out of venue_years.

The test is the weighted log-odds ratio with an informative Dirichlet prior (Monroe, Colaresi and
Quinn 2008, "Fightin' Words"), as a z-score. The prior's means are the corpus-wide topic shares
and its weight `prior_scale` times the number of papers, which shrinks the small topics' ratios
towards zero. |z| >= `z_threshold` flags the cell "over" or "under"; with a single venue nothing
is compared (z is null, every flag "none").
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import schemas, tables
from pipeline.config import CompareConfig
from pipeline.log_odds import log_odds_z
from pipeline.schemas import UNASSIGNED_LABEL

log = logging.getLogger("pipeline.compare")
# what the comparisons read of documents.parquet: the papers, their venue and year
PAPER_COLUMNS = ["doc_id", "venue", "year"]


def flags(z: np.ndarray, threshold: float) -> np.ndarray:
    z = np.nan_to_num(np.asarray(z, dtype=float), nan=0.0)
    return np.where(z >= threshold, "over", np.where(z <= -threshold, "under", "none"))


def level_table(
    groups: pd.Series,
    venues: pd.Series,
    labels: dict[int, str],
    level: str,
    config,
    ids: list[int] | None = None,
) -> pd.DataFrame:
    """The venue_topics rows of one level (topic or theme): `groups` and `venues` hold each
    paper's group and venue; `ids`, when given, every group to list (0 papers where absent)."""
    counts = pd.crosstab(groups, venues)
    if ids is not None:
        counts = counts.reindex(sorted(set(ids) | set(counts.index)), fill_value=0)
    z = log_odds_z(counts.to_numpy(), config.prior_scale)
    shares = counts / counts.sum(axis=0)
    rows = [
        {
            "level": level,
            "id": int(group),
            "label": labels.get(int(group), UNASSIGNED_LABEL),
            "venue": str(venue),
            "count": int(counts.iat[i, j]),
            "share": float(shares.iat[i, j]),
            "z": None if np.isnan(z[i, j]) else float(z[i, j]),
        }
        for i, group in enumerate(counts.index)
        for j, venue in enumerate(counts.columns)
    ]
    frame = pd.DataFrame(rows)
    frame["flag"] = flags(frame["z"].astype(float).to_numpy(), config.z_threshold)
    frame["venue_papers"] = frame["venue"].map(counts.sum(axis=0)).astype(int)
    frame["z_threshold"] = float(config.z_threshold)
    return frame


def _levels(
    documents: pd.DataFrame, clusters: pd.DataFrame, topics: pd.DataFrame, themes: pd.DataFrame
) -> tuple[pd.DataFrame, dict[str, dict[int, str]]]:
    """Every paper's venue, year, topic and theme; and each level's labels."""
    wanted = [c for c in PAPER_COLUMNS if c in documents]
    merged = tables.join_papers(documents[wanted], clusters)
    theme_of = dict(zip(topics["topic"].astype(int), topics["theme"].astype(int), strict=True))
    merged["theme"] = merged["topic"].map(theme_of).fillna(schemas.UNASSIGNED).astype(int)
    labels = {
        "topic": dict(zip(topics["topic"].astype(int), topics["label"], strict=True)),
        "theme": dict(zip(themes["theme"].astype(int), themes["label"], strict=True)),
    }
    return merged, labels


def make_venue_topics(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    config: CompareConfig,
) -> pd.DataFrame:
    """Pure core: the topic rows, then the theme rows."""
    merged, labels = _levels(documents, clusters, topics, themes)
    parts = [
        level_table(merged[level], merged["venue"], labels[level], level, config)
        for level in ("topic", "theme")
    ]
    return pd.concat(parts, ignore_index=True)


def make_venue_years(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    config: CompareConfig,
) -> pd.DataFrame:
    """Pure core of venue_years: make_venue_topics's rows for each year's papers alone (the venue
    comparison of that year; every topic and theme listed each year, 0 papers where absent),
    with `year` and `venue_year_papers`. Papers without a year are left out."""
    merged, labels = _levels(documents, clusters, topics, themes)
    dated = merged[merged["year"].notna()]
    parts = []
    for year, papers in dated.groupby(dated["year"].astype(int), sort=True):
        for level in ("topic", "theme"):
            ids = sorted(set(merged[level]))
            part = level_table(papers[level], papers["venue"], labels[level], level, config, ids)
            parts.append(part.assign(year=int(year)))
    if not parts:
        return pd.DataFrame({c: [] for c in schemas.VENUE_YEARS.columns})
    frame = pd.concat(parts, ignore_index=True).rename(
        columns={"venue_papers": "venue_year_papers"}
    )
    return frame[schemas.VENUE_YEARS.columns]


def run(
    config: CompareConfig,
    documents: Path,
    clusters: Path,
    topics: Path,
    themes: Path,
    venue_topics: Path,
    venue_years: Path,
) -> None:
    lineage = tables.stage_lineage(
        config, documents=documents, clusters=clusters, topics=topics, themes=themes
    )
    papers = tables.read_table(documents, schemas.DOCUMENTS, PAPER_COLUMNS)
    frames = (
        papers,
        tables.read_table(clusters, schemas.CLUSTERS),
        tables.read_table(topics, schemas.TOPICS),
        tables.read_table(themes, schemas.THEMES),
    )
    table = make_venue_topics(*frames, config)
    tables.write_table(table, venue_topics, schemas.VENUE_TOPICS, lineage)
    tables.write_table(make_venue_years(*frames, config), venue_years, schemas.VENUE_YEARS, lineage)
    undated = int(papers["year"].isna().sum())
    if undated:
        log.info("note: %d paper(s) without a year left out of venue_years", undated)
    over = table[(table["flag"] == "over") & (table["id"] >= 0)]
    for row in over.itertuples():
        log.info(
            "%s %d over-represented at %s (z = %+.1f): %s",
            row.level,
            row.id,
            row.venue,
            row.z,
            row.label,
        )
    if papers["venue"].nunique() < 2:
        log.info("note: one venue: nothing to compare")

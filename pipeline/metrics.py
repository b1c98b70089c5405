"""Stage metrics: documents + clusters + topics + themes -> metrics.json, the build's quality
figures: topic and theme counts, outlier shares, the largest topic's share, NPMI coherence and
diversity of each topic's top terms, and label checks.

The scores come from `pipeline.scores`, which also scores the BERTopic-defaults baseline
(`make baseline`), so the two sets of figures are comparable.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pandas as pd

from pipeline import schemas, tables
from pipeline.errors import PipelineError
from pipeline.scores import doc_term_sets, quality_figures
from pipeline.text import banned_words, term_analyzer, term_texts

log = logging.getLogger("pipeline.metrics")


TERM_FIGURES = (  # what depends only on the terms and the fitted papers
    "npmi_mean",
    "topic_diversity",
    "labels_unique",
    "labels_with_stop_or_filler_words",
    "npmi_by_topic",
)


def build_metrics(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    known: dict | None = None,
) -> dict:
    """Pure core: this build's figures (metrics.json). Shares count every paper; what the fit
    decided (HDBSCAN's outliers, NPMI of the terms) counts the papers the topic model was fitted
    on, which the terms were chosen from. Terms are counted with the label stage's tokeniser,
    so NPMI asks how often a topic's own terms share a paper. `known`: the term figures of a
    previous run from the same terms and fitted papers, kept instead of counted again."""
    merged = tables.join_papers(documents, clusters)
    fitted = (merged["placed"] == "fit").to_numpy()
    named = topics[topics["topic"] >= 0]
    texts = [] if known else term_texts(merged[fitted])
    figures = quality_figures(
        merged["topic"].to_numpy(),
        merged["raw_outlier"].to_numpy(),
        {int(t): list(terms) for t, terms in zip(topics["topic"], topics["terms"], strict=True)},
        dict(zip(named["topic"].astype(int), named["label"], strict=True)),
        doc_term_sets(texts, term_analyzer()),
        banned_words(),
    )
    figures.update({k: known[k] for k in TERM_FIGURES} if known else {})
    if fitted.any():
        figures["outlier_share_raw"] = float(merged["raw_outlier"].to_numpy()[fitted].mean())
    n_themes = int((themes["theme"] >= 0).sum())
    return {
        "topics": figures.pop("topics"),
        "themes": n_themes,
        "fitted_papers": int(fitted.sum()),
        **figures,
    }


BASIS_KEY = "terms_basis"  # the label stage's basis the term figures were counted from


def previous_term_figures(metrics: Path, basis: str | None) -> dict | None:
    """The term figures of the previous metrics.json, when counted from the same basis (papers
    only added to the saved model since): NPMI would come out the same."""
    if not basis or not metrics.exists():
        return None
    try:
        previous = tables.read_json(metrics, "metrics")
    except PipelineError:
        return None
    if previous.get(BASIS_KEY) != basis or not all(k in previous for k in TERM_FIGURES):
        return None
    return {k: previous[k] for k in TERM_FIGURES}


def run(documents: Path, clusters: Path, topics: Path, themes: Path, metrics: Path) -> None:
    tables.stage_lineage(  # refuse tables from different builds
        "metrics", documents=documents, clusters=clusters, topics=topics, themes=themes
    )
    basis = tables.read_notes(topics, "topics").get("basis")
    figures = build_metrics(
        tables.read_table(documents, schemas.DOCUMENTS),
        tables.read_table(clusters, schemas.CLUSTERS),
        tables.read_table(topics, schemas.TOPICS),
        tables.read_table(themes, schemas.THEMES),
        known=previous_term_figures(metrics, basis),
    )
    tables.write_json({**figures, BASIS_KEY: basis}, metrics)
    log.info(
        "%d topics, %d themes; outliers %.1f%% -> %.1f%%; largest topic %.1f%%; "
        "NPMI %.3f; diversity %.2f",
        figures["topics"],
        figures["themes"],
        100 * figures["outlier_share_raw"],
        100 * figures["outlier_share_final"],
        100 * figures["largest_topic_share"],
        figures["npmi_mean"] or math.nan,
        figures["topic_diversity"] or math.nan,
    )

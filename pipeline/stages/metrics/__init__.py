"""Stage metrics: documents + clusters + topics + themes -> metrics.json, the build's quality
figures: topic and theme counts, outlier shares, the largest topic's share, NPMI coherence and
diversity of each topic's and each theme's top terms, and label checks: no stop or filler
word, unique, and `label_check` (label_check.py: could a reader match each paper to its own
topic's and theme's label, and to BERTopic's default name of its topic, by the words they share).

The scores come from `pipeline.scores`, which also scores the BERTopic-defaults baseline
(`make baseline`), so the two sets of figures are comparable.
"""

from __future__ import annotations

import hashlib
import logging
import math
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import phrases, schemas, scores, tables
from pipeline.errors import PipelineError
from pipeline.phrases import readability_faults
from pipeline.scores import doc_term_sets, npmi_coherence, quality_figures, topic_diversity
from pipeline.stages.metrics import label_check
from pipeline.stages.metrics.label_check import make_label_check
from pipeline.text import banned_words, term_analyzer, term_texts

log = logging.getLogger("pipeline.metrics")


TERM_FIGURES = (  # what depends only on the terms and the fitted papers
    "npmi_mean",
    "topic_diversity",
    "labels_unique",
    "labels_with_stop_or_filler_words",
    "labels_unreadable",
    "unreadable_labels",
    "npmi_by_topic",
    "theme_npmi_mean",
    "theme_diversity",
    "theme_labels_unique",
    "npmi_by_theme",
    "label_check",  # the fitted papers' topics are part of the basis too
)


def theme_figures(themes: pd.DataFrame, doc_terms: list[set[str]]) -> dict:
    """NPMI and diversity of the themes' top terms, as for the topics (the unassigned papers'
    theme left out), and whether the theme labels are unique."""
    named = themes[themes["theme"] >= 0]
    ids = named["theme"].astype(int).tolist()
    term_lists = [list(terms) for terms in named["terms"]]
    npmi = npmi_coherence(term_lists, doc_terms)
    finite = [v for v in npmi if not math.isnan(v)]
    labels = named["label"].tolist()
    return {
        "theme_npmi_mean": float(np.mean(finite)) if finite else None,
        "theme_diversity": _finite(topic_diversity(term_lists)),
        "theme_labels_unique": len(set(labels)) == len(labels),
        "npmi_by_theme": [
            {"theme": h, "label": label, "npmi": _finite(v)}
            for h, label, v in zip(ids, labels, npmi, strict=True)
        ],
    }


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def make_metrics(
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
    previous run from the same terms and fitted papers, kept instead of counted again.
    `documents` holds every paper or the fitted ones alone (as the stage reads it)."""
    fitted = (clusters["placed"] == "fit").to_numpy()
    named = topics[topics["topic"] >= 0]
    fit = clusters[fitted].sort_values("doc_id", kind="stable")  # sums whatever the row order
    fit_papers = documents[documents["doc_id"].isin(fit["doc_id"])]
    joined = None if known else tables.join_papers(fit_papers, fit)
    texts = [] if joined is None else term_texts(joined)
    doc_terms = doc_term_sets(texts, term_analyzer())
    figures = quality_figures(
        clusters["topic"].to_numpy(),
        clusters["raw_outlier"].to_numpy(),
        {int(t): list(terms) for t, terms in zip(topics["topic"], topics["terms"], strict=True)},
        dict(zip(named["topic"].astype(int), named["label"], strict=True)),
        doc_terms,
        banned_words(),
    )
    figures.update(theme_figures(themes, doc_terms))
    unreadable = readability_faults(dict(zip(named["topic"], named["label"], strict=True)))
    figures["labels_unreadable"] = len(unreadable)
    figures["unreadable_labels"] = [f"{k}: {'; '.join(v)}" for k, v in unreadable.items()]
    if joined is not None:
        figures["label_check"] = make_label_check(joined, topics, themes)
    figures.update({k: known[k] for k in TERM_FIGURES} if known else {})
    if fitted.any():
        figures["outlier_share"] = float(clusters["raw_outlier"].to_numpy()[fitted].mean())
    n_themes = int((themes["theme"] >= 0).sum())
    return {
        "topics": figures.pop("topics"),
        "themes": n_themes,
        "fitted_papers": int(fitted.sum()),
        **figures,
    }


BASIS_KEY = "terms_basis"  # the label stage's basis the term figures were counted from
SCORING_KEY = "scoring_basis"  # the code that counted them
SCORING_CODE = (scores.__file__, label_check.__file__, phrases.__file__, __file__)


def scoring_basis() -> str:
    """A fingerprint of the code that scores terms and labels: a change to it counts again."""
    return hashlib.sha256(b"".join(Path(f).read_bytes() for f in SCORING_CODE)).hexdigest()[:16]


def previous_term_figures(metrics: Path, basis: str | None) -> dict | None:
    """The term figures of the previous metrics.json, when counted from the same basis (papers
    only added to the saved model since) by the same code: NPMI would come out the same."""
    if not basis or not metrics.exists():
        return None
    try:
        previous = tables.read_json(metrics, "metrics")
    except PipelineError:
        return None
    same = previous.get(BASIS_KEY) == basis and previous.get(SCORING_KEY) == scoring_basis()
    if not same or not all(k in previous for k in TERM_FIGURES):
        return None
    return {k: previous[k] for k in TERM_FIGURES}


def run(documents: Path, clusters: Path, topics: Path, themes: Path, metrics: Path) -> None:
    tables.stage_lineage(  # refuse tables from different builds
        "metrics", documents=documents, clusters=clusters, topics=topics, themes=themes
    )
    basis = tables.read_notes(topics, "topics").get("basis")
    placed = tables.read_table(clusters, schemas.CLUSTERS)
    fitted = placed.loc[placed["placed"] == "fit", "doc_id"]  # the papers terms are counted in
    figures = make_metrics(
        tables.read_table(documents, schemas.DOCUMENTS, doc_ids=set(fitted)),
        placed,
        tables.read_table(topics, schemas.TOPICS),
        tables.read_table(themes, schemas.THEMES),
        known=previous_term_figures(metrics, basis),
    )
    tables.write_json({**figures, BASIS_KEY: basis, SCORING_KEY: scoring_basis()}, metrics)
    log.info(
        "%d topics, %d themes; HDBSCAN left out %.1f%%, unassigned %.1f%%; largest topic %.1f%%; "
        "NPMI %.3f; diversity %.2f; themes: NPMI %.3f, diversity %.2f; labels matched to their "
        "papers (top-1): topics %.2f, BERTopic's names %.2f, themes %.2f",
        figures["topics"],
        figures["themes"],
        100 * figures["outlier_share"],
        100 * figures["unassigned_share"],
        100 * figures["largest_topic_share"],
        figures["npmi_mean"] or math.nan,
        figures["topic_diversity"] or math.nan,
        figures["theme_npmi_mean"] or math.nan,
        figures["theme_diversity"] or math.nan,
        *(_number(figures["label_check"][k]["top1"]) for k in LABEL_SETS),
    )


LABEL_SETS = ("topics", "bertopic_names", "themes")


def _number(value: float | None) -> float:
    return math.nan if value is None else value

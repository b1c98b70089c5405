"""Labels for topics born beside kept ones: when every earlier topic still has the papers it had
(papers only joined new topics, or the unassigned, since the previous tables), the earlier rows
are kept whole (keep.py) and only the new topics are labelled, among their nearest topics'
papers rather than the whole corpus, so a field joining a large map costs work in its own
neighbourhood. The steps are the full stage's (terms, contrast, labels chosen together), on
those papers: the kept topics' labels are fixed rivals (their heads taken, their labels the
ones each paper's words are matched against), and KeyBERTInspired and MMR rerank only the new
topics' terms (and the unassigned papers')."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from pipeline import schemas
from pipeline.centroids import topic_centroids
from pipeline.config import EngineConfig, LabelConfig
from pipeline.phrases import head_phrase
from pipeline.stages.label import keep
from pipeline.stages.label.contrast import WordEvidence, contrast_terms, nearest_groups
from pipeline.stages.label.counts import count_terms
from pipeline.stages.label.matching import reader_evidence
from pipeline.stages.label.names import Label, matched_topic_labels, topic_labels
from pipeline.stages.label.papers import representative_docs, title_texts, topic_rows
from pipeline.stages.label.terms import group_terms
from pipeline.stages.label.themes import CANDIDATE_SHARE
from pipeline.text import term_analyzer, term_texts

log = logging.getLogger("pipeline.label")


def born_topics(earlier: keep.Earlier | None, digests: dict[int, str]) -> list[int]:
    """The topics of `digests` (topic -> its fitted papers' digest now) new since `earlier`,
    when every earlier topic is still there with the same papers; else [] (label them all)."""
    if earlier is None:
        return []
    before = set(earlier.topics["topic"].astype(int)) - {schemas.UNASSIGNED}
    if any(earlier.papers.get(t) is None or earlier.papers[t] != digests.get(t) for t in before):
        return []
    return sorted(set(digests) - before - {schemas.UNASSIGNED})


def neighbourhood(
    topics: np.ndarray, vectors: np.ndarray, born: list[int], k: int
) -> dict[int, list[int]]:
    """Each born topic -> its `k` nearest topics by their mean embeddings (as the full stage
    tells a topic from its neighbours)."""
    ids, centroids = topic_centroids(vectors, topics)
    near = nearest_groups(centroids, k)
    row = {int(t): i for i, t in enumerate(ids)}
    return {t: [int(ids[j]) for j in near[row[t]]] for t in born}


def _kept_labels(earlier: keep.Earlier) -> dict[int, Label]:
    rows = earlier.topics[earlier.topics["topic"] != schemas.UNASSIGNED]
    return {
        int(t): Label(str(text), str(text).split(",")[0])
        for t, text in zip(rows["topic"], rows["label"], strict=True)
    }


def born_labels(
    texts: list[str],
    topics: np.ndarray,
    scored: dict[int, list[tuple[str, float]]],
    neighbours: dict[int, list[int]],
    kept: dict[int, Label],
    config: LabelConfig,
) -> dict[int, Label]:
    """The born topics' labels (`neighbours`' keys), told from their neighbours, no head that a
    kept topic's label has, chosen together with the kept labels in `topics` held fixed."""
    evidence = WordEvidence(texts, term_analyzer(config.max_ngram))
    present = sorted(set(topics.tolist()) - {schemas.UNASSIGNED})
    papers_of = {t: np.flatnonzero(topics == t) for t in present}
    order = sorted(neighbours, key=lambda t: (-len(papers_of[t]), t))
    taken = {head_phrase(label.head) for label in kept.values()}
    labels = topic_labels(
        scored, evidence, papers_of, neighbours, order, config.label_words, taken=taken
    )
    named = {t: label for t, label in labels.items() if label.head}
    fixed = {t: kept[t] for t in present if t in kept}
    chosen = matched_topic_labels(
        named, scored, reader_evidence(texts), papers_of, config.label_words, fixed=fixed
    )
    return {t: chosen.get(t, labels[t]) for t in neighbours}


def _papers_around(
    topics: np.ndarray, neighbours: dict[int, list[int]]
) -> tuple[np.ndarray, set[int]]:
    """The rows of the papers in the born topics, their neighbours and the unassigned, and
    those topics; logged."""
    around = set(neighbours) | {n for near in neighbours.values() for n in near}
    rows = np.flatnonzero(np.isin(topics, sorted(around | {schemas.UNASSIGNED})))
    log.info(
        "labelling the %d new topics among %d topics' %d papers; the other %d topics kept",
        len(neighbours),
        len(around),
        len(rows),
        len(set(topics.tolist()) - around - {schemas.UNASSIGNED}),
    )
    return rows, around


def _table(kept: pd.DataFrame, topics: np.ndarray, fresh: pd.DataFrame) -> pd.DataFrame:
    """The earlier rows of the topics in `topics` beside the `fresh` rows, by topic."""
    present = kept["topic"].astype(int).isin(set(topics.tolist()) - {schemas.UNASSIGNED})
    return pd.concat([kept[present], fresh], ignore_index=True).sort_values(
        "topic", ignore_index=True
    )


def born_table(
    merged: pd.DataFrame,
    vectors: np.ndarray,
    earlier: keep.Earlier,
    born: list[int],
    config: LabelConfig,
    encoder=None,
    engine: EngineConfig | None = None,
    nearest: int = 10,
) -> pd.DataFrame:
    """Pure core: the topics table of the fitted papers `merged` (join_fitted, with `vectors`):
    the earlier rows of the kept topics, and rows made here for the `born` topics and the
    unassigned papers, from the papers of those topics and of the born ones' `nearest` topics."""
    neighbours = neighbourhood(merged["topic"].to_numpy(), vectors, born, nearest)
    rows, _ = _papers_around(merged["topic"].to_numpy(), neighbours)
    part, part_vectors = merged.iloc[rows], vectors[rows]
    topics, texts = part["topic"].to_numpy(), term_texts(part)
    engine = engine or EngineConfig()
    counts = count_terms(texts, topics, config.max_ngram, engine)
    title_counts = count_terms(title_texts(part), topics, config.max_ngram, engine)
    made = sorted((set(born) | {schemas.UNASSIGNED}) & set(topics.tolist()))
    encoder = encoder if config.representation == "keybert_mmr" else None
    weighted = group_terms(texts, topics, part_vectors, config, counts, encoder, set(made))
    scored = contrast_terms(counts, title_counts, neighbours, CANDIDATE_SHARE)
    labels = born_labels(texts, topics, scored, neighbours, _kept_labels(earlier), config)
    representatives = representative_docs(
        part["doc_id"].to_numpy(), part_vectors, topics, config.n_representative
    )
    fresh = topic_rows(made, labels, weighted, representatives)
    return _table(earlier.topics, merged["topic"].to_numpy(), fresh)

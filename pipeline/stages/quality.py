"""The runs behind the figures that cost extra fits: `make stability` and `make baseline`.

stability.json: how much the topics change with the seed, as the adjusted Rand index between the
topic assignments of runs with each of `quality.seeds` on the papers the topic model was fitted
on (outliers count as one more group; the build's own clusters.parquet stands in for its own
seed).

baseline.json: BERTopic with its default settings on the same embeddings, scored by the same code
as metrics.json. Defaults throughout (UMAP, HDBSCAN, CountVectorizer, no representation model),
except that UMAP gets each seed as `random_state`, so the baseline is reproducible and its own
stability can be measured.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import progress, schemas, tables
from pipeline.config import ClusterConfig, QualityConfig
from pipeline.errors import PipelineError
from pipeline.scores import adjusted_rand_agreement, doc_term_sets, quality_figures
from pipeline.stages.cluster import assign_topics  # the one stage another may call: it reruns it
from pipeline.text import banned_words, embedding_texts

log = logging.getLogger("pipeline.quality")


def seed_agreement(assignments: dict[int, np.ndarray]) -> dict:
    """Agreement between runs (seed -> topic per paper)."""
    seeds = sorted(assignments)
    agreement = adjusted_rand_agreement([assignments[s] for s in seeds])
    topics = [len(set(assignments[s].tolist()) - {-1}) for s in seeds]
    return {
        **agreement,
        "seeds": ", ".join(map(str, seeds)),
        "topics_per_run": ", ".join(map(str, topics)),
    }


def seed_runs(
    vectors: np.ndarray,
    config: ClusterConfig,
    seeds: list[int],
    known: dict[int, np.ndarray] | None = None,
) -> dict[int, np.ndarray]:
    """Topic per paper for each seed: this pipeline's assignment, rerun with each random_state
    (`known` holds runs already made, by seed)."""
    runs = dict(known or {})
    for seed in progress.bar(seeds, desc="stability: seeds", unit="seed"):
        if seed not in runs:
            log.info("stability: clustering with random_state=%d", seed)
            runs[seed], *_ = assign_topics(
                vectors, config.model_copy(update={"random_state": seed})
            )
    return {seed: runs[seed] for seed in seeds}


def make_stability(
    vectors: np.ndarray,
    config: ClusterConfig,
    seeds: list[int],
    known: dict[int, np.ndarray] | None = None,
) -> dict:
    """Pure core of `make stability`: the topics' agreement across `seeds` (stability.json)."""
    return seed_agreement(seed_runs(vectors, config, seeds, known))


@dataclass(frozen=True)
class BaselineRun:
    topics: np.ndarray
    terms: dict[int, list[str]]
    labels: dict[int, str]
    doc_terms: list[set[str]]


def bertopic_defaults(texts: list[str], vectors: np.ndarray, seed: int) -> BaselineRun:
    """BERTopic() with default settings on precomputed embeddings; UMAP seeded."""
    from bertopic import BERTopic
    from umap import UMAP

    umap_defaults = UMAP(n_neighbors=15, n_components=5, min_dist=0.0, metric="cosine")
    # seeded UMAP runs on one thread whatever n_jobs says: 1 spares its warning
    umap_defaults.set_params(n_jobs=1, tqdm_kwds=progress.umap_kwds("baseline UMAP 5-D"))
    model = BERTopic(
        embedding_model=None,  # the embeddings are given: nothing is loaded
        umap_model=umap_defaults.set_params(random_state=seed),
    )
    topics, _ = model.fit_transform(texts, embeddings=vectors)
    ids = sorted(model.get_topics())
    analyzer = model.vectorizer_model.build_analyzer()
    # BERTopic's own preprocessing before its vectorizer (English: alphanumerics only)
    cleaned = [re.sub(r"[^A-Za-z0-9 ]+", "", re.sub(r"[\n\t]", " ", t)) for t in texts]
    return BaselineRun(
        topics=np.asarray(topics, dtype=np.int32),
        terms={t: [w for w, _ in model.get_topic(t)][:10] for t in ids},
        labels={t: model.topic_labels_[t] for t in ids},
        doc_terms=doc_term_sets(cleaned, analyzer),
    )


def make_baseline(texts: list[str], vectors: np.ndarray, seeds: list[int], banned) -> dict:
    """The metrics.json figures for BERTopic's defaults (its first seed), with its stability."""
    runs = {}
    for seed in progress.bar(seeds, desc="baseline: seeds", unit="seed"):
        log.info("baseline: BERTopic defaults with random_state=%d", seed)
        runs[seed] = bertopic_defaults(texts, vectors, seed)
    first = runs[seeds[0]]
    figures = quality_figures(
        first.topics, None, first.terms, first.labels, first.doc_terms, banned
    )
    agreement = seed_agreement({s: r.topics for s, r in runs.items()})
    return {
        "topics": figures.pop("topics"),
        **figures,
        "seed": seeds[0],
        "stability": {k: v for k, v in agreement.items() if k.startswith("ari")},
        "labels": [first.labels[t] for t in sorted(first.labels)][:12],
    }


def _inputs(documents: Path, embeddings: Path) -> tuple[pd.DataFrame, np.ndarray]:
    papers = tables.read_table(documents, schemas.DOCUMENTS)
    _, vectors = tables.read_embeddings(embeddings, documents=papers)
    return papers, vectors


def run_stability(
    cluster_config: ClusterConfig,
    config: QualityConfig,
    documents: Path,
    embeddings: Path,
    clusters: Path,
    stability: Path,
) -> None:
    tables.stage_lineage(config, documents=documents, embeddings=embeddings, clusters=clusters)
    papers, vectors = _inputs(documents, embeddings)
    assigned = tables.read_table(clusters, schemas.CLUSTERS)
    if assigned["doc_id"].tolist() != papers["doc_id"].tolist():
        raise PipelineError("clusters do not match documents: rerun the cluster stage")
    fitted = (assigned["placed"] == "fit").to_numpy()  # the papers the topic model was fitted on
    known = {cluster_config.random_state: assigned["topic"].to_numpy()[fitted]}
    figures = make_stability(vectors[fitted], cluster_config, config.seeds, known)
    tables.write_json(figures, stability)
    log.info(
        "stability over seeds %s: ARI min %.3f, median %.3f",
        figures["seeds"],
        figures["ari_min"],
        figures["ari_median"],
    )


def run_baseline(config: QualityConfig, documents: Path, embeddings: Path, baseline: Path) -> None:
    tables.stage_lineage(config, documents=documents, embeddings=embeddings)
    papers, vectors = _inputs(documents, embeddings)
    if len(papers) < 20:
        raise PipelineError(f"only {len(papers)} papers: too few for BERTopic's defaults")
    figures = make_baseline(embedding_texts(papers), vectors, config.seeds, banned_words())
    tables.write_json(figures, baseline)
    log.info(
        "baseline: %d topics; unassigned %.1f%%; largest topic %.1f%%; NPMI %.3f; diversity %.2f; "
        "ARI min %.3f",
        figures["topics"],
        100 * figures["unassigned_share"],
        100 * figures["largest_topic_share"],
        _number(figures["npmi_mean"]),
        _number(figures["topic_diversity"]),
        _number(figures["stability"].get("ari_min")),
    )


def _number(value: float | None) -> float:
    return math.nan if value is None else value

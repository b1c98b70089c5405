"""Stage cluster: documents + embeddings -> clusters.parquet and the saved topic model (model/).

A build fits a topic model on its papers (fit.py: UMAP + HDBSCAN and the border rounds) and
saves it (model.py); above `cluster.fit_max_papers` it fits on a stratified sample (sample.py)
and assigns the rest (place.py). A later build whose inputs only gained papers keeps every
paper's topic and map position and adds the new papers to the saved model. It refits when asked
(`--refit`), when the cluster settings changed, when papers were removed, when more than
`cluster.refit_share` of the papers were added since the fit, or when more than
`cluster.refit_unassigned_share` of the new papers fit no topic.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import schemas, tables
from pipeline.config import ClusterConfig, EngineConfig
from pipeline.errors import PipelineError
from pipeline.stages.cluster import evolve, snapshots
from pipeline.stages.cluster import model as models
from pipeline.stages.cluster import registry as registries
from pipeline.stages.cluster.fit import assign_topics, fit_topics, resolve_params
from pipeline.stages.cluster.model import REFIT, TopicModel
from pipeline.stages.cluster.place import own_similarity, place_in_chunks
from pipeline.stages.cluster.sample import stratified_sample

log = logging.getLogger("pipeline.cluster")

MODEL_DIR = "model"  # beside clusters.parquet
# what the stage reads of documents.parquet: the papers and what the sample is stratified by
# (a million papers' abstracts would be GBs it never looks at)
SAMPLE_COLUMNS = ["doc_id", "venue", "year"]
MIN_UNASSIGNED_TO_REFIT = 10  # fewer new papers without a topic never trigger a refit

__all__ = ["assign_topics", "make_clusters", "run"]


@dataclass(frozen=True)
class Result:
    """The clusters table, and the model: new when `refitted`, else the saved one (`changed`
    when new topics joined it)."""

    clusters: pd.DataFrame
    model: TopicModel
    refitted: bool
    changed: bool = False


def _frame(doc_ids, topics, coords, raw_outlier, placed: str, similarity) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": list(doc_ids),
            "topic": np.asarray(topics, dtype=np.int32),
            "x": np.asarray(coords, dtype=np.float32)[:, 0],
            "y": np.asarray(coords, dtype=np.float32)[:, 1],
            "raw_outlier": np.asarray(raw_outlier, dtype=bool),
            "placed": placed,
            "similarity": np.asarray(similarity, dtype=np.float32),
        }
    )


def _placed_frame(model, documents, vectors, rows, how: str, engine) -> pd.DataFrame:
    """The papers at `rows` placed into the model (on `engine`, default: here), as clusters
    rows marked `how` ("assigned": the rest of a sample fit; "added": new since the fit)."""
    placed = place_in_chunks(model, vectors[rows], engine or EngineConfig())
    ids = documents["doc_id"].iloc[rows]
    zeros = np.zeros(len(rows))
    return _frame(ids, placed.topics, placed.coords, zeros, how, placed.similarity)


def sample_settings(config: ClusterConfig, n_sample: int, n_corpus: int) -> ClusterConfig:
    """The settings a sample of `n_sample` of `n_corpus` papers is fitted with: HDBSCAN's sizes
    those of the whole corpus scaled by the square root of the sample's share. Scaled by the
    share itself, a topic would be as large a part of the sample as of the corpus, but a
    million papers fitted on 50,000 then give HDBSCAN clusters of 6 papers and 4,507 topics
    (measured); the square root keeps topics scannable (100k papers: sizes 40, 1M: 28) while
    the count still grows with the corpus."""
    if n_sample >= n_corpus:
        return config
    full = resolve_params(n_corpus, config)
    scale = (n_sample / n_corpus) ** 0.5
    return config.model_copy(
        update={
            "min_cluster_size": max(3, round(full.min_cluster_size * scale)),
            "min_samples": max(1, round(full.min_samples * scale)),
        }
    )


def in_id_order(documents: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """`rows` of documents in doc_id order: the papers reach UMAP, HDBSCAN and the placing in
    the same order whatever the order of the input files and rows (results return in the
    documents' order)."""
    return rows[np.argsort(documents["doc_id"].to_numpy()[rows], kind="stable")]


def fit_model(
    documents: pd.DataFrame,
    vectors: np.ndarray,
    config: ClusterConfig,
    encoder: str,
    engine: EngineConfig | None = None,
    rows: np.ndarray | None = None,
) -> Result:
    """Fit a model on the papers (a stratified sample of them above fit_max_papers; `rows`, when
    given, are the papers fitted instead) and assign the rest to it (on `engine`, default:
    here)."""
    if rows is None:
        rows = stratified_sample(documents, config.fit_max_papers)
    rows = in_id_order(documents, np.asarray(rows))
    if len(rows) < len(documents):
        log.info("fitting on a sample of %d of %d papers", len(rows), len(documents))
    fitted_docs = documents.iloc[rows]
    settings = sample_settings(config, len(rows), len(documents))
    result = fit_topics(vectors[rows], settings)
    fitted = _frame(
        fitted_docs["doc_id"],
        result.topics,
        result.coords,
        result.raw_outlier,
        "fit",
        np.zeros(len(rows)),
    )
    with_weights = fitted.assign(weight=result.weights)
    model = models.new_model(config, encoder, len(documents), with_weights, vectors[rows])
    fitted["similarity"] = own_similarity(model, vectors[rows], result.topics)
    rest = in_id_order(documents, np.setdiff1d(np.arange(len(documents)), rows))
    assigned = _placed_frame(model, documents, vectors, rest, "assigned", engine)
    return Result(_in_order(documents, [fitted, assigned]), model, refitted=True)


def _in_order(documents: pd.DataFrame, parts: list[pd.DataFrame]) -> pd.DataFrame:
    frame = pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
    order = frame.set_index("doc_id").index.get_indexer(documents["doc_id"])
    return frame.iloc[order].reset_index(drop=True)


def refit_reason(
    documents: pd.DataFrame, config: ClusterConfig, model: TopicModel, previous: pd.DataFrame
) -> str | None:
    """Why the saved model must be refitted for these papers, or None to extend it."""
    current = models.fit_settings(config)
    changed = sorted(k for k in current if model.settings.get(k) != current[k])
    if changed:
        return "cluster settings changed (" + ", ".join(f"cluster.{k}" for k in changed) + ")"
    removed = ~previous["doc_id"].isin(documents["doc_id"])
    if removed.any():
        return f"{int(removed.sum())} papers were removed since the fit"
    added = int((previous["placed"] == "added").sum()) + int(
        (~documents["doc_id"].isin(previous["doc_id"])).sum()
    )
    if added > config.refit_share * len(documents):
        return (
            f"{added} of {len(documents)} papers were added since the fit "
            f"(over cluster.refit_share = {config.refit_share:g})"
        )
    return None


def extend(
    documents: pd.DataFrame,
    vectors: np.ndarray,
    model: TopicModel,
    previous: pd.DataFrame,
    engine: EngineConfig | None = None,
) -> pd.DataFrame:
    """Every paper of `previous` as it was, and the new papers placed into the model (on
    `engine`, default: here)."""
    new = in_id_order(documents, np.flatnonzero(~documents["doc_id"].isin(previous["doc_id"])))
    added = _placed_frame(model, documents, vectors, new, "added", engine)
    kept = previous[previous["doc_id"].isin(documents["doc_id"])]
    return _in_order(documents, [kept, added])


def too_many_unassigned(clusters: pd.DataFrame, new_ids: set, config: ClusterConfig) -> str | None:
    new = clusters[clusters["doc_id"].isin(new_ids)]
    unassigned = int((new["topic"] < 0).sum())
    if unassigned >= MIN_UNASSIGNED_TO_REFIT and unassigned > config.refit_unassigned_share * len(
        new
    ):
        return (
            f"{unassigned} of {len(new)} new papers fit no topic "
            f"(over cluster.refit_unassigned_share = {config.refit_unassigned_share:g})"
        )
    return None


def make_clusters(
    documents: pd.DataFrame,
    vectors: np.ndarray,
    config: ClusterConfig,
    encoder: str,
    saved: TopicModel | None = None,
    previous: pd.DataFrame | None = None,
    refit: bool = False,
    engine: EngineConfig | None = None,
) -> Result:
    """Pure core: topics and map positions for every paper, from the saved model and the
    previous clusters table when they are given and still fit, else from a new fit. Papers
    are placed into a model a chunk at a time on `engine` (default: here)."""
    if len(vectors) != len(documents):
        raise PipelineError("embeddings do not match documents: rerun the embed stage")
    reason = "asked for" if refit else "no saved model" if saved is None else None
    if reason is None and previous is None:
        reason = "no clusters table placed by the saved model"
    reason = reason or refit_reason(documents, config, saved, previous)
    if reason is None:
        new_ids = set(documents["doc_id"]) - set(previous["doc_id"])
        clusters = extend(documents, vectors, saved, previous, engine)
        # the pool is clustered as a corpus of its own (its "auto" sizes from its own count),
        # not scaled as a sample: it is no sample of the corpus, and a topic born in it needs
        # the build's min_cluster_size papers (docs/saved-model.md: 81.0% against 78.2%)
        smallest = resolve_params(len(documents), config).min_cluster_size
        clusters, grown, born = evolve.with_new_topics(
            documents, vectors, config, smallest, saved, clusters, previous
        )
        reason = too_many_unassigned(clusters, new_ids, config)
        if reason is None:
            log.info(
                "%d new papers placed into the saved model (fitted %s on %d papers)",
                len(new_ids),
                saved.fitted_at,
                len(saved.doc_ids),
            )
            return Result(clusters, grown, refitted=False, changed=bool(born))
    log.info("fitting a topic model: %s", reason)
    result = fit_model(documents, vectors, config, encoder, engine)
    if saved is None or previous is None:
        return result
    return Result(*evolve.renumbered(result.clusters, result.model, saved, previous), True)


def read_saved(
    model_dir: Path, clusters_path: Path, encoder: str
) -> tuple[TopicModel | None, pd.DataFrame | None]:
    """The saved model and the clusters table it placed, when both are there and belong
    together; a model dir that is partial, foreign or from other versions is an error."""
    previous, fit_id = None, None
    if clusters_path.exists():
        fit_id = tables.read_notes(clusters_path, "clusters").get("fit_id")
        if fit_id is None:  # from a build without a saved model: refit
            return None, None
        previous = tables.read_table(clusters_path, schemas.CLUSTERS)
    if not model_dir.exists():
        if previous is not None:
            raise PipelineError(f"{model_dir}: the saved topic model is missing: {REFIT}")
        return None, None
    saved = models.load(model_dir)
    models.check_compatible(saved, model_dir, encoder)
    if previous is None or fit_id != saved.fit_id:
        raise PipelineError(f"{model_dir}: the saved model did not place {clusters_path}: {REFIT}")
    return saved, previous


def read_previous(
    model_dir: Path, clusters_path: Path, encoder: str
) -> tuple[TopicModel | None, pd.DataFrame | None]:
    """For a refit asked for: the saved model and its clusters table when they can be read (the
    new topics then keep their numbers), else none (a note in the log)."""
    try:
        return read_saved(model_dir, clusters_path, encoder)
    except PipelineError as exc:
        log.info("topics numbered afresh: the previous model is not readable (%s)", exc)
        return None, None


def with_labels(model: TopicModel, topics: Path) -> TopicModel:
    """The model with its registry's labels and themes from the last topics table (the label
    stage's, beside clusters.parquet), when the registry carries earlier topics."""
    if model.registry is None or not topics.exists():
        return model
    try:
        table = tables.read_table(topics, schemas.TOPICS, ["topic", "label", "theme"])
    except PipelineError as exc:
        log.info("labels not recorded in the topic registry: %s", exc)
        return model
    return models.with_registry(model, registries.with_labels(model.registry, table))


def run(
    config: ClusterConfig,
    documents: Path,
    embeddings: Path,
    clusters: Path,
    refit: bool = False,
    engine: EngineConfig | None = None,
) -> None:
    """Write clusters.parquet and, beside it, the model it came from (model/); the papers the
    fit did not see are placed into it on the configured engine."""
    lineage = tables.stage_lineage(config, documents=documents, embeddings=embeddings)
    papers = tables.read_table(documents, schemas.DOCUMENTS, SAMPLE_COLUMNS)
    _, vectors = tables.read_embeddings(embeddings, documents=papers)
    encoder = tables.read_notes(embeddings, "embeddings").get("encoder", "unknown")
    model_dir = clusters.parent / MODEL_DIR
    read = read_previous if refit else read_saved
    saved, previous = read(model_dir, clusters, encoder)
    result = make_clusters(papers, vectors, config, encoder, saved, previous, refit, engine)
    history = snapshots.read(model_dir)  # before a save replaces the folder
    if result.refitted or result.changed:
        models.save(with_labels(result.model, clusters.parent / "topics.parquet"), model_dir)
    before = "" if saved is None else saved.fit_id
    fit_id = result.model.fit_id
    kept = snapshots.updated(history, previous, before, result.clusters, fit_id, result.refitted)
    snapshots.keep(model_dir, kept)
    notes = {k: str(v) for k, v in result.model.summary().items()}
    tables.write_table(result.clusters, clusters, schemas.CLUSTERS, lineage, notes)
    os.utime(model_dir / "fit.json")  # the model is current for this clusters table (for Make)

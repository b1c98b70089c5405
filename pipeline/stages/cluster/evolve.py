"""How the saved model's topics carry on from build to build: new topics among the papers no
topic took when papers are added (emerge.py), and the old numbers kept when a build refits
(identity.py); both recorded in the topic registry (registry.py)."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import pandas as pd

from pipeline.config import ClusterConfig
from pipeline.stages.cluster import emerge, identity
from pipeline.stages.cluster import registry as registries
from pipeline.stages.cluster.model import TopicModel

log = logging.getLogger("pipeline.cluster")


def pool_rows(
    documents: pd.DataFrame, clusters: pd.DataFrame, previous: pd.DataFrame
) -> np.ndarray:
    """Rows (clusters in documents' order) of the papers new since `previous` and of those no
    topic took, in doc_id order. Every new paper is in the pool, not only those below the
    outlier threshold: whether new papers form an area of their own is decided among them (a
    group of them that does not stand apart stays where placing put it), so papers of a new
    field are not spread over the nearest old topics they each pass the threshold of."""
    new = ~documents["doc_id"].isin(previous["doc_id"]).to_numpy()
    rows = np.flatnonzero((clusters["topic"].to_numpy() < 0) | new)
    return rows[np.argsort(documents["doc_id"].to_numpy()[rows], kind="stable")]


def with_new_topics(
    documents: pd.DataFrame,
    vectors: np.ndarray,
    settings: ClusterConfig,
    smallest: int,
    model: TopicModel,
    clusters: pd.DataFrame,
    previous: pd.DataFrame,
) -> tuple[pd.DataFrame, TopicModel, list[int]]:
    """The clusters (in documents' order) and the model with the new topics of at least
    `smallest` papers found among the new papers and those without a topic (`settings`: the
    build's, their "auto" sizes for the pool's own count); earlier papers keep their positions.
    The model is the same object when none was found."""
    rows = pool_rows(documents, clusters, previous)
    _, centres = model.centroids
    existing = emerge.Existing(centres, model.vectors[model.topics >= 0], model.outlier_threshold)
    found = emerge.find_topics(
        vectors, rows, settings, existing, registries.next_number(registries.of(model)), smallest
    )
    if not found.numbers:
        return clusters, model, []
    placed = clusters[["x", "y"]].to_numpy(np.float32)[rows]
    coords = emerge.positions(found, placed, model.coords, model.topics)
    earlier = documents["doc_id"].iloc[rows].isin(previous["doc_id"]).to_numpy()
    coords[earlier] = placed[earlier]  # earlier papers keep their positions
    doc_ids = documents["doc_id"].to_numpy()
    grown = emerge.extended_model(model, found, doc_ids, vectors, coords)
    grown = dataclasses.replace(
        grown, registry=registries.emerged(registries.of(model), found.numbers, grown)
    )
    clusters = clusters.copy()
    members = rows[found.topics >= 0]
    inside = found.topics >= 0
    clusters.loc[members, "topic"] = found.topics[inside]
    clusters.loc[members, "similarity"] = found.similarity[inside]
    clusters.loc[members, "x"] = coords[inside, 0]
    clusters.loc[members, "y"] = coords[inside, 1]
    clusters.loc[members, "placed"] = "fit"  # the model's papers now
    log.info(
        "%d new topics (%s) of %d of the %d new or unassigned papers",
        len(found.numbers),
        ", ".join(str(n) for n in found.numbers),
        int(inside.sum()),
        len(rows),
    )
    return clusters, grown, found.numbers


def renumbered(
    clusters: pd.DataFrame, model: TopicModel, saved: TopicModel, previous: pd.DataFrame
) -> tuple[pd.DataFrame, TopicModel]:
    """A refit's clusters and model with the saved model's topic numbers kept where the new
    clusters are its topics (identity.match_topics), new numbers past every number used, and
    the registry updated."""
    before = previous.set_index("doc_id")["topic"]
    common = clusters["doc_id"].isin(before.index).to_numpy()
    new = clusters["topic"].to_numpy()
    old = before.reindex(clusters["doc_id"][common]).to_numpy()
    transitions = identity.match_topics(
        old.astype(np.int64),
        new[common],
        registries.next_number(registries.of(saved)),
        sorted(set(new[new >= 0].tolist())),
    )
    number = np.vectorize(lambda t: transitions.numbers.get(int(t), -1), otypes=[np.int32])
    clusters = clusters.assign(topic=number(new) if len(new) else new)
    model = dataclasses.replace(model, topics=number(model.topics), registry=None)
    model = dataclasses.replace(
        model, registry=registries.refitted(registries.of(saved), transitions, model)
    )
    kept = identity.kept_share(old, clusters["topic"].to_numpy()[common])
    best = identity.best_kept_share(old, new[common])
    counts = transitions.counts()
    log.info(
        "topic numbers kept for %.1f%% of the papers in a topic before (the best one-to-one "
        "numbering: %.1f%%); %s",
        100 * kept,
        100 * best,
        ", ".join(f"{v} {k}" for k, v in counts.items()),
    )
    return clusters, model

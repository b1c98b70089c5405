"""The map page's context and its data files: the paper data map.js draws, the sidebar's
heading, and the text shards (mapfiles.py) beside the page."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.config import RenderConfig
from pipeline.neighbours import similar_papers
from pipeline.stages.render.changes import gone_topics
from pipeline.stages.render.crowding import density_data, venue_groups
from pipeline.stages.render.mapfiles import KeptShards, shard_files, shard_of
from pipeline.stages.render.shaping import Summary, map_data, web_url

N_NEIGHBOURS = 5  # similar papers listed in the panel


@dataclass(frozen=True)
class Similar:
    """Each paper's most similar papers: `doc_ids` in the pages' order (pages_order), and per
    paper the rows (in that order) of its N_NEIGHBOURS most similar others and their cosine."""

    doc_ids: list[str]
    neighbours: np.ndarray
    similarities: np.ndarray


def pages_order(doc_ids: list[str], added: np.ndarray) -> np.ndarray:
    """The papers' order in the pages: the papers of the fit by doc_id, then those `added` to
    its model later (the clusters table's `placed`) by doc_id. A paper is shown by its place in
    this order (its similar papers, its text shard), so papers added to a built map leave the
    earlier papers' places, and the shards that do not hold or name the new ones, unchanged."""
    return np.lexsort((np.asarray(doc_ids, dtype=object), np.asarray(added, dtype=bool)))


def is_added(placed) -> np.ndarray:
    return np.asarray(placed, dtype=object) == "added"


def similar_of(doc_ids: list[str], vectors: np.ndarray, added: np.ndarray) -> Similar:
    """Similar from the papers' embeddings (in any order: they are taken in the pages')."""
    order = pages_order(doc_ids, added)
    neighbours, similarities = similar_papers(np.asarray(vectors)[order], N_NEIGHBOURS)
    return Similar([doc_ids[i] for i in order], neighbours, similarities)


def build_key(title: str) -> str:
    """The map's identity for what a browser keeps of it (the reading list, map-reading.js):
    a digest of the page's title (the configured one, or the one made from the venues and
    years), so maps of other corpora keep their own lists and a rebuild of the same keeps its."""
    return hashlib.sha1(title.encode("utf-8")).hexdigest()[:12]


def add_crowding(data: dict, frame: pd.DataFrame) -> None:
    """The map data's density layer and venue groups (crowding.py); a grouped venue is drawn in
    its group's colour."""
    ranges = (data["x_range"], data["y_range"])
    data["density"] = density_data(frame, data["venues"], *ranges, data["point_size"])
    labels = {t["id"]: t["label"] for t in data["topics"]}
    data["venue_groups"] = venue_groups(frame, data["venues"], labels)
    for group in data["venue_groups"] or []:
        for v in group["venues"]:
            data["venue_colours"][v] = group["colour"]


def add_history(data: dict, marks: dict) -> None:
    """Mark the topics born lately (`new`: True) and add the ended topics (`gone`,
    changes.gone_topics) to the map data."""
    new = set(marks.get("new") or [])
    for topic in data["topics"]:
        if topic["id"] in new:
            topic["new"] = True
    labels = {t["id"]: t["label"] for t in data["topics"]}
    data["gone"] = gone_topics(marks.get("gone"), labels)


def map_context(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    similar: Similar,
    summary: Summary,
    config: RenderConfig,
    marks: dict | None = None,
    kept_shards: KeptShards | None = None,
) -> tuple[dict, dict[str, str]]:
    """(everything templates/map.html lays out, {shard path: script} of the papers' text).
    `similar`: the frame's papers' most similar papers; `themes`: the theme level or None;
    `marks`: the topics born lately ("new": marked in the topic list) and the topic registry
    ("gone": its ended topics, which a link may still name), or None; `kept_shards`:
    mapfiles.shard_files' `kept`."""
    neighbours, similarities = similar.neighbours, similar.similarities
    shards = shard_of(frame["topic"].to_numpy())
    urls = [web_url(u) for u in frame["url"]]
    files, tokens = shard_files(frame, urls, shards, neighbours, similarities, kept_shards)
    data = map_data(frame, topics, themes, shards, tokens, neighbours.shape[1], config)
    add_crowding(data, frame)
    add_history(data, marks or {})
    context = {
        "summary": summary,
        "list_heading": "Themes and topics" if data["themes"] else "Topics",
        "data": data,
    }
    return context, files

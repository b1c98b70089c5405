"""The map page's context and its data files: the paper data map.js draws, the sidebar's
heading, and the text shards (mapfiles.py) beside the page."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.config import RenderConfig
from pipeline.neighbours import similar_papers
from pipeline.render.mapfiles import shard_files, shard_of
from pipeline.render.shaping import Summary, map_data, web_url

N_NEIGHBOURS = 5  # similar papers listed in the panel


def map_context(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    vectors: np.ndarray,
    summary: Summary,
    config: RenderConfig,
) -> tuple[dict, dict[str, str]]:
    """(everything templates/map.html lays out, {shard path: script} of the papers' text).
    `vectors`: the frame's papers' embeddings, whose cosine similarity picks each paper's most
    similar papers; `themes`: the theme level or None."""
    neighbours, similarities = similar_papers(vectors, N_NEIGHBOURS)
    shards = shard_of(frame["topic"].to_numpy())
    urls = [web_url(u) for u in frame["url"]]
    files, tokens = shard_files(frame, urls, shards, neighbours, similarities)
    data = map_data(frame, topics, themes, shards, tokens, neighbours.shape[1], config)
    context = {
        "summary": summary,
        "list_heading": "Themes and topics" if data["themes"] else "Topics",
        "data": data,
    }
    return context, files

"""The map page's context: the paper data map.js draws and the sidebar's heading, as plain data
for templates/map.html."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.config import RenderConfig
from pipeline.neighbours import nearest_neighbours
from pipeline.render.shaping import Summary, map_data

N_NEIGHBOURS = 5  # similar papers listed in the panel


def map_context(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    vectors: np.ndarray,
    summary: Summary,
    config: RenderConfig,
) -> dict:
    """Everything templates/map.html lays out. `vectors`: the frame's papers' embeddings, whose
    cosine similarity picks each paper's most similar papers; `themes`: the theme level or
    None."""
    neighbours, similarities = nearest_neighbours(vectors, N_NEIGHBOURS)
    data = map_data(frame, topics, themes, neighbours, similarities, config)
    return {
        "summary": summary,
        "list_heading": "Themes and topics" if data["themes"] else "Topics",
        "data": data,
    }

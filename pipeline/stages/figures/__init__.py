"""Stage figures (`make figures`, `topicmap figure`): the map as a still image for a paper, a
talk or a post, in figures/: map.png (figures.dpi, 300 by default), map.svg and map.pdf.

Every paper in its topic's colour (the map's colours, pipeline.colours), unassigned papers
muted beneath, the themes' labels (or the topics') at their papers' median kept apart, a title
from the data; optionally one panel per venue on shared coordinates, and a highlighted topic or
venue with the rest muted. Reads documents (venue and year), clusters (x, y, topic), topics and
themes; writes nothing else. Drawn with matplotlib and adjustText: datamapplot, the library made
for this, requires pylabeladjust, which pins pandas below 3 (this project runs pandas 3).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from pipeline import schemas, tables
from pipeline.config import FiguresConfig
from pipeline.stages.figures.drawing import FORMATS, draw, write_figures
from pipeline.stages.figures.shaping import FigureData, figure_data

log = logging.getLogger("pipeline.figures")

__all__ = ["FORMATS", "FigureData", "draw", "figure_data", "make_figure", "run"]


def make_figure(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    config: FiguresConfig,
):
    """Pure core: the matplotlib Figure of the build's tables (documents: doc_id, venue, year)."""
    return draw(figure_data(documents, clusters, topics, themes, config), config)


def run(
    config: FiguresConfig,
    documents: Path,
    clusters: Path,
    topics: Path,
    themes: Path,
    figure: Path,
) -> None:
    """Write `figure` (map.png) and map.svg and map.pdf beside it."""
    tables.stage_lineage(  # refuse tables from different builds
        config, documents=documents, clusters=clusters, topics=topics, themes=themes
    )
    drawn = make_figure(
        tables.read_table(documents, schemas.DOCUMENTS, ["doc_id", "venue", "year"]),
        tables.read_table(clusters, schemas.CLUSTERS, ["doc_id", "topic", "x", "y"]),
        tables.read_table(topics, schemas.TOPICS),
        tables.read_table(themes, schemas.THEMES),
        config,
    )
    for fmt, path in write_figures(drawn, Path(figure), config.dpi).items():
        log.info("wrote %s (%s, %.1f MB)", path, fmt, path.stat().st_size / 1e6)

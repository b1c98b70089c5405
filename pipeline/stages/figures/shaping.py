"""What a figure shows, as tidy frames (the drawing is drawing.py's): every paper's position and
colour in drawing order, the labels with their anchors, the panels and the title. Pure: tables
in, frames out."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline import tables
from pipeline.colours import MAP_COLOURS, UNASSIGNED_COLOUR, topic_colours
from pipeline.config import FiguresConfig
from pipeline.errors import PipelineError
from pipeline.labels import corpus_title, theme_level

CONTEXT_COLOUR = MAP_COLOURS["context"]  # papers a panel or a highlight leaves out
LABEL_WIDTH = 24  # characters a label line holds before it wraps


@dataclass(frozen=True)
class FigureData:
    """points: x, y, topic, venue, year and colour of each paper, ordered by doc_id (`layers`
    says which are muted in a panel); labels: text, x, y (its papers' median), papers, topic
    (a topic's label: its id; a theme's: -1), the highlighted topic's first, then the largest;
    panels: the venues drawn one per panel (empty: one map); title and subtitle ("" for none)."""

    points: pd.DataFrame
    labels: pd.DataFrame
    panels: list[str]
    title: str
    subtitle: str


def paper_points(
    documents: pd.DataFrame, clusters: pd.DataFrame, topics: pd.DataFrame, themes: pd.DataFrame
) -> pd.DataFrame:
    """One row per paper, ordered by doc_id: x, y, topic, venue, year and its topic's colour (the
    map's: pipeline.colours.topic_colours over the theme level)."""
    frame = tables.paper_frame(documents, clusters, topics)
    colours = topic_colours(topics, theme_level(themes))
    frame["colour"] = [
        UNASSIGNED_COLOUR if t < 0 else colours[t] for t in frame["topic"].astype(int)
    ]
    return frame[["x", "y", "topic", "venue", "year", "colour"]]


def _wrapped(text: str) -> str:
    return "\n".join(textwrap.wrap(str(text), LABEL_WIDTH, break_on_hyphens=False)) or str(text)


def label_frame(
    points: pd.DataFrame, topics: pd.DataFrame, themes: pd.DataFrame, config: FiguresConfig
) -> pd.DataFrame:
    """The labels drawn, largest first: each theme's (config.labels "themes", where a theme
    level exists) or each topic's, at the median of its papers, the unassigned left out; with a
    highlighted topic, that topic's own label beside the themes', placed first. `topic`: a
    topic label's topic, -1 for a theme's."""
    level = theme_level(themes) if config.labels == "themes" else None
    if level is None:
        groups = [(int(r.topic), [int(r.topic)], r.label) for r in topics.itertuples()]
    else:
        groups = [(int(r.theme), [int(t) for t in r.topics], r.label) for r in level.itertuples()]
    rows = []
    topic = points["topic"].to_numpy()
    for key, members, label in groups:
        mine = np.isin(topic, members) & (topic >= 0)
        if mine.any():
            rows.append(_label_row(points[mine], label, key if level is None else -1))
    if config.highlight_topic is not None and level is not None:
        mine = topic == config.highlight_topic
        label = topics.loc[topics["topic"] == config.highlight_topic, "label"].iat[0]
        rows.append(_label_row(points[mine], label, config.highlight_topic))
    columns = ["text", "x", "y", "papers", "topic"]
    labels = pd.DataFrame(rows, columns=columns)
    chosen = labels["topic"] == (-2 if config.highlight_topic is None else config.highlight_topic)
    labels = labels.assign(chosen=chosen)  # the highlighted topic's label first, kept first
    order = labels.sort_values(["chosen", "papers", "text"], ascending=[False, False, True])
    return order.drop(columns="chosen").reset_index(drop=True)


def _label_row(papers: pd.DataFrame, label: str, topic: int = -1) -> dict:
    return {
        "text": _wrapped(label),
        "x": float(papers["x"].median()),
        "y": float(papers["y"].median()),
        "papers": len(papers),
        "topic": topic,
    }


def check_highlights(points: pd.DataFrame, topics: pd.DataFrame, config: FiguresConfig) -> None:
    """Refuse a highlighted topic or venue the build does not hold, in one line."""
    held = sorted(int(t) for t in topics["topic"] if int(t) >= 0)
    if config.highlight_topic is not None and config.highlight_topic not in held:
        raise PipelineError(
            f"figures.highlight_topic: no topic {config.highlight_topic} in this build "
            f"(topics {held[0] if held else '-'} to {held[-1] if held else '-'})"
        )
    venues = sorted(points["venue"].dropna().unique())
    if config.highlight_venue is not None and config.highlight_venue not in venues:
        raise PipelineError(
            f"figures.highlight_venue: no venue {config.highlight_venue!r} in this build "
            f"(venues: {', '.join(venues)})"
        )


def layers(points: pd.DataFrame, config: FiguresConfig, panel: str | None) -> np.ndarray:
    """Each paper's layer in one panel (`panel`: its venue, None for the one map): 2 where it is
    drawn in its topic's colour (in the highlighted topic and venue and the panel's venue, each
    where set), 1 where unassigned, else 0 (muted under the rest)."""
    shown = np.ones(len(points), dtype=bool)
    venue = points["venue"].to_numpy()
    if config.highlight_topic is not None:
        shown &= points["topic"].to_numpy() == config.highlight_topic
    if config.highlight_venue is not None:
        shown &= venue == config.highlight_venue
    if panel is not None:
        shown &= venue == panel
    unassigned = points["topic"].to_numpy() < 0
    return np.where(shown & ~unassigned, 2, np.where(shown & unassigned, 1, 0))


def _subtitle(topics: pd.DataFrame, config: FiguresConfig) -> str:
    parts = []
    if config.highlight_topic is not None:
        label = topics.loc[topics["topic"] == config.highlight_topic, "label"].iat[0]
        parts.append(f"topic: {label}")
    if config.highlight_venue is not None:
        parts.append(f"venue: {config.highlight_venue}")
    return ("Highlighted " + "; ".join(parts)) if parts else ""


def figure_data(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    config: FiguresConfig,
) -> FigureData:
    """Pure core: what the figure draws, from the build's documents (doc_id, venue, year),
    clusters, topics and themes tables and the figures section."""
    points = paper_points(documents, clusters, topics, themes)
    check_highlights(points, topics, config)
    panels = sorted(points["venue"].dropna().unique()) if config.panels == "venue" else []
    return FigureData(
        points=points,
        labels=label_frame(points, topics, themes, config),
        panels=[str(p) for p in panels],
        title=config.title or corpus_title(points),
        subtitle=_subtitle(topics, config),
    )

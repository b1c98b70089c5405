"""The report's themes -> topics treemap: a plotly figure sized by papers (topics.parquet's and
themes.parquet's sizes) and coloured by venue lean (compare's shares in venue_topics.parquet),
drawn by report.js from the page's JSON data like the comparison charts."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from pipeline.colours import topic_colour, venue_colour
from pipeline.stages.render.charts import plotly_text

PALE = "#f4f5f7"  # the middle of the lean scale, and the root tile


def _leans(rows: pd.DataFrame, venues: list[str]) -> dict[int, float]:
    """id -> its share of the first venue's papers minus its share of the second's, in points."""
    pivot = rows.pivot(index="id", columns="venue", values="share")
    lean = 100 * (pivot[venues[0]] - pivot[venues[1]])
    return {int(i): round(float(v), 2) for i, v in lean.items()}


def _hover(label: str, papers: int, cells: list[tuple[str, float]]) -> str:
    text = f"<b>{plotly_text(label)}</b><br>{papers:,} papers"
    for venue, share in cells:
        text += f"<br>{plotly_text(venue)}: {100 * share:.1f}% of its papers"
    return text


def _cells(venue_topics: pd.DataFrame) -> dict[tuple[str, int], list[tuple[str, float]]]:
    """(level, id) -> its (venue, share) rows in the table's order, grouped once (a filter of
    the table per tile took a second at 450 topics)."""
    cells: dict[tuple[str, int], list[tuple[str, float]]] = {}
    columns = (venue_topics[c].tolist() for c in ("level", "id", "venue", "share"))
    for level, key, venue, share in zip(*columns, strict=True):
        cells.setdefault((level, int(key)), []).append((venue, float(share)))
    return cells


def _tiles(
    topics: pd.DataFrame, themes: pd.DataFrame | None, venue_topics: pd.DataFrame, lean
) -> dict[str, list]:
    """The treemap's columns: a root, the themes (when shown), the assigned topics."""
    assigned = topics[topics["topic"] >= 0]
    papers = int(assigned["size"].sum())
    tiles = {  # one root tile above the themes (plotly's own is dark), named in the path bar
        "ids": ["all"],
        "parents": [""],
        "labels": ["All topics"],
        "values": [papers],
        "colours": [0.0 if lean else PALE],
        "hovers": [f"<b>All topics</b><br>{papers:,} papers"],
    }

    cells = _cells(venue_topics)

    def add(level: str, key: int, parent: str, label: str, size: int, colour: str) -> None:
        for column, value in (
            ("ids", f"{level}-{key}"),
            ("parents", parent),
            ("labels", plotly_text(label)),
            ("values", size),
            ("colours", lean[level][key] if lean else colour),
            ("hovers", _hover(label, size, cells.get((level, key), []))),
        ):
            tiles[column].append(value)

    theme_of = {}
    for theme in [] if themes is None else themes.itertuples():
        key = int(theme.theme)
        add("theme", key, "all", theme.label, int(theme.size), topic_colour(key))
        theme_of.update({int(t): int(theme.theme) for t in theme.topics})
    for topic in assigned.itertuples():
        theme = theme_of.get(int(topic.topic))
        parent, colour = (
            ("all", topic_colour(topic.topic))
            if theme is None
            else (f"theme-{theme}", topic_colour(theme))
        )
        add("topic", int(topic.topic), parent, topic.label, int(topic.size), colour)
    return tiles


def _colourbar(venues: list[str], reach: float) -> dict:
    """A colourbar whose ends say which venue a colour leans to."""
    first, second = (plotly_text(v) for v in venues[:2])
    return {
        "title": {"text": "venue lean,<br>share points<br> ", "side": "top"},
        "tickvals": [-reach, 0, reach],
        "ticktext": [f"{reach:.1f} more {second}", "even", f"{reach:.1f} more {first}"],
        "thickness": 14,
        "len": 0.75,
        "y": 0.45,
    }


def treemap_chart(
    topics: pd.DataFrame, themes: pd.DataFrame | None, venue_topics: pd.DataFrame
) -> go.Figure:
    """Themes -> topics as a plotly treemap sized by papers, the unassigned papers left out.
    With two venues a tile's colour is its venue lean (compare's share of the first venue's
    papers minus that of the second, in points, on a diverging scale from the second venue's
    colour to the first's, whose colourbar names each side); otherwise a topic takes its
    theme's colour (its own without a theme level)."""
    venues = sorted(venue_topics["venue"].unique())
    lean = None
    if len(venues) == 2:
        lean = {
            level: _leans(venue_topics[venue_topics["level"] == level], venues)
            for level in ("topic", "theme")
        }
    tiles = _tiles(topics, themes, venue_topics, lean)
    marker: dict = {"colors": tiles["colours"], "line": {"color": "#fff", "width": 1.5}}
    if lean:
        reach = max([abs(v) for level in lean.values() for v in level.values()] + [1.0])
        marker.update(
            colorscale=[[0.0, venue_colour(1)], [0.5, PALE], [1.0, venue_colour(0)]],
            cmid=0,
            cmin=-reach,
            cmax=reach,
            showscale=True,
            colorbar=_colourbar(venues, reach),
        )
    fig = go.Figure(
        go.Treemap(
            ids=tiles["ids"],
            parents=tiles["parents"],
            labels=tiles["labels"],
            values=tiles["values"],
            branchvalues="total",
            marker=marker,
            hovertext=tiles["hovers"],
            hoverinfo="text",
            textinfo="label+value",
            sort=True,
            pathbar={"visible": True},
            tiling={"pad": 2},
            maxdepth=3,
        )
    )
    fig.update_layout(
        height=520,
        margin={"l": 0, "r": 0, "t": 30, "b": 0},
        hoverlabel={"align": "left"},
        uniformtext={"minsize": 8, "mode": "hide"},  # no label too small to read
        font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"},
    )
    return fig

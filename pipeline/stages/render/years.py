"""The report's per-year section, from compare's venue_years.parquet (nothing recomputed): a
chart per theme (per topic without a theme level) of its share of each venue's papers year by
year, venues as lines, and the venue comparison of each year alone behind a year selector.
Shown only when the papers span more than one year."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from pipeline.colours import venue_colour
from pipeline.stages.render.charts import comparison_figure, figure_data, plotly_text, share_hover

MARKS = {"over": "▲", "under": "▼", "none": ""}


def _hover(row: dict) -> str:
    return share_hover(row, when=str(row["year"]), papers="venue_year_papers")


def trend_chart(rows: pd.DataFrame, venues: list[str], years: list[int]) -> go.Figure:
    """One theme's (or topic's) share of each venue's papers per year: a line per venue in its
    colour (`venues`: every venue, sorted, as the other charts colour them); a year where
    venue_years flags the venue is a larger outlined dot with ▲/▼ above it."""
    traces = []
    for k, venue in enumerate(venues):
        cells = rows[rows["venue"] == venue].sort_values("year").to_dict("records")
        if not cells:
            continue
        flagged = [c["flag"] != "none" for c in cells]
        traces.append(
            go.Scatter(
                x=[c["year"] for c in cells],
                y=[round(100 * c["share"], 3) for c in cells],
                mode="lines+markers+text",
                name=plotly_text(venue),
                line={"color": venue_colour(k), "width": 2},
                marker={
                    "color": venue_colour(k),
                    "size": [11 if f else 7 for f in flagged],
                    "line": {"color": "#111", "width": [2 if f else 0 for f in flagged]},
                },
                text=[MARKS[c["flag"]] for c in cells],
                textposition="top center",
                textfont={"color": venue_colour(k), "size": 12},
                hovertext=[_hover(c) for c in cells],
                hoverinfo="text",
                showlegend=False,
            )
        )
    fig = go.Figure(traces)
    fig.update_layout(
        height=240,
        margin={"l": 45, "r": 10, "t": 10, "b": 30},
        plot_bgcolor="#fff",
        xaxis={"tickvals": years, "ticktext": [str(y) for y in years], "fixedrange": True},
        yaxis={
            "title": {"text": "% of papers"},
            "rangemode": "tozero",
            "gridcolor": "#eceef1",
            "fixedrange": True,
        },
        hoverlabel={"align": "left"},
        font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 11},
    )
    return fig


def trend_table(rows: pd.DataFrame, venues: list[str], years: list[int]) -> list[dict]:
    """A trend chart's figures as text: per venue, its share and flag in each year (None where
    it had no papers that year)."""
    cells = {(r["venue"], int(r["year"])): r for r in rows.to_dict("records")}
    return [
        {
            "venue": venue,
            "cells": [
                None
                if (venue, y) not in cells
                else {
                    "share": float(cells[venue, y]["share"]),
                    "flag": cells[venue, y]["flag"],
                    "venue": venue,
                }
                for y in years
            ],
        }
        for venue in venues
        if any((venue, y) in cells for y in years)
    ]


def _trends(
    venue_years: pd.DataFrame,
    level: str,
    ids: list[int],
    venues: list[str],
    years: list[int],
    with_table: bool = False,
) -> list[dict]:
    """A trend chart per id of `level` that venue_years holds: {id, label, figure} (and its
    figures as a table, with `with_table`)."""
    labelled = venue_years[venue_years["level"] == level]
    out = []
    for key in ids:
        rows = labelled[labelled["id"] == key]
        if rows.empty:
            continue
        trend = {
            "id": f"trend-{level}-{key}",
            "label": str(rows["label"].iloc[0]),
            "figure": figure_data(trend_chart(rows, venues, years)),
        }
        if with_table:
            trend["table"] = trend_table(rows, venues, years)
        out.append(trend)
    return out


def _year_comparison(rows: pd.DataFrame, show_themes: bool, venues: list[str]) -> list[dict]:
    """One year's venue comparison charts (themes when shown, then topics), as figure data."""
    rows = rows[rows["id"] >= 0].rename(columns={"venue_year_papers": "venue_papers"})
    out = []
    for level, div, title in (
        ("theme", "year-theme-chart", "Themes"),
        ("topic", "year-topic-chart", "Topics"),
    ):
        part = rows[rows["level"] == level]
        if (level == "theme" and not show_themes) or part.empty:
            continue
        out.append(
            {
                "id": div,
                "title": title,
                "figure": figure_data(comparison_figure(part, level, venues)),
            }
        )
    return out


def years_context(
    venue_years: pd.DataFrame | None,
    themes: pd.DataFrame | None,
    topics: pd.DataFrame,
    venues: list[str],
    undated: int,
) -> dict | None:
    """The per-year section's data, or None when venue_years spans fewer than two years.
    `themes`: the theme level or None (then a chart per topic); `venues`: every venue, sorted
    (their colours); `undated`: papers without a year, left out of the section."""
    if venue_years is None or venue_years["year"].nunique() < 2:
        return None
    years = sorted(int(y) for y in venue_years["year"].unique())
    level = "topic" if themes is None else "theme"
    order = topics.loc[topics["topic"] >= 0, "topic"] if themes is None else themes["theme"]
    trends = _trends(venue_years, level, [int(k) for k in order], venues, years, with_table=True)
    topic_ids = [int(t) for t in topics.loc[topics["topic"] >= 0, "topic"]]
    by_year = {
        str(year): _year_comparison(
            venue_years[venue_years["year"] == year], themes is not None, venues
        )
        for year in years
    }
    return {
        "years": years,
        "level": level,
        "undated": undated,
        "venues": [{"venue": v, "colour": venue_colour(k)} for k, v in enumerate(venues)],
        "trends": trends,
        "topic_trends": []
        if themes is None
        else _trends(venue_years, "topic", topic_ids, venues, years),
        "by_year": by_year,
        "papers": _papers_per_year(venue_years, venues, years),
    }


def _papers_per_year(venue_years: pd.DataFrame, venues: list[str], years: list[int]) -> list:
    """[{venue, colour, counts: papers in each year (0 where none)}], from venue_year_papers."""
    rows = venue_years[venue_years["level"] == "topic"].drop_duplicates(["venue", "year"])
    papers = dict(
        zip(zip(rows["venue"], rows["year"], strict=True), rows["venue_year_papers"], strict=True)
    )
    return [
        {
            "venue": v,
            "colour": venue_colour(k),
            "counts": [int(papers.get((v, y), 0)) for y in years],
        }
        for k, v in enumerate(venues)
    ]

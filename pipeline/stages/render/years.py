"""The report's per-year section, from compare's venue_years.parquet (nothing recomputed): the
papers per venue and year as a table, and every theme's and topic's share of each venue's papers
year by year as one compact table that report-years.js draws from on demand (a theme's trend
chart when it scrolls into view, one topic's trend and one year's venue comparison when chosen).
Shown only when the papers span more than one year.

The compact table (`cells`) is venue_years' count, share, z and flag of every (topic or theme,
venue, year), as little-endian arrays packed one after another, raw-deflated and base64-encoded
(zero cells, most of a long history, deflate to almost nothing): the report's weight grows with
the rows x venues x years cells, a few bytes each, instead of a plotly figure per chart.
"""

from __future__ import annotations

import base64
import zlib

import numpy as np
import pandas as pd

from pipeline.colours import venue_colour

FLAGS = {"under": -1, "none": 0, "over": 1}
# the arrays packed in `cells`, in order, each rows x venues x years in C order
CELL_ARRAYS = (("count", "<u4"), ("share", "<f4"), ("z", "<f4"), ("flag", "i1"))


def _rows(venue_years: pd.DataFrame, level: str, ids: list[int]) -> list[dict]:
    """The level's rows of the compact table, in `ids`' order (those venue_years holds)."""
    labelled = venue_years[venue_years["level"] == level].drop_duplicates("id").set_index("id")
    return [
        {"level": level, "id": key, "label": str(labelled.loc[key, "label"])}
        for key in ids
        if key in labelled.index
    ]


def pack_cells(
    venue_years: pd.DataFrame, rows: list[dict], venues: list[str], years: list[int]
) -> str:
    """The cells of `rows` (each {level, id}) x venues x years as CELL_ARRAYS packed, deflated
    and base64-encoded; a venue without papers in a year has count 0, share 0, z NaN."""
    shape = (len(rows), len(venues), len(years))
    arrays = {name: np.zeros(shape, dtype=dtype) for name, dtype in CELL_ARRAYS}
    arrays["z"][:] = np.nan
    row_of = {(r["level"], r["id"]): k for k, r in enumerate(rows)}
    venue_of = {v: k for k, v in enumerate(venues)}
    year_of = {y: k for k, y in enumerate(years)}
    table = venue_years[venue_years["venue"].isin(venue_of)]
    keys = zip(table["level"], table["id"].astype(int), strict=True)
    at = np.array([row_of.get(key, -1) for key in keys], dtype=np.int64)
    table = table[at >= 0]
    where = (
        at[at >= 0],
        table["venue"].map(venue_of).to_numpy(),
        table["year"].astype(int).map(year_of).to_numpy(),
    )
    arrays["count"][where] = table["count"].to_numpy()
    arrays["share"][where] = table["share"].to_numpy()
    arrays["z"][where] = table["z"].astype(float).to_numpy()
    arrays["flag"][where] = table["flag"].map(FLAGS).to_numpy()
    raw = b"".join(arrays[name].tobytes() for name, _ in CELL_ARRAYS)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: DecompressionStream's
    return base64.b64encode(deflate.compress(raw) + deflate.flush()).decode("ascii")


def unpack_cells(packed: str, n_rows: int, n_venues: int, n_years: int) -> dict[str, np.ndarray]:
    """pack_cells' inverse (for tests and tools): {name: rows x venues x years array}."""
    raw = zlib.decompress(base64.b64decode(packed), -15)
    out, at = {}, 0
    for name, dtype in CELL_ARRAYS:
        size = n_rows * n_venues * n_years * np.dtype(dtype).itemsize
        out[name] = np.frombuffer(raw[at : at + size], dtype=dtype).reshape(
            n_rows, n_venues, n_years
        )
        at += size
    return out


def years_context(
    venue_years: pd.DataFrame | None,
    themes: pd.DataFrame | None,
    topics: pd.DataFrame,
    venues: list[str],
    undated: int,
) -> dict | None:
    """The per-year section's data, or None when venue_years spans fewer than two years.
    `themes`: the theme level or None (then a trend chart per topic); `venues`: every venue,
    sorted (their colours); `undated`: papers without a year, left out of the section.
    `data` is what report-years.js draws from: the years, venues and their colours, the rows
    (themes first when shown, then topics; unassigned papers left out) and their cells."""
    if venue_years is None or venue_years["year"].nunique() < 2:
        return None
    years = sorted(int(y) for y in venue_years["year"].unique())
    level = "topic" if themes is None else "theme"
    topic_ids = [int(t) for t in topics.loc[topics["topic"] >= 0, "topic"]]
    theme_rows = (
        [] if themes is None else _rows(venue_years, "theme", [int(h) for h in themes["theme"]])
    )
    topic_rows = _rows(venue_years, "topic", topic_ids)
    rows = theme_rows + topic_rows
    colours = [venue_colour(k) for k in range(len(venues))]
    papers = _papers_per_year(venue_years, venues, years)
    return {
        "years": years,
        "level": level,
        "undated": undated,
        "venues": [{"venue": v, "colour": c} for v, c in zip(venues, colours, strict=True)],
        "trends": [
            {"id": f"trend-{r['level']}-{r['id']}", "label": r["label"], "row": k}
            for k, r in enumerate(rows)
            if r["level"] == level
        ],
        "topic_trends": []
        if themes is None
        else [{"id": f"trend-topic-{r['id']}", "label": r["label"]} for r in topic_rows],
        "papers": papers,
        "data": {
            "years": years,
            "venues": venues,
            "colours": colours,
            "z_threshold": float(venue_years["z_threshold"].iloc[0]) if len(venue_years) else 0.0,
            "papers": [row["counts"] for row in papers],
            "rows": [[r["level"], r["id"], r["label"]] for r in rows],
            "cells": pack_cells(venue_years, rows, venues, years),
        },
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

"""What the pages say about the corpus as a whole, from the papers themselves: the words of the
link to the map's venue view, its layout, and the years a year filter offers (the title made
from the venues and years present is pipeline.labels.corpus_title, which the figures share)."""

from __future__ import annotations

import pandas as pd

from pipeline.labels import MANY_VENUES


def venues_link_text(venues: list[str]) -> str:
    """The words of the link to the map's per-venue view: side by side for two or three venues,
    small multiples for more, and the plain map for one."""
    if len(venues) <= 1:
        return "The map"
    if len(venues) > MANY_VENUES:
        return "Venues as small multiples"
    return "Venues side by side"


def year_span(frame: pd.DataFrame) -> dict:
    """The years a year-range filter offers ({"years": sorted, "undated": papers without a
    year}); one year or none means no filter."""
    return {
        "years": sorted({int(y) for y in frame["year"].dropna()}),
        "undated": int(frame["year"].isna().sum()),
    }


def venue_layout(venues: list[str]) -> str:
    """How the map lays out its per-venue view: "single" (one venue: no per-venue view),
    "side_by_side" (two or three), "small_multiples" (more, with one venue highlighted over
    the others in grey)."""
    if len(venues) <= 1:
        return "single"
    return "small_multiples" if len(venues) > MANY_VENUES else "side_by_side"


def paper_years(frame: pd.DataFrame) -> list[int | None]:
    """Each paper's year for the map's year filter (None: no year; the filter keeps such papers
    on the map whatever range it is set to, and says how many there are)."""
    return [None if pd.isna(y) else int(y) for y in frame["year"]]

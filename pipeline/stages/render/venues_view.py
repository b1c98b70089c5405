"""What the pages say about the corpus as a whole, from the papers themselves: the title and
heading (which venues and years are present) when `render.title` is not set, the words of the
link to the map's venue view, and the years a year filter offers."""

from __future__ import annotations

import pandas as pd

MANY_VENUES = 3  # above this the venues are counted in the title, not named


def year_text(years: list[int]) -> str:
    """'2025', '2020–2025' (the span, gaps included) or '' for no year."""
    if not years:
        return ""
    low, high = min(years), max(years)
    return str(low) if low == high else f"{low}–{high}"


def venue_text(venues: list[str]) -> str:
    """'ICML', 'ICLR & ICML', 'AISTATS, ICLR & ICML', or '8 venues' above MANY_VENUES."""
    venues = sorted(venues)
    if len(venues) > MANY_VENUES:
        return f"{len(venues)} venues"
    if len(venues) <= 1:
        return "".join(venues)
    return ", ".join(venues[:-1]) + " & " + venues[-1]


def corpus_title(frame: pd.DataFrame) -> str:
    """The pages' title and heading from the papers' `venue` and `year` columns:
    'ICLR & ICML 2020–2025 topic map', '8 venues, 2023 topic map', 'ICML topic map'."""
    venues = sorted(frame["venue"].dropna().unique())
    years = sorted({int(y) for y in frame["year"].dropna()})
    names, span = venue_text(venues), year_text(years)
    joiner = ", " if len(venues) > MANY_VENUES else " "
    words = [names + (joiner + span if span else "") if names else span, "topic map"]
    text = " ".join(w for w in words if w)
    return text[0].upper() + text[1:]


def page_title(configured: str | None, frame: pd.DataFrame) -> str:
    """`render.title` when set, else the title made from the data."""
    return configured if configured else corpus_title(frame)


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

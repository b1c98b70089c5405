"""Labels joined to papers or topics one way everywhere: a frame with a `topic` column gains
`topic_label` and `theme` (from topics.parquet) and `theme_label` (from themes.parquet); a topic
or theme the tables do not name (the unassigned papers' -1) reads as the unassigned label. The
API's papers, `topicmap place`'s table and the csv stage all join through here.

Also what the pages and figures call the build's parts: the themes shown as a level of their own
(`theme_level`) and the corpus' title made from its venues and years (`corpus_title`), read by
the render and figures stages alike.
"""

from __future__ import annotations

import pandas as pd

from pipeline.schemas import UNASSIGNED_LABEL


def with_topic_labels(frame: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """`frame` (its rows and order kept) with each row's topic_label and theme."""
    by_topic = topics.set_index(topics["topic"].astype(int))
    topic = frame["topic"].astype(int)
    return frame.assign(
        topic_label=topic.map(by_topic["label"]).fillna(UNASSIGNED_LABEL).to_numpy(),
        theme=topic.map(by_topic["theme"]).fillna(-1).astype(int).to_numpy(),
    )


def with_theme_labels(frame: pd.DataFrame, themes: pd.DataFrame) -> pd.DataFrame:
    """`frame` (a `theme` column; rows and order kept) with each row's theme_label."""
    label_of = dict(zip(themes["theme"].astype(int), themes["label"], strict=True))
    theme = frame["theme"].astype(int)
    return frame.assign(theme_label=[label_of.get(t, UNASSIGNED_LABEL) for t in theme])


def with_labels(frame: pd.DataFrame, topics: pd.DataFrame, themes: pd.DataFrame) -> pd.DataFrame:
    """`frame` with topic_label, theme and theme_label."""
    return with_theme_labels(with_topic_labels(frame, topics), themes)


def theme_level(themes: pd.DataFrame) -> pd.DataFrame | None:
    """The themes the pages show (the unassigned group left out), or None when there is no
    separate theme level: every theme then holds exactly one topic, its own."""
    named = themes[themes["theme"] >= 0].reset_index(drop=True)
    if not any(len(members) > 1 for members in named["topics"]):
        return None
    return named


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
    """The title made from the papers' `venue` and `year` columns:
    'ICLR & ICML 2020–2025 topic map', '8 venues, 2023 topic map', 'ICML topic map'."""
    venues = sorted(frame["venue"].dropna().unique())
    years = sorted({int(y) for y in frame["year"].dropna()})
    names, span = venue_text(venues), year_text(years)
    joiner = ", " if len(venues) > MANY_VENUES else " "
    words = [names + (joiner + span if span else "") if names else span, "topic map"]
    text = " ".join(w for w in words if w)
    return text[0].upper() + text[1:]


def page_title(configured: str | None, frame: pd.DataFrame) -> str:
    """The configured title when set, else the title made from the data."""
    return configured if configured else corpus_title(frame)

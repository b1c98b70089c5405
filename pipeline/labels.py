"""Labels joined to papers or topics one way everywhere: a frame with a `topic` column gains
`topic_label` and `theme` (from topics.parquet) and `theme_label` (from themes.parquet); a topic
or theme the tables do not name (the unassigned papers' -1) reads as the unassigned label. The
API's papers, `topicmap place`'s table and the csv stage all join through here.
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

"""What the pages show, as plain data: the papers' frame, the theme level, the map's JSON data and
the summary figures. Venue figures are read from venue_topics.parquet, theme figures from
themes.parquet; nothing here recomputes what a stage table already holds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.colours import (
    MAP_COLOURS,
    PALETTE,
    topic_colours,
    track_colour,
    venue_colour,
    year_colours,
)
from pipeline.config import RenderConfig
from pipeline.errors import PipelineError
from pipeline.schemas import UNASSIGNED
from pipeline.stages.render import venues_view
from pipeline.stages.render.mapfiles import SHARD_DIR, smallest_int, typed_array


def short_title(title: str | None, abstract: str, n_words: int) -> str:
    """The title, or the abstract's opening words (with an ellipsis when cut); plain text."""
    if isinstance(title, str) and title.strip():
        return title.strip()
    words = abstract.split()
    return " ".join(words[:n_words]) + (" …" if len(words) > n_words else "")


def edition(conference: str, year: object, track: str) -> str:
    """Where a paper appeared, as shown beside it: 'ICLR 2023 Workshop', 'ICML 2025 Oral'."""
    year_text = "" if pd.isna(year) else str(int(year))
    return " ".join(part for part in (conference, year_text, track) if part)


def web_url(url: object) -> str | None:
    """The URL when it is an http(s) address, else None (no javascript: or data: links)."""
    if isinstance(url, str) and url.strip().lower().startswith(("http://", "https://")):
        return url.strip()
    return None


def _r3(value: float) -> float:
    return round(float(value), 3)


def paper_vectors(frame: pd.DataFrame, doc_ids: list[str], vectors: np.ndarray) -> np.ndarray:
    """The embedding rows of the frame's papers, in the frame's order (`vectors` itself when
    they are in it already: a million papers' vectors are 1.5 GB)."""
    if frame["doc_id"].tolist() == list(doc_ids):
        return np.asarray(vectors)
    position = {doc_id: i for i, doc_id in enumerate(doc_ids)}
    missing = [d for d in frame["doc_id"] if d not in position]
    if missing:
        raise PipelineError(
            f"embeddings lack {len(missing)} clustered paper(s), e.g. {missing[0]}: rerun make"
        )
    return np.asarray(vectors)[[position[d] for d in frame["doc_id"]]]


def theme_of_topic(themes: pd.DataFrame | None) -> dict[int, int]:
    """topic -> its theme, for the topics in a shown theme (empty without a theme level)."""
    if themes is None:
        return {}
    return {int(t): int(row.theme) for row in themes.itertuples() for t in row.topics}


def venues_of(venue_topics: pd.DataFrame) -> list[str]:
    """The venues, sorted: the order of the map's panels and of the report's columns."""
    return sorted(venue_topics["venue"].unique())


def level_rows(venue_topics: pd.DataFrame, level: str) -> pd.DataFrame:
    """venue_topics' rows of one level ("topic" or "theme"), the unassigned group included."""
    return venue_topics[venue_topics["level"] == level].reset_index(drop=True)


@dataclass(frozen=True)
class Summary:
    """The figures of the pages' summary sentence and cards."""

    papers: int
    venue_papers: list[tuple[str, int]]  # (venue, its papers), sorted by venue
    topics: int
    themes: int | None  # None: no theme level
    unassigned: int
    fitted: int = 0  # papers the topic model was fitted on
    assigned: int = 0  # assigned to it when it was fitted (a sample fit of a large corpus)
    added: int = 0  # added since the fit: the papers now less those it was fitted among
    fitted_at: str | None = None  # when (ISO, UTC), from the clusters table's notes
    born: int = 0  # topics born since the fit among added papers and those no topic took

    @property
    def unassigned_share(self) -> float:
        return self.unassigned / self.papers if self.papers else 0.0


def summarise(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    venue_topics: pd.DataFrame,
    notes: dict | None = None,
    changed: dict | None = None,
) -> Summary:
    """Papers (per venue from venue_topics), topics, themes and unassigned papers (from the
    topics table's sizes), how the papers were placed (clusters' `placed`), and from the
    clusters table's `notes` and the "What changed" section's data (`changed`) when the topics
    were fitted, on how many papers, and the papers added and topics born since."""
    placed = frame["placed"].value_counts()
    notes = notes or {}
    at_fit = notes.get("papers_at_fit")
    added = len(frame) - int(at_fit) if at_fit is not None else int(placed.get("added", 0))
    since_fit = [p for p in (changed or {}).get("parts", []) if p["key"] == "fit"]
    born = [r for p in since_fit for r in p["born"] if r["made"] == "emerged"]
    assigned = int(placed.get("assigned", 0))
    # the fit's papers: those of the corpus then not assigned (the papers of a topic born
    # since are the model's too, placed "fit")
    fitted = int(at_fit) - assigned if at_fit is not None else int(placed.get("fit", 0))
    rows = level_rows(venue_topics, "topic").drop_duplicates("venue")
    totals = dict(zip(rows["venue"], rows["venue_papers"], strict=True))
    unassigned = topics.loc[topics["topic"] == UNASSIGNED, "size"]
    return Summary(
        papers=len(frame),
        venue_papers=[(v, int(totals[v])) for v in venues_of(venue_topics)],
        topics=int((topics["topic"] >= 0).sum()),
        themes=None if themes is None else len(themes),
        unassigned=int(unassigned.sum()),
        fitted=fitted,
        assigned=assigned,
        added=added,
        fitted_at=notes.get("fitted_at"),
        born=len(born),
    )


# fixed ranges rather than plotly's autorange, so every venue's panel has the same coordinates
def point_size(setting: int | str, papers: int) -> int:
    """The map's marker size in pixels: the setting, or for "auto" 7 up to 4,000 papers and
    then smaller with the fourth root of the papers (3 at 100,000, 2 above 250,000): dense maps
    overplot less, and a software-rendered WebGL canvas draws them in a fraction of the time."""
    if setting != "auto":
        return int(setting)
    return int(np.clip(round(7 * (4000 / max(papers, 1)) ** 0.25), 2, 7))


def _axis_range(values: pd.Series) -> list[float]:
    low, high = float(values.min()), float(values.max())
    pad = 0.06 * (high - low) if high > low else 1.0
    return [_r3(low - pad), _r3(high + pad)]


def _within_theme_colours(topics: pd.DataFrame, theme_of: dict[int, int]) -> dict[int, str]:
    """topic -> a palette colour distinct among its theme's topics (the k-th topic of a theme
    gets PALETTE[k]), for the map while one theme is shown alone."""
    out: dict[int, str] = {}
    seen: dict[int | None, int] = {}
    for topic in sorted(int(t) for t in topics["topic"] if int(t) >= 0):
        theme = theme_of.get(topic)
        k = seen.get(theme, 0)
        seen[theme] = k + 1
        out[topic] = PALETTE[k % len(PALETTE)]
    return out


def _topic_entries(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    theme_of: dict[int, int],
) -> list[dict]:
    """The map's topics (those holding papers), assigned first: label, colour (topic_colours:
    shades of its theme's colour when topics outnumber the palette), theme_colour (distinct
    among its theme's topics, for a theme shown alone), size, theme and centre (the median of
    its papers)."""
    centres = frame.groupby("topic")[["x", "y"]].median()
    drawn = topics[topics["topic"].isin(centres.index)]
    ordered = sorted(drawn.itertuples(), key=lambda row: (row.topic < 0, row.topic))
    colours = topic_colours(topics, themes)
    within = _within_theme_colours(drawn, theme_of)
    return [
        {
            "id": int(row.topic),
            "label": str(row.label),
            "colour": colours[int(row.topic)],
            "theme_colour": within.get(int(row.topic), colours[int(row.topic)]),
            "size": int(row.size),
            "theme": theme_of.get(int(row.topic)),
            "x": _r3(centres.loc[row.topic, "x"]),
            "y": _r3(centres.loc[row.topic, "y"]),
        }
        for row in ordered
    ]


def _theme_entries(frame: pd.DataFrame, themes: pd.DataFrame | None) -> list[dict]:
    """The map's themes: label, size and centre (the median of its papers)."""
    entries = []
    for row in [] if themes is None else themes.itertuples():
        members = frame[frame["topic"].isin(list(row.topics))]
        if members.empty:
            continue
        entries.append(
            {
                "id": int(row.theme),
                "label": str(row.label),
                "size": int(row.size),
                "area": int(row.area) if row.area >= 0 else None,
                "x": _r3(members["x"].median()),
                "y": _r3(members["y"].median()),
            }
        )
    return entries


def _area_entries(frame: pd.DataFrame, themes: pd.DataFrame | None) -> list[dict]:
    """The map's areas, the level above the themes in a large corpus (none otherwise): label,
    size, its themes (largest first) and centre (the median of its papers)."""
    if themes is None or not (themes["area"] >= 0).any():
        return []
    entries = []
    for area, rows in themes[themes["area"] >= 0].groupby("area", sort=True):
        rows = rows.sort_values(["size", "theme"], ascending=[False, True])
        topics = [int(t) for members in rows["topics"] for t in members]
        members = frame[frame["topic"].isin(topics)]
        if members.empty:
            continue
        entries.append(
            {
                "id": int(area),
                "label": str(rows["area_label"].iloc[0]),
                "size": int(rows["size"].sum()),
                "themes": [int(h) for h in rows["theme"]],
                "x": _r3(members["x"].median()),
                "y": _r3(members["y"].median()),
            }
        )
    return entries


def _categories(values) -> tuple[list, list[int]]:
    """The distinct values, sorted, and each value's place among them."""
    names = sorted(set(values))
    index = {v: i for i, v in enumerate(names)}
    return names, [index[v] for v in values]


def map_data(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    shards: np.ndarray,
    shard_tokens: list[str],
    n_neighbours: int,
    config: RenderConfig,
) -> dict:
    """What map.js draws, without the papers' text (that lives in the shards, mapfiles.py): the
    topic, theme, area (empty without that level), venue, track and edition tables, and per
    paper its doc_id (one string, newline-separated) and compact typed arrays: x and y
    (float32), topic, venue, edition, track, shard and year (0: none) as the smallest integer
    type that holds them; the years a year filter offers, how the venue view is laid out
    (venue_layout) and named (venues_label), and the colours it draws with beside the topics',
    venues', tracks' and years' (colours.MAP_COLOURS). About 40 bytes a paper."""
    venues, venue_of = _categories(frame["venue"])
    rows = zip(frame["conference"], frame["year"], frame["track"], strict=True)
    editions, edition_of = _categories([edition(*row) for row in rows])
    tracks, track_of = _categories(frame["track"])
    span = venues_view.year_span(frame)

    return {
        "venues": venues,
        "venue_colours": [venue_colour(i) for i in range(len(venues))],
        "colours": MAP_COLOURS,
        "venue_layout": venues_view.venue_layout(venues),
        "venues_label": venues_view.venues_link_text(venues),
        "years": span,
        "year_colours": year_colours(span["years"]),  # one per year in span["years"]
        "tracks": [t or "no track" for t in tracks],
        "track_colours": [track_colour(i) for i in range(len(tracks))],
        "editions": editions,
        "point_size": point_size(config.point_size, len(frame)),
        "hover_words": config.hover_words,
        "x_range": _axis_range(frame["x"]),
        "y_range": _axis_range(frame["y"]),
        "topics": _topic_entries(frame, topics, themes, theme_of_topic(themes)),
        "themes": _theme_entries(frame, themes),
        "areas": _area_entries(frame, themes),  # [] below the size of corpus areas need
        "n_neighbours": n_neighbours,
        "shard_dir": SHARD_DIR,
        "shard_tokens": shard_tokens,
        "papers": _paper_columns(frame, shards, venue_of, edition_of, track_of),
    }


def _paper_columns(frame, shards, venue_of, edition_of, track_of) -> dict:
    """Per paper: its doc_id (one newline-separated string) and compact typed arrays."""

    def column(values) -> dict:
        values = np.asarray(values, dtype=np.int64)
        return typed_array(values, smallest_int(values))

    return {
        "count": len(frame),
        "ids": "\n".join(frame["doc_id"]),
        "x": typed_array(frame["x"].to_numpy(), "float32"),
        "y": typed_array(frame["y"].to_numpy(), "float32"),
        "topic": column(frame["topic"]),
        "venue": column(venue_of),
        "edition": column(edition_of),
        "track": column(track_of),
        "shard": column(shards),
        # 0: no year (the year filter keeps such papers)
        "year": column([y or 0 for y in venues_view.paper_years(frame)]),
    }

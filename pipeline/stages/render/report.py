"""The report page's context: the rows of its venue, theme, topic and quality tables and its
comparison charts, as plain data for templates/report.html. Venue counts, shares, totals and
over/under flags are read from venue_topics.parquet, never recomputed."""

from __future__ import annotations

import math

import pandas as pd

from pipeline.colours import topic_colours, venue_colour
from pipeline.schemas import UNASSIGNED
from pipeline.stages.render import charts
from pipeline.stages.render.pictures import map_preview, term_bars
from pipeline.stages.render.shaping import (
    Summary,
    level_rows,
    short_title,
    theme_of_topic,
    venues_of,
)
from pipeline.stages.render.treemap import treemap_chart
from pipeline.stages.render.venues_view import MANY_VENUES, venues_link_text
from pipeline.stages.render.years import years_context

REPRESENTATIVE_WORDS = 12  # opening words of an untitled representative paper


def _cell(row: dict) -> dict:
    z = row["z"]
    return {
        "venue": row["venue"],
        "count": int(row["count"]),
        "share": float(row["share"]),
        "flag": row["flag"],
        "z": None if pd.isna(z) else float(z),
    }


def _cells(rows: pd.DataFrame, venues: list[str]) -> dict[int, list[dict | None]]:
    """id -> one cell per venue (count, share, flag, z; None where venue_topics has none)."""
    by = {(int(r["id"]), r["venue"]): _cell(r) for r in rows.to_dict("records")}
    ids = sorted({i for i, _ in by})
    return {i: [by.get((i, v)) for v in venues] for i in ids}


def _tracks(papers: pd.DataFrame) -> list[dict]:
    """A venue's tracks and their papers ('' the main conference, listed first), or [] when all
    its papers are of one track, which its name already says."""
    counts = papers["track"].value_counts()
    if len(counts) < 2:
        return []
    order = sorted(counts.index, key=lambda track: (track != "", -counts[track], track))
    return [{"track": track or "main", "papers": int(counts[track])} for track in order]


def venue_rows(
    frame: pd.DataFrame, topic_rows: pd.DataFrame, colours: dict[int, str] | None = None
) -> list[dict]:
    """Per venue: its colour, years, papers without a year and tracks (from the papers), papers,
    share in a topic and largest topic (from venue_topics' topic rows; `colours`: the topics')."""
    out = []
    colours = colours or {}
    for k, (venue, group) in enumerate(topic_rows.groupby("venue", sort=True)):
        papers = frame[frame["venue"] == venue]
        years = sorted({int(y) for y in papers["year"].dropna()})
        assigned = group[group["id"] != UNASSIGNED]
        largest = None
        if len(assigned) and assigned["count"].max() > 0:
            top = assigned[assigned["count"] == assigned["count"].max()].sort_values("id").iloc[0]
            largest = {
                "id": int(top["id"]),
                "label": top["label"],
                "colour": colours.get(int(top["id"]), "#59636e"),
                "share": float(top["share"]),
            }
        out.append(
            {
                "venue": venue,
                "colour": venue_colour(k),
                "years": years,
                "no_year": int(papers["year"].isna().sum()),
                "tracks": _tracks(papers),
                "papers": int(group["venue_papers"].iloc[0]),
                "in_topic": float(assigned["share"].sum()),
                "largest": largest,
            }
        )
    return out


def representative_papers(titles: dict[str, str], docs: object) -> list[dict]:
    """A topic's representative_docs as {text, doc_id}, `titles` giving each paper's text; an id
    not among the papers is shown as text without a link."""
    ids = [] if docs is None else [str(d) for d in docs]
    return [
        {"text": titles[d], "doc_id": d} if d in titles else {"text": d, "doc_id": None}
        for d in ids
    ]


def topic_rows(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    cells: dict[int, list[dict | None]],
    n_venues: int,
    colours: dict[int, str],
) -> list[dict]:
    """The topic table's rows, assigned topics first, then the unassigned papers; `colours`:
    each topic's (colours.topic_colours)."""
    theme_of = theme_of_topic(themes)
    theme_labels = (
        {} if themes is None else dict(zip(themes["theme"], themes["label"], strict=True))
    )
    texts = zip(frame["doc_id"], frame["title"], frame["abstract"], strict=True)
    titles = {d: short_title(t, a, REPRESENTATIVE_WORDS) for d, t, a in texts}
    ordered = pd.concat([topics[topics["topic"] >= 0], topics[topics["topic"] < 0]])
    return [
        {
            "id": int(row["topic"]),
            "label": row["label"],
            "colour": colours[int(row["topic"])],
            "theme": theme_labels.get(theme_of.get(int(row["topic"])), ""),
            "size": int(row["size"]),
            "cells": cells.get(int(row["topic"]), [None] * n_venues),
            "terms": ", ".join(row["terms"]),
            "bars": term_bars(row["terms"], row["term_weights"]),
            "papers": representative_papers(titles, row["representative_docs"]),
        }
        for row in ordered.to_dict("records")
    ]


def theme_rows(
    themes: pd.DataFrame, topics: pd.DataFrame, cells: dict[int, list[dict | None]]
) -> list[dict]:
    """The theme table's rows: label, its area's label ("" without areas), its topics' labels
    (largest first), papers, venue cells."""
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    return [
        {
            "id": int(row["theme"]),
            "label": row["label"],
            "area": row["area_label"],
            "topics": ", ".join(labels[t] for t in row["topics"]),
            "size": int(row["size"]),
            "cells": cells.get(int(row["theme"]), []),
        }
        for row in themes.to_dict("records")
    ]


# our own rather than pandas.json_normalize: per-topic lists become one mean, records are left out
def _flatten(data: dict, prefix: str = "") -> dict[str, object]:
    """Numbers (and short strings) of a figures file, one row each; nested dicts join their
    keys with ' · '; per-topic lists or dicts of numbers become their mean."""
    out: dict[str, object] = {}
    for key, value in data.items():
        if str(key).endswith("basis"):  # a fingerprint of what the figures came from
            continue
        name = f"{prefix}{str(key).replace('_', ' ')}"
        if isinstance(value, dict) and value and all(str(k).lstrip("-").isdigit() for k in value):
            value = list(value.values())
        if value is None:
            out[name] = "–"
        elif isinstance(value, bool):
            out[name] = "yes" if value else "no"
        elif isinstance(value, int | float):
            out[name] = value
        elif isinstance(value, str) and len(value) <= 80:
            out[name] = value
        elif isinstance(value, dict):
            out.update(_flatten(value, f"{name} · "))
        elif isinstance(value, list) and value:
            numbers = [v for v in value if isinstance(v, int | float) and not isinstance(v, bool)]
            if len(numbers) == len(value):
                out[f"{name} (mean of {len(numbers)})"] = sum(numbers) / len(numbers)
    return out


def figure_text(value: object, share: bool = False) -> str:
    """A figure for the quality table; shares (fractions named '... share ...') as percents."""
    if isinstance(value, int) and not share:
        return f"{value:,}"
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return "–"
        if share and 0 <= value <= 1:
            return f"{100 * value:.1f}%"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    return str(value)


def quality_rows(metrics: dict, stability: dict | None, baseline: dict | None) -> list[dict]:
    """The quality table: this build's figures (metrics.json, stability.json) beside BERTopic's
    defaults on the same embeddings (baseline.json, "base" None without it)."""
    ours = _flatten({k: v for k, v in metrics.items() if k != "label_check"})  # its own table
    ours.update({f"stability · {k}": v for k, v in _flatten(stability or {}).items()})
    base = _flatten(baseline or {})
    names = list(ours) + [n for n in base if n not in ours]
    return [
        {
            "name": name,
            "ours": figure_text(ours.get(name, "–"), "share" in name),
            "base": None if baseline is None else figure_text(base.get(name, "–"), "share" in name),
        }
        for name in names
    ]


LABEL_SETS = (  # metrics.json's label_check: what each row names
    ("topics", "Topic labels"),
    ("bertopic_names", "BERTopic's default names of the same topics"),
    ("themes", "Theme labels"),
)


def label_check_rows(metrics: dict, with_themes: bool) -> dict | None:
    """The label check's table (metrics.json's label_check): per set of labels, how many, and
    top-1, MRR and chance of matching a paper to its own label (the themes' only where the page
    shows a theme level); None without the check."""
    check = metrics.get("label_check")
    if not check:
        return None
    rows = [
        {
            "name": name,
            "labels": check[key]["labels"],
            **{k: _check_figure(check[key][k], k != "mrr") for k in ("top1", "mrr", "chance")},
        }
        for key, name in LABEL_SETS
        if with_themes or key != "themes"
    ]
    return {"papers": check["papers"], "rows": rows}


def _check_figure(value: float | None, share: bool) -> str:
    return figure_text(math.nan if value is None else value, share)  # None: no paper to score


def comparison_charts(venue_topics: pd.DataFrame, themes: pd.DataFrame | None) -> list[dict]:
    """The venue comparison charts (themes first, when shown; then topics) as figure data."""
    found = []
    if themes is not None:
        rows = level_rows(venue_topics, "theme")
        found.append(("theme-chart", "Themes", rows[rows["id"] >= 0], "theme"))
    rows = level_rows(venue_topics, "topic")
    if (rows["id"] >= 0).any():
        found.append(("venue-chart", "Topics", rows[rows["id"] >= 0], "topic"))
    return [
        {"id": div, "title": title, "figure": charts.figure_data(charts.comparison_figure(r, what))}
        for div, title, r, what in found
    ]


def treemap(
    topics: pd.DataFrame, themes: pd.DataFrame | None, venue_topics: pd.DataFrame
) -> dict | None:
    """The themes -> topics treemap as figure data, or None when no topic holds papers."""
    if not (topics["topic"] >= 0).any():
        return None
    return charts.figure_data(treemap_chart(topics, themes, venue_topics))


def report_context(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    venue_topics: pd.DataFrame,
    summary: Summary,
    figures: tuple[dict, dict | None, dict | None],
    venue_years: pd.DataFrame | None = None,
) -> dict:
    """Everything templates/report.html lays out. `themes`: the theme level or None;
    `figures`: (metrics, stability, baseline), the last two None when not built;
    `venue_years`: compare's per-year table (None: no per-year section)."""
    metrics, stability, baseline = figures
    venues = venues_of(venue_topics)
    topic_level = level_rows(venue_topics, "topic")
    theme_cells = {} if themes is None else _cells(level_rows(venue_topics, "theme"), venues)
    charts_, tree = comparison_charts(venue_topics, themes), treemap(topics, themes, venue_topics)
    colours = topic_colours(topics, themes)
    years = years_context(venue_years, themes, topics, venues, int(frame["year"].isna().sum()))
    return {
        "summary": summary,
        "venues": venues,
        "many_venues": len(venues) > MANY_VENUES,
        "venues_link": venues_link_text(venues),
        "years": years,
        "venue_rows": venue_rows(frame, topic_level, colours),
        "z_threshold": float(venue_topics["z_threshold"].iloc[0]),
        "charts": charts_,
        "treemap": tree,
        "plotly_template": charts.plotly_template(),
        "plots": charts_ + ([] if tree is None else [{"id": "treemap", "figure": tree}]),
        "preview": map_preview(frame, colours),
        "themes": None if themes is None else theme_rows(themes, topics, theme_cells),
        "topics": topic_rows(
            frame, topics, themes, _cells(topic_level, venues), len(venues), colours
        ),
        "quality": quality_rows(metrics, stability, baseline),
        "label_check": label_check_rows(metrics, themes is not None),
        "has_stability": stability is not None,
        "has_baseline": baseline is not None,
        "changes": None,  # the "What changed" section's data (changes.py), set by make_pages
    }

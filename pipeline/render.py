"""Stage 5, render: the report (index.html) and the topic map (map.html), offline, in one folder.

Reads documents, embeddings, clusters and topics, plus whichever of metrics.json, baseline.json,
stability.json and venue_topics.parquet the output folder holds (each shown when present).
Writes index.html (summary per venue, venue comparison, theme and topic tables, quality figures,
links to the maps) and map.html (the interactive map), beside plotly.min.js (the one copy of
plotly.js both load) and the static assets map.js, report.js and style.css from pipeline/assets/.

The map page embeds each paper once, as JSON in a <script type="application/json"> with every
`<`, `>` and `&` escaped (so `</script>` in an abstract cannot close the tag); map.js builds the
plotly figure from it and puts paper text into the page only through textContent. The report
HTML-escapes all text, and text that plotly draws is escaped for plotly's pseudo-HTML.
"""

from __future__ import annotations

import html
import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from pipeline import tables
from pipeline.config import RenderConfig
from pipeline.embed import nearest_neighbours
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.render")

PLOTLY_JS = "plotly.min.js"
ASSETS_DIR = Path(__file__).parent / "assets"
ASSETS = ("map.js", "report.js", "style.css")
MAP_PAGE = "map.html"
N_NEIGHBOURS = 5
N_REPRESENTATIVE = 3
UNASSIGNED_COLOUR = "#c7ccd1"
# Distinct mid-dark colours first (legible on white, and as text swatches), then plotly's.
PALETTE = (
    "#1f77b4 #e8590c #2b9348 #c92a2a #7048e8 #8c564b #d6336c #5c677d #a5a800 #0c8599 "
    "#f59f00 #364fc7 #5c940d #e64980 #1098ad #9c36b5 #74b816 #d9480f #3b5bdb #087f5b"
).split() + list(qualitative.Dark24 + qualitative.Light24)
VENUE_PALETTE = ["#2f6fdb", "#e8590c", "#2b9348", "#9c36b5", "#c92a2a", "#0c8599"]
PLOT_CONFIG = {"displaylogo": False, "responsive": True}


def plotly_text(text: str) -> str:
    """Escape text for plotly labels, which render a subset of HTML. plotly decodes &lt; &gt;
    &amp; but not &quot;, so quotes stay as they are (they are harmless outside attributes)."""
    return html.escape(text, quote=False)


def topic_colour(topic: int) -> str:
    return UNASSIGNED_COLOUR if topic < 0 else PALETTE[topic % len(PALETTE)]


def venue_colour(position: int) -> str:
    return VENUE_PALETTE[position % len(VENUE_PALETTE)]


def short_title(title: str | None, abstract: str, n_words: int) -> str:
    """The title, or the abstract's opening words (with an ellipsis when cut); plain text."""
    if isinstance(title, str) and title.strip():
        return title.strip()
    words = abstract.split()
    return " ".join(words[:n_words]) + (" …" if len(words) > n_words else "")


def web_url(url: object) -> str | None:
    """The URL when it is an http(s) address, else None (no javascript: or data: links)."""
    if isinstance(url, str) and url.strip().lower().startswith(("http://", "https://")):
        return url.strip()
    return None


def script_json(data: object) -> str:
    """JSON for a <script type="application/json"> element: `<`, `>` and `&` are written as
    \\u escapes, so no text inside can close the element or open a comment; JSON.parse reads the
    same values back."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def _r3(value: float) -> float:
    return round(float(value), 3)


def map_frame(
    documents: pd.DataFrame, clusters: pd.DataFrame, topics: pd.DataFrame
) -> pd.DataFrame:
    """One row per clustered paper, ordered by doc_id: its text, venue, topic, label and x, y."""
    frame = clusters.merge(documents, on="doc_id", how="left", validate="one_to_one")
    if frame["abstract"].isna().any():
        raise PipelineError("clusters name papers missing from documents: rerun the pipeline")
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    missing = set(frame["topic"]) - set(labels)
    if missing:
        raise PipelineError(f"topics table lacks topic(s) {sorted(missing)}: rerun label")
    frame["topic_label"] = frame["topic"].map(labels)
    return frame.sort_values("doc_id", ignore_index=True)


def paper_vectors(frame: pd.DataFrame, doc_ids: list[str], vectors: np.ndarray) -> np.ndarray:
    """The embedding rows of the frame's papers, in the frame's order."""
    position = {doc_id: i for i, doc_id in enumerate(doc_ids)}
    missing = [d for d in frame["doc_id"] if d not in position]
    if missing:
        raise PipelineError(
            f"embeddings lack {len(missing)} clustered paper(s), e.g. {missing[0]}: rerun make"
        )
    return np.asarray(vectors)[[position[d] for d in frame["doc_id"]]]


def _count_columns(topics: pd.DataFrame) -> list[str]:
    return [c for c in topics.columns if c.startswith("count_")]


def _has_themes(topics: pd.DataFrame) -> bool:
    return "theme" in topics.columns and bool((topics["theme"].fillna(-1) >= 0).any())


def theme_of_topic(topics: pd.DataFrame) -> dict[int, int]:
    """topic -> theme, for topics in a theme (an empty dict when topics.parquet has no themes)."""
    if not _has_themes(topics):
        return {}
    rows = topics[(topics["topic"] >= 0) & (topics["theme"].fillna(-1) >= 0)]
    return {int(t): int(h) for t, h in zip(rows["topic"], rows["theme"], strict=True)}


def theme_table(topics: pd.DataFrame) -> pd.DataFrame | None:
    """One row per theme (theme, label, size, topics, count_<venue>...) when topics.parquet has
    `theme` (and `theme_label`) columns; None when it has none."""
    theme_of = theme_of_topic(topics)
    if not theme_of:
        return None
    count_columns = _count_columns(topics)
    members = topics[topics["topic"].isin(list(theme_of))].copy()
    members["theme"] = members["topic"].map(theme_of)
    rows = []
    for theme, group in members.groupby("theme", sort=True):
        labels = group["theme_label"].dropna() if "theme_label" in group else pd.Series([])
        rows.append(
            {
                "theme": int(theme),
                "label": str(labels.iloc[0]) if len(labels) else f"Theme {theme}",
                "size": int(group["size"].sum()),
                "topics": [int(t) for t in group["topic"]],
                **{c: int(group[c].sum()) for c in count_columns},
            }
        )
    return pd.DataFrame(rows)


def representative_papers(
    frame: pd.DataFrame, topics: pd.DataFrame, vectors: np.ndarray | None
) -> dict[int, list[tuple[str, str | None]]]:
    """topic -> up to 3 (text, doc_id or None) papers that represent it.

    From topics.parquet's `representative_docs` when it has one (doc_ids, or titles as text);
    otherwise the papers nearest the topic's mean embedding (or, without embeddings, nearest its
    centre on the map), ties to the lower doc_id.
    """
    titles = {
        d: short_title(t, a, 12)
        for d, t, a in zip(frame["doc_id"], frame["title"], frame["abstract"], strict=True)
    }
    chosen: dict[int, list[tuple[str, str | None]]] = {}
    if "representative_docs" in topics.columns:
        for topic, docs in zip(topics["topic"], topics["representative_docs"], strict=True):
            entries = [] if docs is None else [str(d) for d in docs]
            chosen[int(topic)] = [(titles[d], d) if d in titles else (d, None) for d in entries]
        return chosen
    for topic, rows in frame.groupby("topic", sort=True).indices.items():
        if topic < 0:
            continue
        if vectors is not None:
            members = vectors[rows]
            centre = members.mean(axis=0)
            closeness = members @ centre
        else:
            xy = frame[["x", "y"]].to_numpy()[rows]
            closeness = -np.linalg.norm(xy - np.median(xy, axis=0), axis=1)
        order = np.lexsort((frame["doc_id"].to_numpy()[rows], -closeness))[:N_REPRESENTATIVE]
        chosen[int(topic)] = [(titles[d], d) for d in frame["doc_id"].to_numpy()[rows[order]]]
    return chosen


def _axis_range(values: pd.Series) -> list[float]:
    low, high = float(values.min()), float(values.max())
    pad = 0.06 * (high - low) if high > low else 1.0
    return [_r3(low - pad), _r3(high + pad)]


def map_data(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    neighbours: np.ndarray,
    similarities: np.ndarray,
    config: RenderConfig,
) -> dict:
    """What map.js draws. Each paper appears once, in columns (one list per field), so the page
    stays small: 3,401 papers with abstracts take about 5 MB."""
    venues = sorted(frame["venue"].unique())
    venue_index = {v: i for i, v in enumerate(venues)}
    theme_of = theme_of_topic(topics)
    themes = theme_table(topics)
    sizes = frame["topic"].value_counts()
    centres = frame.groupby("topic")[["x", "y"]].median()
    ordered = sorted(
        (int(t) for t in topics["topic"] if t in sizes.index), key=lambda t: (t < 0, t)
    )
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    topic_rows = [
        {
            "id": t,
            "label": str(labels[t]),
            "colour": topic_colour(t),
            "size": int(sizes[t]),
            "theme": theme_of.get(t),
            "x": _r3(centres.loc[t, "x"]),
            "y": _r3(centres.loc[t, "y"]),
        }
        for t in ordered
    ]
    theme_rows = []
    for row in [] if themes is None else themes.itertuples():
        members = frame[frame["topic"].isin(row.topics)]
        if members.empty:
            continue
        theme_rows.append(
            {
                "id": int(row.theme),
                "label": str(row.label),
                "size": len(members),
                "x": _r3(members["x"].median()),
                "y": _r3(members["y"].median()),
            }
        )
    titles = [t if isinstance(t, str) and t.strip() else None for t in frame["title"]]
    return {
        "venues": venues,
        "venue_colours": [venue_colour(i) for i in range(len(venues))],
        "point_size": config.point_size,
        "hover_words": config.hover_words,
        "x_range": _axis_range(frame["x"]),
        "y_range": _axis_range(frame["y"]),
        "topics": topic_rows,
        "themes": theme_rows,
        "papers": {
            "id": frame["doc_id"].tolist(),
            "title": titles,
            "venue": [venue_index[v] for v in frame["venue"]],
            "topic": [int(t) for t in frame["topic"]],
            "x": [_r3(v) for v in frame["x"]],
            "y": [_r3(v) for v in frame["y"]],
            "abstract": frame["abstract"].tolist(),
            "url": [web_url(u) for u in frame["url"]],
            "nn": np.asarray(neighbours).tolist(),
            "nn_sim": [[_r3(s) for s in row] for row in np.asarray(similarities)],
        },
    }


# ---------------------------------------------------------------- venue comparison

Z_COLUMNS = ("z", "z_score", "zscore", "log_odds_z")
FLAG_COLUMNS = ("mark", "flag", "direction", "representation", "over_under")
Z_SIGNIFICANT = 1.96


def venue_totals(topics: pd.DataFrame) -> dict[str, int]:
    """venue -> its number of papers (unassigned included), from the count_<venue> columns."""
    return {c.removeprefix("count_"): int(topics[c].sum()) for c in _count_columns(topics)}


def _mark(flag: object, z: float | None, significant: object) -> int:
    if isinstance(flag, str) and flag.strip():
        word = flag.strip().lower()
        return 1 if word.startswith("over") else -1 if word.startswith("under") else 0
    if isinstance(flag, int | float | np.integer | np.floating) and not pd.isna(flag):
        return int(np.sign(flag))
    if z is None:
        return 0
    if significant is not None and not pd.isna(significant):
        return int(np.sign(z)) if bool(significant) else 0
    return int(np.sign(z)) if abs(z) >= Z_SIGNIFICANT else 0


def venue_marks(
    venue_topics: pd.DataFrame | None, level: str = "topic"
) -> dict[tuple[int, str], tuple[float | None, int]]:
    """(topic or theme id, venue) -> (z, mark) from venue_topics.parquet: mark is +1 where the
    topic is significantly over-represented at the venue, -1 under-, 0 neither.

    Reads a `venue` column; the id from `topic` (or `theme`), or from `id` with a `level` column
    naming topic/theme rows; z from `z` (or z_score, zscore, log_odds_z); the mark from a flag
    column (`mark`, `flag`, `direction`: 'over'/'under' or +1/-1), else from `significant` and
    the sign of z, else |z| >= 1.96. Empty when the table is absent or names none of these.
    """
    if venue_topics is None or "venue" not in venue_topics.columns:
        return {}
    frame = venue_topics
    if "level" in frame.columns:
        frame = frame[frame["level"].astype(str).str.lower().str.rstrip("s") == level]
        id_column = next((c for c in ("id", level) if c in frame.columns), None)
    else:
        id_column = level if level in frame.columns else None
    z_column = next((c for c in Z_COLUMNS if c in frame.columns), None)
    flag_column = next((c for c in FLAG_COLUMNS if c in frame.columns), None)
    if id_column is None or (z_column is None and flag_column is None):
        return {}
    marks = {}
    for row in frame.to_dict("records"):
        if pd.isna(row[id_column]):
            continue
        z = None if z_column is None or pd.isna(row[z_column]) else float(row[z_column])
        flag = row[flag_column] if flag_column else None
        marks[(int(row[id_column]), str(row["venue"]))] = (
            z,
            _mark(flag, z, row.get("significant")),
        )
    return marks


def venue_shares(
    groups: pd.DataFrame,
    totals: dict[str, int],
    marks: dict[tuple[int, str], tuple[float | None, int]] | None = None,
    id_column: str = "topic",
) -> pd.DataFrame:
    """One row per (topic or theme, venue): id, label, venue, count, total (the venue's papers),
    share (count / total), z and mark (from `marks`; None and 0 without)."""
    rows = []
    for row in groups.to_dict("records"):
        for venue, total in totals.items():
            count = int(row.get(f"count_{venue}", 0))
            z, mark = (marks or {}).get((int(row[id_column]), venue), (None, 0))
            rows.append(
                {
                    "id": int(row[id_column]),
                    "label": str(row["label"]),
                    "venue": venue,
                    "count": count,
                    "total": total,
                    "share": count / total if total else 0.0,
                    "z": z,
                    "mark": mark,
                }
            )
    columns = ["id", "label", "venue", "count", "total", "share", "z", "mark"]
    return pd.DataFrame(rows, columns=columns)


def comparison_order(shares: pd.DataFrame) -> list[int]:
    """Ids, top row first: with two venues by the difference of their shares (first venue's
    over-representation on top); with more, by the spread (largest first); with one, by share."""
    pivot = shares.pivot(index="id", columns="venue", values="share").sort_index()
    venues = list(dict.fromkeys(shares["venue"]))
    if len(venues) == 2:
        key = pivot[venues[0]] - pivot[venues[1]]
    elif len(venues) > 2:
        key = pivot.max(axis=1) - pivot.min(axis=1)
    else:
        key = pivot[venues[0]] if venues else pd.Series(dtype=float)
    return [int(i) for i in sorted(key.index, key=lambda i: (-key[i], i))]


def _share_hover(row: dict) -> str:
    text = (
        f"<b>{plotly_text(row['label'])}</b><br>{plotly_text(row['venue'])}: {row['count']:,} of "
        f"{row['total']:,} papers ({100 * row['share']:.1f}%)"
    )
    if row["z"] is not None:
        text += f"<br>z = {row['z']:+.1f}"
    if row["mark"]:
        text += ", over-represented" if row["mark"] > 0 else ", under-represented"
    return text


def venue_chart(shares: pd.DataFrame, what: str = "topic") -> go.Figure:
    """Dot plot of each topic's (or theme's) share of each venue's papers, one row per topic,
    rows sorted by how differently the venues cover them; a venue's dot is outlined, the row's
    line darkened and its label bold where the difference is significant."""
    order = comparison_order(shares)
    position = {i: len(order) - 1 - p for p, i in enumerate(order)}  # first id on top
    venues = list(dict.fromkeys(shares["venue"]))
    marked = {int(i) for i in shares.loc[shares["mark"] != 0, "id"]}
    labels = dict(zip(shares["id"], shares["label"], strict=False))
    fig = go.Figure()
    for significant in (False, True):
        xs, ys = [], []
        for i in order:
            if (i in marked) != significant or len(venues) < 2:
                continue
            values = 100 * shares.loc[shares["id"] == i, "share"]
            xs += [round(float(values.min()), 3), round(float(values.max()), 3), None]
            ys += [position[i], position[i], None]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line={"color": "#59636e" if significant else "#d0d5db", "width": 3},
                hoverinfo="skip",
                showlegend=False,
            )
        )
    for k, venue in enumerate(venues):
        rows = shares[shares["venue"] == venue].to_dict("records")
        fig.add_trace(
            go.Scatter(
                x=[round(100 * r["share"], 3) for r in rows],
                y=[position[r["id"]] for r in rows],
                mode="markers",
                name=plotly_text(venue),
                marker={
                    "color": venue_colour(k),
                    "size": [13 if r["mark"] else 10 for r in rows],
                    "line": {"color": "#111", "width": [2 if r["mark"] else 0 for r in rows]},
                },
                text=[_share_hover(r) for r in rows],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    if marked:
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name="significant difference",
                marker={"color": "#fff", "size": 12, "line": {"color": "#111", "width": 2}},
            )
        )
    ticktext = [
        f"<b>{plotly_text(labels[i])}</b>" if i in marked else plotly_text(labels[i]) for i in order
    ]
    fig.update_layout(
        height=max(260, 24 * len(order) + 110),
        margin={"l": 10, "r": 20, "t": 60, "b": 20},
        plot_bgcolor="#fff",
        xaxis={
            "title": {"text": f"share of the venue's papers in the {what} (%)"},
            "side": "top",
            "gridcolor": "#eceef1",
            "zeroline": False,
            "rangemode": "tozero",
        },
        yaxis={
            "tickvals": [position[i] for i in order],
            "ticktext": ticktext,
            "automargin": True,
            "gridcolor": "#f3f4f6",
            "range": [-0.7, len(order) - 0.3],
            "fixedrange": True,
        },
        legend={"orientation": "h", "x": 0, "y": -0.02, "yanchor": "top"},
        hoverlabel={"align": "left"},
        font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"},
    )
    return fig


def _figure_div(fig: go.Figure, div_id: str) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=PLOT_CONFIG)


# ---------------------------------------------------------------- report page parts


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _swatch(colour: str) -> str:
    return f'<span class="swatch" style="background:{colour}"></span>'


def _map_link(fragment: str, text: str) -> str:
    return f'<a href="{MAP_PAGE}#{_e(fragment)}">{_e(text)}</a>'


def _share_cell(row: dict | None) -> str:
    if row is None:
        return '<td class="num" data-sort="0">–</td>'
    mark = ""
    if row["mark"]:
        z = "" if row["z"] is None else f" (z = {row['z']:+.1f})"
        word, arrow = ("over", "▲") if row["mark"] > 0 else ("under", "▼")
        mark = (
            f'<span class="mark {word}" title="significantly {word}-represented at '
            f'{_e(row["venue"])}{z}">{arrow}</span>'
        )
    return (
        f'<td class="num" data-sort="{row["share"]:.6f}">{100 * row["share"]:.1f}%'
        f'<span class="note"> ({row["count"]:,})</span>{mark}</td>'
    )


def _shares_by(shares: pd.DataFrame) -> dict[tuple[int, str], dict]:
    return {(r["id"], r["venue"]): r for r in shares.to_dict("records")}


def topics_table(
    topics: pd.DataFrame,
    shares: pd.DataFrame,
    representatives: dict[int, list[tuple[str, str | None]]],
    themes: pd.DataFrame | None,
) -> str:
    """The sortable topic table: label (linking to the topic on the map), theme, size, share of
    each venue's papers with over/under marks, top terms and representative papers."""
    venues = list(dict.fromkeys(shares["venue"]))
    theme_labels = (
        {} if themes is None else dict(zip(themes["theme"], themes["label"], strict=True))
    )
    theme_of = theme_of_topic(topics)
    by = _shares_by(shares)
    head = ['<th class="num sortable">#</th>', '<th class="sortable">Topic</th>']
    if theme_labels:
        head.append('<th class="sortable">Theme</th>')
    head.append('<th class="num sortable">Papers</th>')
    head += [f'<th class="num sortable">{_e(v)}</th>' for v in venues]
    head += ["<th>Top terms</th>", "<th>Representative papers</th>"]
    ordered = pd.concat([topics[topics["topic"] >= 0], topics[topics["topic"] < 0]])
    rows = []
    for row in ordered.to_dict("records"):
        topic = int(row["topic"])
        papers = "".join(
            f"<li>{_map_link(f'paper={quote(d)}', text) if d else _e(text)}</li>"
            for text, d in representatives.get(topic, [])
        )
        cells = [
            f'<td class="num" data-sort="{topic}">{topic if topic >= 0 else "–"}</td>',
            f'<td class="label">{_swatch(topic_colour(topic))}'
            f"{_map_link(f'topic={topic}', row['label'])}</td>",
        ]
        if theme_labels:
            cells.append(f"<td>{_e(theme_labels.get(theme_of.get(topic), ''))}</td>")
        cells.append(f'<td class="num" data-sort="{row["size"]}">{row["size"]:,}</td>')
        cells += [_share_cell(by.get((topic, v))) for v in venues]
        cells.append(f'<td class="terms">{_e(", ".join(row["terms"]))}</td>')
        cells.append(f'<td class="papers"><ul>{papers}</ul></td>' if papers else "<td></td>")
        css = ' class="unassigned pinned"' if topic < 0 else ""
        rows.append(f"<tr{css}>{''.join(cells)}</tr>")
    return (
        '<table id="topics" class="data sortable-table"><thead><tr>'
        + "".join(head)
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def themes_table(themes: pd.DataFrame, topics: pd.DataFrame, shares: pd.DataFrame) -> str:
    """The sortable theme table: label (linking to the theme on the map), its topics, size and
    share of each venue's papers with over/under marks."""
    venues = list(dict.fromkeys(shares["venue"]))
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    by = _shares_by(shares)
    head = (
        '<th class="sortable">Theme</th><th>Topics</th><th class="num sortable">Papers</th>'
        + "".join(f'<th class="num sortable">{_e(v)}</th>' for v in venues)
    )
    rows = []
    for row in themes.to_dict("records"):
        members = ", ".join(_e(labels[t]) for t in row["topics"])
        rows.append(
            f'<tr><td class="label">{_map_link("theme=" + str(row["theme"]), row["label"])}</td>'
            f'<td class="terms">{members}</td>'
            f'<td class="num" data-sort="{row["size"]}">{row["size"]:,}</td>'
            + "".join(_share_cell(by.get((row["theme"], v))) for v in venues)
            + "</tr>"
        )
    return (
        f'<table id="themes" class="data sortable-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def venues_table(frame: pd.DataFrame, topics: pd.DataFrame) -> str:
    """Per venue: papers, years, the share placed in a topic, and its largest topic."""
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    rows = []
    for venue, group in frame.groupby("venue", sort=True):
        years = sorted({int(y) for y in group["year"].dropna()})
        span = "–" if not years else str(years[0]) if len(years) == 1 else f"{years[0]}–{years[-1]}"
        assigned = group[group["topic"] >= 0]
        largest = ""
        if len(assigned):
            counts = assigned["topic"].value_counts()
            top = int(min(counts.index[counts == counts.max()]))
            largest = (
                f"{_swatch(topic_colour(top))}{_map_link(f'topic={top}', labels[top])}"
                f'<span class="note"> ({100 * counts[top] / len(group):.1f}%)</span>'
            )
        rows.append(
            f"<tr><td>{_e(venue)}</td><td>{span}</td>"
            f'<td class="num">{len(group):,}</td>'
            f'<td class="num">{100 * len(assigned) / len(group):.1f}%</td>'
            f"<td>{largest}</td></tr>"
        )
    return (
        '<table id="venues" class="data"><thead><tr><th>Venue</th><th>Years</th>'
        '<th class="num">Papers</th><th class="num">In a topic</th><th>Largest topic</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _flatten(data: dict, prefix: str = "") -> dict[str, object]:
    """Numbers (and short strings) of a metrics file, one row each; nested dicts join their
    keys with ' · '; per-topic lists or dicts of numbers become their mean."""
    out: dict[str, object] = {}
    for key, value in data.items():
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


def _number(value: object, share: bool = False) -> str:
    """A figure for the quality table; shares (fractions named '... share ...') as percents."""
    if isinstance(value, int) and not share:
        return f"{value:,}"
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return "–"
        if share and 0 <= value <= 1:
            return f"{100 * value:.1f}%"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    return _e(value)


def quality_table(metrics: dict | None, baseline: dict | None, stability: dict | None) -> str:
    """The quality figures of this build (metrics.json, stability.json) beside BERTopic's
    defaults on the same embeddings (baseline.json); empty when none of them exists."""
    ours = _flatten(metrics or {})
    ours.update({f"stability · {k}": v for k, v in _flatten(stability or {}).items()})
    base = _flatten(baseline or {})
    names = list(ours) + [n for n in base if n not in ours]
    if not names:
        return ""
    head = "<th>Figure</th><th class='num'>This build</th>"
    if base:
        head += "<th class='num'>BERTopic defaults</th>"
    rows = []
    for name in names:
        share = "share" in name
        cells = f"<td>{_e(name)}</td><td class='num'>{_number(ours.get(name, '–'), share)}</td>"
        if base:
            cells += f"<td class='num'>{_number(base.get(name, '–'), share)}</td>"
        rows.append(f"<tr>{cells}</tr>")
    return (
        f'<table id="quality" class="data"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def summary_sentence(frame: pd.DataFrame, topics: pd.DataFrame) -> str:
    """'N papers (venue n, ...) in K topics; U papers (u%) left unassigned.' (HTML-escaped)"""
    per_venue = ", ".join(f"{_e(v)} {n}" for v, n in sorted(frame["venue"].value_counts().items()))
    n_topics = int((topics["topic"] >= 0).sum())
    themes = theme_table(topics)
    in_themes = "" if themes is None else f" ({len(themes)} themes)"
    n_unassigned = int((frame["topic"] < 0).sum())
    return (
        f"{len(frame)} papers ({per_venue}) in {n_topics} topics{in_themes}; "
        f"{n_unassigned} papers ({100 * n_unassigned / len(frame):.1f}%) left unassigned."
    )


# ---------------------------------------------------------------- pages

HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="style.css">
<script src="plotly.min.js"></script>
</head>
"""

NAV = (
    '<header class="site-header"><h1>{title}</h1><nav>'
    '<a href="{report}"{report_current}>Report</a>'
    '<a href="map.html"{map_current}>Topic map</a></nav></header>\n'
)

REPORT = """<body class="report-page">
{nav}<main class="report">
<p class="lead" id="summary">{summary}</p>
<div class="cards">{cards}</div>
<section id="maps">
<h2>Maps</h2>
<p class="lead">Every paper as a point, coloured by topic; similar papers lie close together.
Hover for the title, click for the abstract and the five most similar papers, search titles and
abstracts, click a topic to show it alone.</p>
<div class="maps">{map_links}</div>
</section>
<section id="venue-summary">
<h2>Papers per venue</h2>
{venues_table}
</section>
<section id="comparison">
<h2>How the venues differ</h2>
<p class="lead">{comparison_note}</p>
{charts}
</section>
{themes_section}<section id="topic-section">
<h2>Topics</h2>
<p class="lead">Click a column heading to sort; a topic or paper opens it on the map.
Shares are of each venue's own papers. {marks_note}</p>
{topics_table}
</section>
{quality_section}</main>
<script src="report.js"></script>
</body>
</html>
"""

MAP = """<body class="map-page">
{nav}<div class="toolbar">
<div class="segmented" id="view-switch" role="group" aria-label="View">
<button type="button" data-view="venues" aria-pressed="true">Venues side by side</button>
<button type="button" data-view="combined" aria-pressed="false">Combined</button>
</div>
<div class="search"><input id="search" type="search" placeholder="Search titles and abstracts"
 autocomplete="off" spellcheck="false" aria-label="Search titles and abstracts">
<span id="match-count" aria-live="polite"></span></div>
<label>Labels <select id="label-mode">
<option value="auto">themes; topics when zoomed in</option><option value="themes">themes</option>
<option value="topics">topics</option><option value="off">none</option></select></label>
<label>Colour <select id="colour-by"><option value="topic">by topic</option>
<option value="venue">by venue</option></select></label>
<span id="venue-key"></span>
</div>
<main class="map-layout">
<aside class="topic-sidebar" aria-label="Topics">
<h2>{list_heading}</h2>
<button type="button" id="show-all" hidden>Show all papers</button>
<ul id="topic-list"></ul>
</aside>
<div class="map-area"><div id="topic-map"></div>
<div id="map-hint">Scroll to zoom · drag to pan · double-click to reset · click a paper</div></div>
<aside id="paper-panel" aria-label="Paper details">
<div id="panel-empty" class="empty">
<p id="map-summary">{summary}</p>
<p>Click a paper to read its abstract and see the five most similar papers (by the cosine
similarity of their embeddings), wherever they were published.</p>
<p>Search narrows the map to papers whose title or abstract contains the text; the topic list
shows one topic alone.</p>
</div>
<article id="paper-detail" hidden>
<button type="button" id="panel-close" aria-label="Close">×</button>
<h2 id="paper-title"></h2>
<p id="paper-meta" class="meta"></p>
<p id="paper-abstract"></p>
<a id="paper-link" target="_blank" rel="noopener noreferrer" hidden>Open the paper ↗</a>
<h3>Most similar papers</h3>
<ol id="paper-neighbours"></ol>
</article>
</aside>
</main>
<div id="tooltip" role="tooltip" hidden></div>
<script type="application/json" id="paper-data">{data}</script>
<script src="map.js"></script>
</body>
</html>
"""


@dataclass(frozen=True)
class Extras:
    """Optional inputs found in the output folder; None where the file is absent."""

    metrics: dict | None = None
    baseline: dict | None = None
    stability: dict | None = None
    venue_topics: pd.DataFrame | None = None


def _nav(config: RenderConfig, report_name: str, current: str) -> str:
    return NAV.format(
        title=_e(config.title),
        report=_e(report_name),
        report_current=' aria-current="page"' if current == "report" else "",
        map_current=' aria-current="page"' if current == "map" else "",
    )


def _cards(frame: pd.DataFrame, topics: pd.DataFrame, themes: pd.DataFrame | None) -> str:
    n_unassigned = int((frame["topic"] < 0).sum())
    cards = [
        (f"{len(frame):,}", "papers"),
        (f"{frame['venue'].nunique()}", "venues"),
        (f"{int((topics['topic'] >= 0).sum())}", "topics"),
    ]
    if themes is not None:
        cards.append((f"{len(themes)}", "themes"))
    cards.append((f"{100 * n_unassigned / len(frame):.1f}%", "left unassigned"))
    return "".join(
        f'<div class="card"><div class="value">{v}</div><div class="what">{w}</div></div>'
        for v, w in cards
    )


def report_page(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    vectors: np.ndarray | None,
    config: RenderConfig,
    extras: Extras,
    report_name: str = "index.html",
) -> str:
    """The report's HTML: summary, map links, venue table and comparison, theme and topic
    tables, quality figures. It holds no abstracts; those live once, in the map page."""
    themes = theme_table(topics)
    totals = venue_totals(topics)
    topic_marks = venue_marks(extras.venue_topics, "topic")
    all_shares = venue_shares(topics, totals, topic_marks)  # the unassigned row too
    topic_shares = all_shares[all_shares["id"] >= 0]
    theme_shares = None
    charts = []
    if themes is not None:
        theme_marks = venue_marks(extras.venue_topics, "theme")
        theme_shares = venue_shares(themes, totals, theme_marks, id_column="theme")
        charts.append(("theme-chart", "Themes", venue_chart(theme_shares, "theme")))
    if len(topic_shares):
        charts.append(("venue-chart", "Topics", venue_chart(topic_shares, "topic")))
    venues = list(totals)
    if len(venues) >= 2:
        comparison_note = (
            "Each dot is a topic's share of one venue's papers, so venues of different sizes "
            "compare fairly. "
            + (
                f"Rows are sorted by the difference: topics relatively more common at "
                f"{_e(venues[0])} on top, at {_e(venues[1])} at the bottom."
                if len(venues) == 2
                else "Rows are sorted by the spread between the venues, largest on top."
            )
        )
    else:
        comparison_note = "One venue only: each topic's share of its papers, nothing to compare."
    if extras.venue_topics is not None and (topic_marks or themes is not None):
        marks_note = (
            "▲ / ▼: significantly over- / under-represented at that venue (from "
            "venue_topics.parquet); outlined dots and bold labels in the chart."
        )
    else:
        marks_note = "No significance test in this build, so no differences are marked."
    comparison_note += " " + marks_note
    chart_html = "".join(
        (f"<h3>{_e(title)}</h3>" if len(charts) > 1 else "") + _figure_div(fig, div_id)
        for div_id, title, fig in charts
    )
    themes_section = ""
    if themes is not None:
        themes_section = (
            '<section id="theme-section">\n<h2>Themes</h2>\n<p class="lead">Groups of related '
            f"topics. {marks_note}</p>\n{themes_table(themes, topics, theme_shares)}\n</section>\n"
        )
    quality = quality_table(extras.metrics, extras.baseline, extras.stability)
    quality_section = ""
    if quality:
        note = (
            "This build beside BERTopic with default settings on the same embeddings."
            if extras.baseline
            else "Run the baseline target to add BERTopic's defaults beside these figures."
        )
        quality_section = (
            f'<section id="quality-section">\n<h2>Quality</h2>\n<p class="lead">{note}</p>\n'
            f"{quality}\n</section>\n"
        )
    map_links = (
        f'<a class="map-link" id="link-venues" href="{MAP_PAGE}"><strong>Venues side by side '
        f"→</strong><span>{' · '.join(_e(v) for v in venues)} on the same coordinates: a topic "
        "sits in the same place in each panel</span></a>"
        f'<a class="map-link" id="link-combined" href="{MAP_PAGE}#view=combined"><strong>'
        "All papers combined →</strong><span>one map of every paper, coloured by topic or by "
        "venue</span></a>"
    )
    representatives = representative_papers(frame, topics, vectors)
    return HEAD.format(title=_e(config.title)) + REPORT.format(
        nav=_nav(config, report_name, "report"),
        summary=summary_sentence(frame, topics),
        cards=_cards(frame, topics, themes),
        map_links=map_links,
        venues_table=venues_table(frame, topics),
        comparison_note=comparison_note,
        charts=chart_html,
        themes_section=themes_section,
        marks_note=marks_note,
        topics_table=topics_table(topics, all_shares, representatives, themes),
        quality_section=quality_section,
    )


def map_page(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    neighbours: np.ndarray,
    similarities: np.ndarray,
    config: RenderConfig,
    report_name: str = "index.html",
) -> str:
    """The map page's HTML: the controls, and every paper once as JSON for map.js to draw."""
    data = map_data(frame, topics, neighbours, similarities, config)
    return HEAD.format(title=f"{_e(config.title)} · topic map") + MAP.format(
        nav=_nav(config, report_name, "map"),
        summary=summary_sentence(frame, topics),
        list_heading="Themes and topics" if data["themes"] else "Topics",
        data=script_json(data),
    )


def render_pages(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    topics: pd.DataFrame,
    config: RenderConfig,
    embeddings: tuple[list[str], np.ndarray] | None = None,
    extras: Extras | None = None,
    report_name: str = "index.html",
) -> dict[str, str]:
    """Pure core: {report_name: the report's HTML, "map.html": the map's}. Both load
    plotly.min.js and the assets from beside themselves. `embeddings` is (doc_ids, vectors);
    without it papers have no neighbours and representative papers sit nearest the map centre."""
    frame = map_frame(documents, clusters, topics)
    vectors = None if embeddings is None else paper_vectors(frame, *embeddings)
    if vectors is None:
        neighbours = np.zeros((len(frame), 0), dtype=np.int64)
        similarities = np.zeros((len(frame), 0), dtype=np.float32)
    else:
        neighbours, similarities = nearest_neighbours(vectors, N_NEIGHBOURS)
    extras = extras or Extras()
    return {
        report_name: report_page(frame, topics, vectors, config, extras, report_name),
        MAP_PAGE: map_page(frame, topics, neighbours, similarities, config, report_name),
    }


def render_page(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    topics: pd.DataFrame,
    config: RenderConfig,
    embeddings: tuple[list[str], np.ndarray] | None = None,
) -> str:
    """The map page alone (kept for callers of the earlier one-page API)."""
    return render_pages(documents, clusters, topics, config, embeddings)[MAP_PAGE]


# ---------------------------------------------------------------- I/O


def _read_json(path: Path) -> dict | None:
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PipelineError(f"{path}: not readable JSON ({exc})") from None
    return data if isinstance(data, dict) else None


def read_extras(folder: Path) -> Extras:
    """metrics.json, baseline.json, stability.json and venue_topics.parquet from the output
    folder, each None when absent."""
    venue_topics = None
    path = folder / "venue_topics.parquet"
    if path.exists():
        schema = getattr(tables, "VENUE_TOPICS", None)
        if schema is not None:
            venue_topics = tables.read_table(path, schema)
        else:
            try:
                venue_topics = pd.read_parquet(path)
            except (OSError, ValueError) as exc:
                raise PipelineError(f"{path}: not a readable Parquet file ({exc})") from None
    return Extras(
        metrics=_read_json(folder / "metrics.json"),
        baseline=_read_json(folder / "baseline.json"),
        stability=_read_json(folder / "stability.json"),
        venue_topics=venue_topics,
    )


def run(
    config: RenderConfig,
    documents_path: Path,
    embeddings_path: Path,
    clusters_path: Path,
    topics_path: Path,
    out_path: Path,
) -> None:
    """Write the report at out_path (index.html) and, beside it, map.html, plotly.min.js and
    the assets."""
    from plotly.offline import get_plotlyjs

    documents = tables.read_table(documents_path, tables.DOCUMENTS)
    embeddings = tables.read_embeddings(embeddings_path)
    clusters = tables.read_table(clusters_path, tables.CLUSTERS)
    topics = tables.read_table(topics_path, tables.TOPICS)
    tables.stage_lineage(
        config,
        documents=documents_path,
        embeddings=embeddings_path,
        clusters=clusters_path,
        topics=topics_path,
    )
    folder = out_path.parent
    pages = render_pages(
        documents, clusters, topics, config, embeddings, read_extras(folder), out_path.name
    )
    tables.write_text(folder / PLOTLY_JS, get_plotlyjs())
    for name in ASSETS:
        tables.write_text(folder / name, (ASSETS_DIR / name).read_text(encoding="utf-8"))
    for name, page in pages.items():
        tables.write_text(folder / name, page)
        log.info("wrote %s (%d KB)", folder / name, len(page.encode()) // 1024)

"""The report's venue comparison: a plotly dot plot of each topic's (or theme's) share of each
venue's papers, from venue_topics.parquet's rows. The figure goes to the page as JSON data that
report.js draws with Plotly.newPlot."""

from __future__ import annotations

import html
import json

import pandas as pd
import plotly.graph_objects as go

from pipeline.colours import venue_colour


def plotly_text(text: str) -> str:
    """Escape text for plotly labels, which render a subset of HTML. plotly decodes &lt; &gt;
    &amp; but not &quot;, so quotes stay as they are (they are harmless outside attributes)."""
    return html.escape(str(text), quote=False)


def comparison_order(rows: pd.DataFrame) -> list[int]:
    """Ids, top row first: with two venues by the difference of their shares (first venue's
    over-representation on top); with more, by the spread (largest first); with one, by share."""
    pivot = rows.pivot(index="id", columns="venue", values="share").sort_index()
    venues = list(dict.fromkeys(rows["venue"]))
    if len(venues) == 2:
        key = pivot[venues[0]] - pivot[venues[1]]
    elif len(venues) > 2:
        key = pivot.max(axis=1) - pivot.min(axis=1)
    else:
        key = pivot[venues[0]] if venues else pd.Series(dtype=float)
    return [int(i) for i in sorted(key.index, key=lambda i: (-key[i], i))]


def share_hover(row: dict, when: str = "", papers: str = "venue_papers") -> str:
    """A topic's or theme's share of a venue's papers (`when`: e.g. the year, appended to the
    venue; `papers`: the column holding the venue's total) with its z and mark."""
    # plotly's hover labels are its own small subset of HTML: <b> and <br> lay out the text,
    # which is escaped by plotly_text
    where = plotly_text(row["venue"]) + (f" {when}" if when else "")
    text = (
        f"<b>{plotly_text(row['label'])}</b><br>{where}: {row['count']:,} of "
        f"{row[papers]:,} papers ({100 * row['share']:.1f}%)"
    )
    if pd.notna(row["z"]):
        text += f"<br>z = {row['z']:+.1f}"
    if row["flag"] != "none":
        text += f", {row['flag']}-represented" + (" that year" if when else "")
    return text


def _range_lines(rows: pd.DataFrame, order: list[int], position: dict, marked: set) -> list:
    """A line per row from its lowest to its highest share (none with one venue), the marked
    rows' darker."""
    traces = []
    several = rows["venue"].nunique() >= 2
    for significant in (False, True):
        xs, ys = [], []
        for i in order:
            if (i in marked) != significant or not several:
                continue
            values = 100 * rows.loc[rows["id"] == i, "share"]
            xs += [round(float(values.min()), 3), round(float(values.max()), 3), None]
            ys += [position[i], position[i], None]
        line = {"color": "#59636e" if significant else "#d0d5db", "width": 3}
        traces.append(
            go.Scatter(x=xs, y=ys, mode="lines", line=line, hoverinfo="skip", showlegend=False)
        )
    return traces


def _venue_dots(rows: pd.DataFrame, position: dict, venues: list[str]) -> list:
    """A trace of dots per venue, in the colour of its place in `venues`; a flagged cell's dot
    larger and outlined."""
    traces = []
    colour = {v: venue_colour(k) for k, v in enumerate(venues)}
    for venue in dict.fromkeys(rows["venue"]):
        cells = rows[rows["venue"] == venue].to_dict("records")
        flagged = [r["flag"] != "none" for r in cells]
        traces.append(
            go.Scatter(
                x=[round(100 * r["share"], 3) for r in cells],
                y=[position[r["id"]] for r in cells],
                mode="markers",
                name=plotly_text(venue),
                marker={
                    "color": colour[venue],
                    "size": [13 if f else 10 for f in flagged],
                    "line": {"color": "#111", "width": [2 if f else 0 for f in flagged]},
                },
                text=[share_hover(r) for r in cells],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    return traces


def venue_chart(
    rows: pd.DataFrame, what: str = "topic", venues: list[str] | None = None
) -> go.Figure:
    """Dot plot of each topic's (or theme's) share of each venue's papers, one row per topic,
    rows sorted by how differently the venues cover them; a venue's dot is outlined, the row's
    line darkened and its label bold where venue_topics flags the difference. `rows`: one
    level's venue_topics rows; `venues`: every venue, sorted, whose places give the colours
    (default: those in `rows`)."""
    venues = venues or sorted(rows["venue"].unique())
    order = comparison_order(rows)
    position = {i: len(order) - 1 - p for p, i in enumerate(order)}  # first id on top
    marked = {int(i) for i in rows.loc[rows["flag"] != "none", "id"]}
    labels = dict(zip(rows["id"], rows["label"], strict=False))
    fig = go.Figure(
        _range_lines(rows, order, position, marked) + _venue_dots(rows, position, venues)
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
    ticktext = [  # bold (plotly's <b>) for the marked rows
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


def figure_data(fig: go.Figure) -> dict:
    """The figure as plain JSON data ({"data": [...], "layout": {...}}) for Plotly.newPlot,
    without its layout template (about 7 KB in every figure): the page carries it once
    (plotly_template) and report.js gives it to every figure."""
    data = json.loads(fig.to_json())
    data["layout"].pop("template", None)
    return data


def plotly_template() -> dict:
    """plotly.py's default layout template, as every figure would carry it."""
    return json.loads(go.Figure().to_json())["layout"]["template"]


MARKS = {"over": "▲", "under": "▼", "none": ""}


def venue_heatmap(rows: pd.DataFrame, what: str = "topic") -> go.Figure:
    """The venue comparison for more than three venues: a topics (or themes) x venues heatmap
    of each one's share of the venue's papers, rows by the spread between the venues, every
    cell's text its share with ▲/▼ where venue_topics flags it (marks in text, not only
    colour). `rows`: one level's venue_topics rows (or one year's venue_years rows)."""
    order = comparison_order(rows)
    venues = sorted(rows["venue"].unique())
    cells = {(int(r["id"]), r["venue"]): r for r in rows.to_dict("records")}
    labels = dict(zip(rows["id"], rows["label"], strict=False))
    z, text, hover = [], [], []
    for i in order:
        line = [cells.get((i, v)) for v in venues]
        z.append([None if c is None else round(100 * c["share"], 3) for c in line])
        text.append(
            ["" if c is None else f"{100 * c['share']:.1f}{MARKS[c['flag']]}" for c in line]
        )
        hover.append(["" if c is None else share_hover(c) for c in line])
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[plotly_text(v) for v in venues],
            y=[plotly_text(labels[i]) for i in order],
            text=text,
            texttemplate="%{text}",
            textfont={"size": 11},
            customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
            colorscale=[[0.0, "#ffffff"], [1.0, "#1c3d7a"]],
            colorbar={"title": {"text": "share of the<br>venue's papers (%)", "side": "top"}},
            xgap=2,
            ygap=2,
        )
    )
    fig.update_layout(
        height=max(300, 24 * len(order) + 140),
        margin={"l": 10, "r": 10, "t": 90, "b": 10},
        plot_bgcolor="#fff",
        xaxis={"side": "top", "tickangle": -30 if len(venues) > 6 else 0, "fixedrange": True},
        yaxis={"autorange": "reversed", "automargin": True, "fixedrange": True},
        title={"text": f"share of each venue's papers in the {what} (%)", "x": 0, "y": 0.995},
        hoverlabel={"align": "left"},
        font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"},
    )
    return fig


def comparison_figure(
    rows: pd.DataFrame, what: str = "topic", venues: list[str] | None = None
) -> go.Figure:
    """The dot chart for up to three venues, the heatmap for more (`venues`: see venue_chart)."""
    many = rows["venue"].nunique() > 3
    return venue_heatmap(rows, what) if many else venue_chart(rows, what, venues)

"""Stage 5, render: documents + clusters + topics -> index.html (+ plotly.min.js beside it).

The page opens from disk with no network: plotly.js is one local file next to the page. The map
shows one panel per venue on the same coordinates, so a topic sits in the same place in each;
legend entries toggle a topic in every panel. Titles and abstracts are text: they are HTML-escaped
before plotly sees them (plotly renders a subset of HTML in hover labels).
"""

from __future__ import annotations

import html
import logging
import textwrap
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from pipeline import tables
from pipeline.config import RenderConfig
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.render")

PLOTLY_JS = "plotly.min.js"
UNASSIGNED_COLOUR = "#b8b8b8"
PALETTE = qualitative.Dark24 + qualitative.Light24
PLOT_CONFIG = {"displaylogo": False, "responsive": True}


def plotly_text(text: str) -> str:
    """Escape text for plotly labels, which render a subset of HTML. plotly decodes &lt; &gt;
    &amp; but not &quot;, so quotes stay as they are (they are harmless outside attributes)."""
    return html.escape(text, quote=False)


def topic_colour(topic: int) -> str:
    return UNASSIGNED_COLOUR if topic < 0 else PALETTE[topic % len(PALETTE)]


def hover_title(title: str | None, abstract: str, n_words: int) -> str:
    """Title, or the abstract's opening words; wrapped and HTML-escaped for a plotly hover."""
    if isinstance(title, str) and title:
        text = title
    else:
        words = abstract.split()
        text = " ".join(words[:n_words]) + (" …" if len(words) > n_words else "")
    return "<br>".join(plotly_text(line) for line in textwrap.wrap(text, 60))


def map_frame(
    documents: pd.DataFrame, clusters: pd.DataFrame, topics: pd.DataFrame, config: RenderConfig
) -> pd.DataFrame:
    """One row per paper with what the map draws: coordinates, venue, topic label, hover text."""
    frame = clusters.merge(documents, on="doc_id", how="left", validate="one_to_one")
    if frame["abstract"].isna().any():
        raise PipelineError("clusters name papers missing from documents: rerun the pipeline")
    labels = dict(zip(topics["topic"], topics["label"], strict=True))
    missing = set(frame["topic"]) - set(labels)
    if missing:
        raise PipelineError(f"topics table lacks topic(s) {sorted(missing)}: rerun label")
    frame["topic_label"] = frame["topic"].map(labels)
    frame["hover"] = [
        hover_title(t, a, config.hover_words)
        for t, a in zip(frame["title"], frame["abstract"], strict=True)
    ]
    return frame


def map_figure(frame: pd.DataFrame, config: RenderConfig) -> go.Figure:
    """Scatter of every paper, one panel per venue on shared coordinates, coloured by topic."""
    venues = sorted(frame["venue"].unique())
    counts = frame["venue"].value_counts()
    fig = make_subplots(
        rows=1,
        cols=len(venues),
        shared_xaxes="all",  # one coordinate frame: a topic sits in the same place in each panel
        shared_yaxes="all",
        horizontal_spacing=0.02,
        subplot_titles=[f"{plotly_text(v)} ({counts[v]} papers)" for v in venues],
    )
    topic_order = sorted(frame["topic"].unique(), key=lambda t: (t < 0, t))  # unassigned last
    for topic in topic_order:
        in_topic = frame[frame["topic"] == topic]
        label = in_topic["topic_label"].iloc[0]
        name = plotly_text(label if topic < 0 else f"{topic}: {label}")
        for col, venue in enumerate(venues, start=1):
            points = in_topic[in_topic["venue"] == venue]
            if points.empty:
                continue
            fig.add_trace(
                go.Scatter(
                    x=points["x"].round(4).tolist(),
                    y=points["y"].round(4).tolist(),
                    mode="markers",
                    name=name,
                    legendgroup=str(topic),
                    showlegend=not any(t.legendgroup == str(topic) for t in fig.data),
                    marker={
                        "size": config.point_size if topic >= 0 else max(1, config.point_size - 2),
                        "color": topic_colour(topic),
                        "opacity": 0.85 if topic >= 0 else 0.45,
                        "line": {"width": 0},
                    },
                    customdata=list(
                        zip(
                            points["hover"],
                            [plotly_text(venue)] * len(points),
                            [name] * len(points),
                            strict=True,
                        )
                    ),
                    hovertemplate="<b>%{customdata[0]}</b><br>%{customdata[1]} · "
                    "%{customdata[2]}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False)
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False)
    fig.update_layout(
        height=640,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"title": {"text": "Topics (click to hide, double-click to isolate)"}},
        plot_bgcolor="#fafafa",
        hoverlabel={"align": "left"},
    )
    return fig


def venue_chart(topics: pd.DataFrame) -> go.Figure:
    """Per venue, each topic's share of that venue's papers (counts in the hover)."""
    count_columns = [c for c in topics.columns if c.startswith("count_")]
    assigned = topics[topics["topic"] >= 0].sort_values("size", ascending=True)
    fig = go.Figure()
    for column in count_columns:
        venue = column.removeprefix("count_")
        venue_total = topics[column].sum()
        shares = assigned[column] / max(venue_total, 1)
        fig.add_trace(
            go.Bar(
                y=[
                    plotly_text(f"{t}: {label}")
                    for t, label in zip(assigned["topic"], assigned["label"], strict=True)
                ],
                x=(100 * shares).round(2).tolist(),
                customdata=assigned[column].tolist(),
                orientation="h",
                name=plotly_text(venue),
                hovertemplate="%{y}<br>"
                + plotly_text(venue)
                + ": %{customdata} papers (%{x:.1f}% of the venue)<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        height=max(320, 26 * len(assigned) * max(1, len(count_columns)) // 2 + 120),
        margin={"l": 10, "r": 10, "t": 30, "b": 40},
        xaxis={"title": {"text": "share of the venue's papers (%)"}},
        yaxis={"automargin": True},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    return fig


def _figure_div(fig: go.Figure, div_id: str) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=PLOT_CONFIG)


def _topic_table(topics: pd.DataFrame) -> str:
    count_columns = [c for c in topics.columns if c.startswith("count_")]
    head = "".join(
        f"<th>{html.escape(h)}</th>"
        for h in [
            "Topic",
            "Label",
            "Papers",
            *[c.removeprefix("count_") for c in count_columns],
            "Top terms",
        ]
    )
    ordered = pd.concat([topics[topics["topic"] >= 0], topics[topics["topic"] < 0]])
    rows = []
    for row in ordered.to_dict("records"):
        cells = [
            str(row["topic"]) if row["topic"] >= 0 else "–",
            html.escape(row["label"]),
            str(row["size"]),
            *[str(row[c]) for c in count_columns],
            html.escape(", ".join(row["terms"])),
        ]
        swatch = f'<span class="swatch" style="background:{topic_colour(row["topic"])}"></span>'
        rows.append(
            "<tr>"
            + f"<td>{swatch}{cells[0]}</td>"
            + "".join(f"<td>{c}</td>" for c in cells[1:])
            + "</tr>"
        )
    return (
        f'<table id="topics"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<script src="{plotly_js}"></script>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 1400px; padding: 1rem 1.5rem; color: #222; }}
h1 {{ font-size: 1.5rem; margin-bottom: .2rem; }}
h2 {{ font-size: 1.15rem; margin-top: 2rem; }}
.summary {{ color: #555; }}
table {{ border-collapse: collapse; width: 100%; font-size: .9rem; }}
th, td {{ text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e4e4e4;
          vertical-align: top; }}
th {{ background: #f3f3f3; }}
.swatch {{ display: inline-block; width: .8em; height: .8em; border-radius: 50%;
           margin-right: .4em; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="summary" id="summary">{summary}</p>
<h2>Topic map by venue</h2>
{map_div}
<h2>Topic share per venue</h2>
{chart_div}
<h2>Topics</h2>
{table}
</body>
</html>
"""


def render_page(
    documents: pd.DataFrame, clusters: pd.DataFrame, topics: pd.DataFrame, config: RenderConfig
) -> str:
    """Pure core: the report page's HTML (it loads plotly.min.js from beside itself)."""
    frame = map_frame(documents, clusters, topics, config)
    per_venue = ", ".join(
        f"{html.escape(v)} {n}" for v, n in sorted(frame["venue"].value_counts().items())
    )
    n_topics = int((topics["topic"] >= 0).sum())
    n_unassigned = int((frame["topic"] < 0).sum())
    summary = (
        f"{len(frame)} papers ({per_venue}) in {n_topics} topics; "
        f"{n_unassigned} papers ({100 * n_unassigned / len(frame):.1f}%) left unassigned."
    )
    return PAGE.format(
        title=html.escape(config.title),
        plotly_js=PLOTLY_JS,
        summary=summary,
        map_div=_figure_div(map_figure(frame, config), "topic-map"),
        chart_div=_figure_div(venue_chart(topics), "venue-chart"),
        table=_topic_table(topics),
    )


def run(
    config: RenderConfig,
    documents_path: Path,
    clusters_path: Path,
    topics_path: Path,
    out_path: Path,
) -> None:
    from plotly.offline import get_plotlyjs

    documents = tables.read_table(documents_path, tables.DOCUMENTS)
    clusters = tables.read_table(clusters_path, tables.CLUSTERS)
    topics = tables.read_table(topics_path, tables.TOPICS)
    page = render_page(documents, clusters, topics, config)
    tables.write_text(out_path.parent / PLOTLY_JS, get_plotlyjs())
    tables.write_text(out_path, page)
    log.info("wrote %s (%d KB)", out_path, len(page.encode()) // 1024)

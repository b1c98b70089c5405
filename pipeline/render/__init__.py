"""Stage render: the report (index.html) and the topic map (map.html), offline, in one folder.

Reads documents, embeddings, clusters, topics, themes, venue_topics and metrics.json (plus
stability.json and baseline.json when built) and writes the report beside map.html,
plotly.min.js (the one copy of plotly.js both pages load) and the static assets map.js,
report.js and style.css from assets/.

The pages are Jinja2 templates (templates/, autoescaping on) filled with data shaped here; data
for scripts travels as JSON islands (`<script type="application/json">`, with `<`, `>` and `&`
escaped), which map.js and report.js draw with plotly. map.js puts paper text into the page only
through textContent; text plotly draws is escaped for plotly's pseudo-HTML.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import schemas, tables
from pipeline.config import RenderConfig
from pipeline.errors import PipelineError
from pipeline.render.mapview import map_context
from pipeline.render.report import report_context
from pipeline.render.shaping import paper_frame, paper_vectors, summarise, theme_level
from pipeline.render.templating import MAP_PAGE, render_template
from pipeline.render.venues_view import page_title

log = logging.getLogger("pipeline.render")

PLOTLY_JS = "plotly.min.js"
ASSETS_DIR = Path(__file__).parent / "assets"
ASSETS = ("map.js", "report.js", "style.css")


def render_pages(
    documents: pd.DataFrame,
    embeddings: tuple[list[str], np.ndarray],
    clusters: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    venue_topics: pd.DataFrame,
    metrics: dict,
    config: RenderConfig,
    stability: dict | None = None,
    baseline: dict | None = None,
    report_name: str = "index.html",
    fitted_at: str | None = None,
    venue_years: pd.DataFrame | None = None,
) -> dict[str, str]:
    """Pure core: {report_name: the report's HTML, "map.html": the map's}. `embeddings` is
    (doc_ids, vectors); `stability` and `baseline` are None when not built; `fitted_at`: when
    the topic model was fitted. Both pages load plotly.min.js and the assets from beside
    themselves."""
    if report_name == MAP_PAGE:
        raise PipelineError(f"the report cannot be called {MAP_PAGE}: that is the map's name")
    frame = paper_frame(documents, clusters, topics)
    vectors = paper_vectors(frame, *embeddings)
    level = theme_level(themes)
    summary = summarise(frame, topics, level, venue_topics, fitted_at)
    common = {"title": page_title(config.title, frame), "report_name": report_name}
    figures = (metrics, stability, baseline)
    report = report_context(frame, topics, level, venue_topics, summary, figures, venue_years)
    mapped = map_context(frame, topics, level, vectors, summary, config)
    return {
        report_name: render_template("report.html", page="report", **common, **report),
        MAP_PAGE: render_template("map.html", page="map", **common, **mapped),
    }


def run(
    config: RenderConfig,
    documents: Path,
    embeddings: Path,
    clusters: Path,
    topics: Path,
    themes: Path,
    venue_topics: Path,
    venue_years: Path,
    metrics: Path,
    report: Path,
    stability: Path | None = None,
    baseline: Path | None = None,
) -> None:
    """Write the report at `report` (index.html) and, beside it, map.html, plotly.min.js and
    the assets."""
    from plotly.offline import get_plotlyjs

    tables.stage_lineage(  # refuse tables from different builds
        config,
        documents=documents,
        embeddings=embeddings,
        clusters=clusters,
        topics=topics,
        themes=themes,
        venue_topics=venue_topics,
        venue_years=venue_years,
    )
    papers = tables.read_table(documents, schemas.DOCUMENTS)
    pages = render_pages(
        papers,
        tables.read_embeddings(embeddings, documents=papers),
        tables.read_table(clusters, schemas.CLUSTERS),
        tables.read_table(topics, schemas.TOPICS),
        tables.read_table(themes, schemas.THEMES),
        tables.read_table(venue_topics, schemas.VENUE_TOPICS),
        tables.read_json(metrics, "metrics"),
        config,
        stability=None if stability is None else tables.read_json(stability, "stability"),
        baseline=None if baseline is None else tables.read_json(baseline, "baseline"),
        report_name=report.name,
        fitted_at=tables.read_notes(clusters, "clusters").get("fitted_at"),
        venue_years=tables.read_table(venue_years, schemas.VENUE_YEARS),
    )
    folder = report.parent
    tables.write_text(folder / PLOTLY_JS, get_plotlyjs())
    for name in ASSETS:
        tables.write_text(folder / name, (ASSETS_DIR / name).read_text(encoding="utf-8"))
    for name, page in pages.items():
        tables.write_text(folder / name, page)
        log.info("wrote %s (%d KB)", folder / name, len(page.encode()) // 1024)

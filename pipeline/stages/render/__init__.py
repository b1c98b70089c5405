"""Stage render: the report (index.html) and the topic map (map.html), offline, in one folder.

Reads documents, embeddings, clusters, topics, themes, venue_topics and metrics.json (plus
stability.json and baseline.json when built) and writes the report beside map.html, the map's
text shards (map-data/text-NNN.js, mapfiles.py), plotly.js once per folder (the report's full
bundle, plotly.min.js, and the map's gl2d bundle, plotly-gl2d.min.js) and the static assets
from assets/ (the map's scripts, MAP_SCRIPTS, report.js, style.css).

The pages are Jinja2 templates (templates/, autoescaping on) filled with data shaped here; data
for scripts travels as JSON islands (`<script type="application/json">`, with `<`, `>` and `&`
escaped), which the map's scripts and report.js draw with plotly. The map's scripts put paper
text into the page only through textContent; text plotly draws is escaped for plotly's
pseudo-HTML.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import schemas, tables
from pipeline.config import CompareConfig, RenderConfig
from pipeline.errors import PipelineError
from pipeline.labels import page_title, theme_level
from pipeline.stages.render.changes import Odds, changes_context
from pipeline.stages.render.mapfiles import SHARD_DIR, KeptShards, read_kept, shard_path
from pipeline.stages.render.mapview import (
    Similar,
    build_key,
    is_added,
    map_context,
    pages_order,
    similar_of,
)
from pipeline.stages.render.report import report_context
from pipeline.stages.render.shaping import (
    Summary,
    paper_vectors,
    summarise,
)
from pipeline.stages.render.similar import similar_for
from pipeline.stages.render.templating import MAP_PAGE, render_template

log = logging.getLogger("pipeline.render")

PLOTLY_JS = "plotly.min.js"  # plotly.py's full bundle, for the report
# plotly.js's own gl2d partial bundle of the release plotly.py bundles (from the npm package
# plotly.js, dist/; MIT), for the map: its points are WebGL scatter traces only, and the full
# bundle's 4.8 MB took 1.5 s of the map's 3 s to parse at 100,000 papers (2-core EPYC)
MAP_PLOTLY_JS = "plotly-gl2d.min.js"
VENDOR_DIR = Path(__file__).parent / "vendor"
ASSETS_DIR = Path(__file__).parent / "assets"
# the map's scripts, one part of the TopicMap namespace each, in the order map.html loads them
# (each part needs only those before it, map-helpers.js checks): the namespace and shared
# helpers, the data and text shards, the text search, the venue panels' order, headers and
# labels, the labels over the plot, the panels' layout, the density layer, the colourings by
# venue, track and year, the figure, the side panel, the controls, the topic tree,
# the year histogram, the state in the link, exporting a list, the reading list, selecting
# and the list's tools, then the page's state and actions
MAP_SCRIPTS = (
    "map-helpers.js",
    "map-data.js",
    "map-search.js",
    "map-venues.js",
    "map-labels.js",
    "map-layout.js",
    "map-density.js",
    "map-colour.js",
    "map-draw.js",
    "map-panel.js",
    "map-controls.js",
    "map-tree.js",
    "map-years.js",
    "map-state.js",
    "map-export.js",
    "map-reading.js",
    "map-select.js",
    "map.js",
)
ASSETS = (*MAP_SCRIPTS, "report.js", "report-years.js", "style.css")
# every file render writes into the output folder, as Make's targets (pipeline/makedeps.py
# writes them as PAGE_FILES): the report under the Makefile's name for it, and the map's
# text shards as the first one, which every build writes (a corpus has at least one topic)
PAGE_FILES = (
    "index.html",
    MAP_PAGE,
    PLOTLY_JS,
    MAP_PLOTLY_JS,
    *ASSETS,
    shard_path(0),
)
# what the pages show of documents.parquet (not where each paper was read from)
PAGE_COLUMNS = [c for c in schemas.DOCUMENTS.columns if c not in ("source", "source_id")]


def make_pages(
    documents: pd.DataFrame,
    embeddings: tuple[list[str], np.ndarray] | Similar,
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
    history: History | None = None,
    kept_shards: KeptShards | None = None,
) -> dict[str, str]:
    """Pure core: {file path: text} of the generated files: {report_name: the report's HTML,
    "map.html": the map's} and the map's text shards (`map-data/text-NNN.js`). `embeddings` is
    (doc_ids, vectors), or the papers' Similar papers computed from them (mapview.similar_of);
    `stability` and `baseline` are None when not built; `fitted_at`: when
    the topic model was fitted; `history`: what the report's "What changed" section and the
    map's marks are made from (None: only the latest year's lines); `kept_shards`: the text
    shards an earlier build wrote (mapfiles.read_kept), reused where unchanged. Both pages load
    plotly.js and the assets from beside themselves."""
    if report_name == MAP_PAGE:
        raise PipelineError(f"the report cannot be called {MAP_PAGE}: that is the map's name")
    frame = tables.paper_frame(documents, clusters, topics)
    level = theme_level(themes)
    history = history or History(notes={"fitted_at": fitted_at} if fitted_at else None)
    odds = history.odds or Odds(CompareConfig().prior_scale, _z_threshold(venue_topics))
    changed = changes_context(
        frame, topics, history.registry, history.snapshots, history.notes, venue_years, odds
    )
    summary = summarise(frame, topics, level, venue_topics, history.notes, changed)
    common = {"title": page_title(config.title, frame), "report_name": report_name}
    figures = (metrics, stability, baseline)
    report = report_context(frame, topics, level, venue_topics, summary, figures, venue_years)
    report["changes"] = changed
    marks = {"new": [] if changed is None else changed["new"], "gone": history.registry}
    return {
        report_name: render_template("report.html", page="report", **common, **report),
        **map_page(
            frame,
            topics,
            level,
            embeddings,
            summary,
            config,
            **common,
            marks=marks,
            kept_shards=kept_shards,
        ),
    }


@dataclass(frozen=True)
class History:
    """What the pages say of the topics' past: the clusters table's notes (fit_id, fitted_at,
    papers_at_fit), the saved model's topic registry and snapshots (None where there are none)
    and compare's log-odds settings (None: compare's defaults, the venue table's threshold)."""

    notes: dict | None = None
    registry: pd.DataFrame | None = None
    snapshots: pd.DataFrame | None = None
    odds: Odds | None = None


def _z_threshold(venue_topics: pd.DataFrame) -> float:
    if len(venue_topics):
        return float(venue_topics["z_threshold"].iloc[0])
    return CompareConfig().z_threshold


def map_page(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame | None,
    embeddings: tuple[list[str], np.ndarray] | Similar,
    summary: Summary,
    config: RenderConfig,
    title: str,
    report_name: str,
    marks: dict | None = None,
    kept_shards: KeptShards | None = None,
) -> dict[str, str]:
    """{"map.html": the map's HTML, and its text shards}: make_pages' map, from the papers'
    frame (tables.paper_frame: with topic, placed, x and y; shown in pages_order), the theme
    level (or None), `embeddings` as make_pages takes them, the summary figures and `marks`:
    the topics born lately ("new") and the registry whose ended topics a link may name
    ("gone")."""
    added = is_added(frame["placed"])
    order = pages_order(frame["doc_id"], added)
    frame, added = frame.iloc[order].reset_index(drop=True), added[order]
    similar = embeddings
    if not isinstance(similar, Similar):
        vectors = paper_vectors(frame, *embeddings)
        similar = similar_of(frame["doc_id"].tolist(), vectors, added)
    elif similar.doc_ids != frame["doc_id"].tolist():
        raise PipelineError("the embeddings do not hold the clustered papers: rerun make")
    mapped, shards = map_context(
        frame, topics, themes, similar, summary, config, marks, kept_shards
    )
    mapped["data"]["build_key"] = build_key(title)  # the reading list's key (map-reading.js)
    page = render_template(
        MAP_PAGE, page="map", scripts=MAP_SCRIPTS, title=title, report_name=report_name, **mapped
    )
    return {MAP_PAGE: page, **shards}


def run(
    config: RenderConfig,
    compare: CompareConfig | None = None,
    *,
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
    registry: Path | None = None,
    snapshots: Path | None = None,
) -> None:
    """Write the report at `report` (index.html) and, beside it, map.html, its text shards
    (map-data/), both plotly.js bundles and the assets. `registry` and `snapshots`: the saved
    model's (model/), read where they exist; `compare`: its log-odds settings."""
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
    # the similar papers first, the texts after: a million papers' vectors (1.5 GB, and
    # pynndescent's copy) and texts (about 2 GB) are never held at the same time
    # (similar.py: kept in the output folder, so papers added search only theirs)
    placed = tables.read_table(clusters, schemas.CLUSTERS, ["doc_id", "placed"])
    similar = similar_for(report.parent, *tables.read_embeddings(embeddings), placed)
    pages = make_pages(
        tables.read_table(documents, schemas.DOCUMENTS, PAGE_COLUMNS),
        similar,
        tables.read_table(clusters, schemas.CLUSTERS),
        tables.read_table(topics, schemas.TOPICS),
        tables.read_table(themes, schemas.THEMES),
        tables.read_table(venue_topics, schemas.VENUE_TOPICS),
        tables.read_json(metrics, "metrics"),
        config,
        stability=None if stability is None else tables.read_json(stability, "stability"),
        baseline=None if baseline is None else tables.read_json(baseline, "baseline"),
        report_name=report.name,
        venue_years=tables.read_table(venue_years, schemas.VENUE_YEARS),
        history=read_history(clusters, registry, snapshots, compare),
        kept_shards=read_kept(report.parent),
    )
    write_files(report.parent, pages, get_plotlyjs())


def read_history(
    clusters: Path, registry: Path | None, snapshots: Path | None, compare: CompareConfig | None
) -> History:
    """The History of a build: its clusters table's notes and, where they exist, the saved
    model's registry and snapshots."""

    def table(path: Path | None, schema) -> pd.DataFrame | None:
        return tables.read_table(path, schema) if path is not None and path.exists() else None

    return History(
        notes=tables.read_notes(clusters, "clusters"),
        registry=table(registry, schemas.TOPIC_REGISTRY),
        snapshots=table(snapshots, schemas.TOPIC_SNAPSHOTS),
        odds=None if compare is None else Odds(compare.prior_scale, compare.z_threshold),
    )


def write_changed(path: Path, text: str) -> None:
    """Write `text` at `path` atomically, unless the file holds it already: then only its time
    is renewed (Make's targets stay newer than their inputs). Papers added to a build rewrite
    only the text shards whose papers changed."""
    try:
        same = (
            path.stat().st_size == len(data := text.encode("utf-8")) and path.read_bytes() == data
        )
    except OSError:
        same = False
    if same:
        os.utime(path)
    else:
        tables.write_text(path, text)


def write_files(folder: Path, files: dict[str, str], plotly_js: str) -> None:
    """Write make_pages' files, plotly.js and the assets into `folder`, each file atomically,
    and remove shards of an earlier build that this one did not write (a bigger corpus left
    more: they would hold other papers' text)."""
    write_changed(folder / PLOTLY_JS, plotly_js)
    gl2d = (VENDOR_DIR / MAP_PLOTLY_JS).read_text(encoding="utf-8")
    write_changed(folder / MAP_PLOTLY_JS, gl2d)
    for name in ASSETS:
        write_changed(folder / name, (ASSETS_DIR / name).read_text(encoding="utf-8"))
    shard_dir = folder / SHARD_DIR
    shard_dir.mkdir(parents=True, exist_ok=True)
    # the shards before the pages, so a run killed in between leaves no page without its text
    for name, text in sorted(files.items(), key=lambda item: item[0].endswith(".html")):
        write_changed(folder / name, text)
        if name.endswith(".html"):
            log.info("wrote %s (%d KB)", folder / name, len(text.encode()) // 1024)
    stale = [p for p in shard_dir.iterdir() if p.is_file() and f"{SHARD_DIR}/{p.name}" not in files]
    for path in stale:
        path.unlink()
    shard_bytes = sum((folder / n).stat().st_size for n in files if n.startswith(SHARD_DIR))
    log.info(
        "wrote %d text shard(s) in %s (%d KB)%s",
        sum(n.startswith(SHARD_DIR) for n in files),
        shard_dir,
        shard_bytes // 1024,
        f"; removed {len(stale)} stale shard(s)" if stale else "",
    )

"""The figure drawn from a FigureData with matplotlib (a Figure on the Agg canvas, no pyplot
state) and written as PNG, SVG and PDF: points rasterised in the vector files (a vector point
per paper: 14 MB of SVG at 100,000 papers, growing with the papers), text kept as text, labels
kept apart by adjustText and any still touching a larger one left out, and no date or random id
in any file, so that the same build gives the same bytes."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib
import numpy as np
from adjustText import adjust_text
from matplotlib import patheffects
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from pipeline import tables
from pipeline.colours import MAP_COLOURS
from pipeline.config import FiguresConfig
from pipeline.stages.figures.shaping import CONTEXT_COLOUR, FigureData, layers

FORMATS = ("png", "svg", "pdf")
MAP_INCHES = (10.0, 8.4)  # one map: width, height
PANEL_INCHES = (4.6, 4.0)  # each venue's panel
# the band above the plots: the title, then the subtitle and the panels' titles where drawn
TITLE_INCHES, SUBTITLE_INCHES, PANEL_TITLE_INCHES = 0.6, 0.3, 0.3
# fixed ids and no dates: the same figure gives the same bytes; SVG text as <text>, PDF fonts
# as TrueType, so that labels stay text a reader can select and an editor can change
RC = {"svg.hashsalt": "topicmap", "svg.fonttype": "none", "pdf.fonttype": 42}
METADATA = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}
TEXT = MAP_COLOURS["text"]
LEADER = "#6e7781"  # the line from a label moved off its papers back to them
LEADER_PIXELS = 12  # at the figure's 100 dpi: labels moved less than this get no line
# the most labels drawn (the largest first) on one map and in a venue's panel: more do not fit
# legibly, and adjustText's time grows steeply with crowded labels (60: 4 s, 120: 40 s)
MAX_LABELS, MAX_PANEL_LABELS = 60, 30


def point_area(papers: int, panels: int = 0) -> float:
    """Marker area in points², smaller as the map fills: 6 at 3,400 papers, 2 at 10,000, 0.25
    from 80,000 (about 2 pixels across at 300 dpi). With `panels` venues' panels, each smaller:
    half the area for a panel's share of the papers (11 venues of 100,000 papers: 1.1)."""
    share = papers / panels if panels else papers
    area = float(np.clip(20_000 / max(share, 1), 0.25, 12.0))
    return area / 2 if panels else area


def grid(panels: int) -> tuple[int, int]:
    """(rows, columns) of the panels: side by side up to three, else a near-square grid."""
    columns = panels if panels <= 3 else math.ceil(math.sqrt(panels))
    return math.ceil(panels / columns), columns


def _limits(values: np.ndarray) -> tuple[float, float]:
    low, high = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    pad = max(high - low, 1e-6) * 0.03
    return low - pad, high + pad


def _header_inches(data: FigureData) -> float:
    return (
        TITLE_INCHES
        + (SUBTITLE_INCHES if data.subtitle else 0.0)
        + (PANEL_TITLE_INCHES if data.panels else 0.0)
    )


def _new_figure(data: FigureData) -> tuple[Figure, np.ndarray]:
    rows, columns = grid(len(data.panels)) if data.panels else (1, 1)
    width, height = PANEL_INCHES if data.panels else MAP_INCHES
    header = _header_inches(data)
    figure = Figure(figsize=(width * columns, height * rows + header), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, columns, sharex=True, sharey=True, squeeze=False)
    top = 1 - header / figure.get_figheight()
    hspace = PANEL_TITLE_INCHES / height if data.panels else 0.0
    figure.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=top, wspace=0.03, hspace=hspace)
    return figure, axes


def _draw_points(ax, data: FigureData, config: FiguresConfig, panel: str | None) -> None:
    """The papers, muted ones first (under), then unassigned, then those in their colours: a
    collection each, below the axes' rasterization zorder, so that SVG and PDF hold the three as
    one image per plot (a rasterised image per layer: PDF at 11 panels took 7.1 s and 2.2 GB
    against 2.7 s and 1.2 GB so)."""
    points, layer = data.points, layers(data.points, config, panel)
    area = point_area(len(points), len(data.panels))
    colours = np.where(layer == 0, CONTEXT_COLOUR, points["colour"].to_numpy())
    for level in (0, 1, 2):
        mine = layer == level
        if mine.any():
            ax.scatter(
                points["x"].to_numpy()[mine],
                points["y"].to_numpy()[mine],
                s=area,
                c=list(colours[mine]),
                linewidths=0,
                zorder=level,
            )


def _label_style(row, colour_of: dict[int, str], config: FiguresConfig, panelled: bool) -> dict:
    highlighted = config.highlight_topic is not None and row.topic == config.highlight_topic
    size = (7.0 if panelled else 9.0) + (0.5 if row.topic < 0 else 0.0)
    return {
        "fontsize": size,
        "fontweight": "bold" if row.topic < 0 or highlighted else "normal",
        "color": colour_of.get(row.topic, TEXT) if highlighted else TEXT,
        "ha": "center",
        "va": "center",
        "zorder": 5,
    }


def _place_labels(ax, data: FigureData, config: FiguresConfig, panelled: bool) -> list:
    """The labels at their papers' median, moved apart by adjustText, then those still touching
    a larger one's box removed (adjustText stops at its iteration limit without a guarantee);
    a label moved off its papers gets a thin line back to them. Returns the kept labels' boxes
    (pixels at the figure's dpi)."""
    colour_of = dict(zip(data.points["topic"].astype(int), data.points["colour"], strict=True))
    rows = list(data.labels.head(MAX_PANEL_LABELS if panelled else MAX_LABELS).itertuples())
    texts = [
        ax.text(row.x, row.y, row.text, **_label_style(row, colour_of, config, panelled))
        for row in rows
    ]
    if not texts:
        return []
    # avoid_self off: a label stays on its papers unless it collides with another
    adjust_text(
        texts,
        ax=ax,
        iter_lim=300,
        expand=(1.15, 1.4),
        avoid_self=False,
        ensure_inside_axes=True,
        prevent_crossings=False,
    )
    renderer = ax.figure.canvas.get_renderer()
    kept = []
    for text, row in zip(texts, rows, strict=True):  # largest first
        box = text.get_window_extent(renderer).expanded(1.04, 1.08)
        if any(box.overlaps(other) for other, _, _ in kept):
            text.remove()
        else:
            kept.append((box, row, text))
    for box, row, text in kept:
        _halo(ax, text)
        _leader(ax, box, (row.x, row.y))
    return [box for box, _, _ in kept]


def _halo(ax, text) -> None:
    """A white outline under a label, drawn as a path of its own beneath it: a path effect on
    the label itself would turn its text into paths in the SVG and PDF."""
    halo = ax.text(*text.get_position(), text.get_text())
    halo.update_from(text)  # font, size, weight and alignment
    halo.set_zorder(text.get_zorder() - 0.5)
    halo.set_path_effects([patheffects.Stroke(linewidth=2.5, foreground="white")])


def _leader(ax, box, anchor: tuple[float, float]) -> None:
    """A thin line from a label's papers (`anchor`, data coordinates) to the nearest point of
    its box (pixels), where adjustText moved it off them."""
    at = ax.transData.transform(anchor)
    edge = np.clip(at, (box.x0, box.y0), (box.x1, box.y1))
    if np.hypot(*(edge - at)) >= LEADER_PIXELS:
        xs, ys = ax.transData.inverted().transform(np.array([at, edge])).T
        ax.plot(xs, ys, color=LEADER, linewidth=0.6, zorder=4)


def draw(data: FigureData, config: FiguresConfig) -> Figure:
    """The figure: one map, or one panel per venue on shared coordinates, with the title above
    and the labels placed in each."""
    figure, axes = _new_figure(data)
    xlim, ylim = _limits(data.points["x"].to_numpy()), _limits(data.points["y"].to_numpy())
    panels = data.panels or [None]
    for ax, panel in zip(axes.flat, panels, strict=False):
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_rasterization_zorder(2.4)  # the point layers (zorder 0-2) as one image
        for spine in ax.spines.values():
            spine.set_color(MAP_COLOURS["axis"])
        if panel is not None:
            ax.set_title(panel, fontsize=10, color=TEXT, loc="left")
        _draw_points(ax, data, config, panel)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_axis_off()
    height = figure.get_figheight()
    figure.text(0.01, 1 - 0.3 / height, data.title, fontsize=15, color=TEXT, va="center")
    if data.subtitle:
        figure.text(0.01, 1 - 0.68 / height, data.subtitle, fontsize=10, color=TEXT, va="center")
    for ax, panel in zip(axes.flat, panels, strict=False):
        _place_labels(ax, data, config, panel is not None)
    return figure


def write_figures(figure: Figure, png: Path, dpi: int) -> dict[str, Path]:
    """Write the figure as `png` and, beside it, the same name as .svg and .pdf, each file
    atomically; returns {format: path}."""
    paths = {fmt: png.with_suffix(f".{fmt}") for fmt in FORMATS}
    with matplotlib.rc_context(RC):
        for fmt, path in paths.items():
            tables.atomic_write(
                path,
                lambda tmp, fmt=fmt: figure.savefig(
                    tmp, format=fmt, dpi=dpi, metadata=METADATA[fmt], facecolor="white"
                ),
            )
    return paths

"""The report's pictures that need no JavaScript, as plain data for the template: a static
preview of the map (its points, downsampled, coloured as on the map) and each topic's term
bars (c-TF-IDF weights from topics.parquet)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.colours import topic_colour

PREVIEW_POINTS = 2000  # at most: a few thousand circles keep the report small
PREVIEW_SIZE = (360, 240)  # the SVG's viewBox, in its own units
PREVIEW_PAD = 6


def preview_sample(n_papers: int, limit: int = PREVIEW_POINTS) -> np.ndarray:
    """Positions drawn out of `n_papers` in some order: all of them up to `limit`, else `limit`
    evenly spaced through it."""
    if n_papers <= limit:
        return np.arange(n_papers)
    return np.unique(np.linspace(0, n_papers - 1, limit).round().astype(int))


def _scaled(values: np.ndarray, low: float, high: float, flip: bool = False) -> np.ndarray:
    span = float(values.max() - values.min()) or 1.0
    unit = (values - values.min()) / span
    return np.round(low + (1 - unit if flip else unit) * (high - low), 1)


def map_preview(
    frame: pd.DataFrame, colours: dict[int, str] | None = None, limit: int = PREVIEW_POINTS
) -> dict:
    """The preview's viewBox, point radius and its points grouped by colour: {"width", "height",
    "radius", "shown", "papers", "groups": [{"colour", "points": [(x, y), ...]}]}, unassigned
    papers first (drawn beneath), then topics in order. The map's aspect is kept; y grows
    upwards as on the map. `colours`: topic -> colour, the map's (colours.topic_colours; None:
    colours.topic_colour)."""
    width, height = PREVIEW_SIZE
    # evenly spaced through the doc_id order: doc_ids hash the text, so that is a spread sample,
    # and the same picture (points drawn in that order too) whatever order the inputs list them in
    by_id = np.argsort(frame["doc_id"].to_numpy(str), kind="stable")
    rows = frame.iloc[by_id[preview_sample(len(frame), limit)]]
    x, y = rows["x"].to_numpy(float), rows["y"].to_numpy(float)
    aspect = (float(np.ptp(y)) or 1.0) / (float(np.ptp(x)) or 1.0)
    inner_w, inner_h = width - 2 * PREVIEW_PAD, height - 2 * PREVIEW_PAD
    drawn_w, drawn_h = min(inner_w, inner_h / aspect), min(inner_h, inner_w * aspect)
    left, top = (width - drawn_w) / 2, (height - drawn_h) / 2
    xs = _scaled(x, left, left + drawn_w) if len(rows) else x
    ys = _scaled(y, top, top + drawn_h, flip=True) if len(rows) else y
    groups = []
    topics = rows["topic"].to_numpy()
    for topic in sorted(set(topics.tolist()), key=lambda t: (t >= 0, t)):
        mask = topics == topic
        points = list(zip(xs[mask].tolist(), ys[mask].tolist(), strict=True))
        colour = topic_colour(int(topic)) if colours is None else colours[int(topic)]
        groups.append({"colour": colour, "points": points})
    return {
        "width": width,
        "height": height,
        "radius": 2.6 if len(rows) <= 500 else 1.6,  # few points drawn larger
        "shown": len(rows),
        "papers": len(frame),
        "groups": groups,
    }


def term_bars(terms: object, weights: object) -> list[dict]:
    """A topic's terms with their c-TF-IDF weights (topics.parquet's term_weights) and each bar's
    length as a percent of the topic's largest weight, in the terms' order."""
    pairs = list(zip(list(terms), [float(w) for w in weights], strict=True))
    largest = max((w for _, w in pairs), default=0.0)
    return [
        {
            "term": term,
            "weight": weight,
            "percent": round(100 * weight / largest, 1) if largest > 0 else 0.0,
        }
        for term, weight in pairs
    ]

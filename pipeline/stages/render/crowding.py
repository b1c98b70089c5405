"""What the map draws where it is crowded, computed at render time from the papers' places:

- density: where points overplot, a shaded grid under them (map-density.js draws it): the
  papers' 2-D histogram over the map's fixed ranges, smoothed (scipy's gaussian_filter) and
  scaled to 0-255 (square root: a sparse region stays visible beside a dense one), for all
  papers and for each venue's panel; on by default when most papers overplot at the map's
  point size (overplotted_share), as at 100,000 papers;
- venue groups: beyond the venue palette's colours, venues grouped by the topics they share
  (Ward's hierarchical clustering of their topic shares, scipy), each group a colour, a legend
  and a filter of the small multiples, so twenty venues are told apart without twenty colours.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.colours import PALETTE, VENUE_PALETTE
from pipeline.stages.render.mapfiles import typed_array

DENSITY_MIN_PAPERS = 1000  # fewer papers: no density layer offered (each point is seen)
DENSITY_BINS = 128  # the grid of all papers (a venue's: half as fine, its papers are fewer)
DENSITY_SIGMA = 1.2  # the smoothing, in grid cells
# the plot the overplotting is measured on: the combined view on a laptop screen, in pixels
REFERENCE_PLOT = (900, 650)
# a paper is overplotted when at least CROWD papers fall on its marker-sized cell (it hides or
# is hidden by three others); density is on by default when OVERPLOTTED of the papers are. The
# share measured (docs/benchmarks.md): 0.08 at 2,000 papers, 0.38 at 5,000, 0.53 at the 9,672
# of the shared corpora, 0.67 at 20,000, 0.82 at 50,000, 0.85 at 100,000
CROWD = 4
OVERPLOTTED = 0.65
MAX_GROUPS = 8


def overplotted_share(x: np.ndarray, y: np.ndarray, ranges, point_size: int) -> float:
    """The share of the papers drawn on a cell of the reference plot (cells of the marker's
    size) that at least CROWD - 1 other papers are drawn on too: what overplotting hides."""
    if len(x) == 0:
        return 0.0
    cols = max(1, REFERENCE_PLOT[0] // max(point_size, 1))
    rows = max(1, REFERENCE_PLOT[1] // max(point_size, 1))
    counts, _, _ = np.histogram2d(x, y, bins=(cols, rows), range=ranges)
    return float(counts[counts >= CROWD].sum() / len(x))


def _grid(x: np.ndarray, y: np.ndarray, ranges, bins: int) -> dict:
    """One panel's density: {bins, data (uint8, rows from the lowest y, typed_array)}."""
    from scipy.ndimage import gaussian_filter

    counts, _, _ = np.histogram2d(y, x, bins=bins, range=(ranges[1], ranges[0]))
    smooth = gaussian_filter(counts, DENSITY_SIGMA)
    top = smooth.max()
    scaled = np.sqrt(smooth / top) if top > 0 else smooth
    return {"bins": bins, **typed_array(np.round(255 * scaled).astype(np.uint8), "uint8")}


def density_data(frame: pd.DataFrame, venues: list[str], x_range, y_range, point_size: int):
    """The map's density layer: {on (by default), overplotted (share), all: grid, venues: a
    grid per venue in `venues`' order}; None below DENSITY_MIN_PAPERS papers."""
    if len(frame) < DENSITY_MIN_PAPERS:
        return None
    x, y = frame["x"].to_numpy(float), frame["y"].to_numpy(float)
    ranges = (tuple(x_range), tuple(y_range))
    share = overplotted_share(x, y, ranges, point_size)
    venue = frame["venue"].to_numpy()
    return {
        "on": share >= OVERPLOTTED,
        "overplotted": round(share, 3),
        "all": _grid(x, y, ranges, DENSITY_BINS),
        "venues": [_grid(x[venue == v], y[venue == v], ranges, DENSITY_BINS // 2) for v in venues],
    }


def _group_label(shares: pd.DataFrame, members: list[str], labels: dict[int, str]) -> str:
    """A group's name: the topic its venues lean to most against all venues' mean share."""
    lean = shares.loc[members].mean() - shares.mean()
    return labels.get(int(lean.idxmax()), str(lean.idxmax()))


def venue_groups(frame: pd.DataFrame, venues: list[str], labels: dict[int, str]) -> list | None:
    """Groups of venues by the topics they share, where the venues outnumber VENUE_PALETTE's
    colours: [{label, colour, venues: indices into `venues`}], groups in order of their first
    venue; None for fewer venues. `labels`: topic -> label (a group is named by its topic)."""
    if len(venues) <= len(VENUE_PALETTE):
        return None
    from scipy.cluster.hierarchy import fcluster, linkage

    assigned = frame[frame["topic"] >= 0]
    counts = pd.crosstab(assigned["venue"], assigned["topic"]).reindex(venues, fill_value=0)
    shares = counts.div(counts.sum(axis=1).replace(0, 1), axis=0)
    k = min(MAX_GROUPS, -(-len(venues) // 3))
    # Ward's linkage of the shares' square roots (Hellinger distance): groups of like size
    tree = linkage(np.sqrt(shares.to_numpy()), method="ward")
    cut = fcluster(tree, t=k, criterion="maxclust")
    order = list(dict.fromkeys(cut))  # groups numbered by their first venue
    groups = []
    for g, number in enumerate(order):
        members = [k for k, c in enumerate(cut) if c == number]
        groups.append(
            {
                "label": _group_label(shares, [venues[m] for m in members], labels),
                "colour": PALETTE[g % len(PALETTE)],
                "venues": members,
            }
        )
    return groups

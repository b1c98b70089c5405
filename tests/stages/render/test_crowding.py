"""What the map draws where it is crowded (render's crowding.py): the density layer's grids and
when it is on by default, and the venue groups beyond the venue palette's colours."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.colours import VENUE_PALETTE
from pipeline.stages.render.crowding import (
    DENSITY_MIN_PAPERS,
    density_data,
    overplotted_share,
    venue_groups,
)
from pipeline.stages.render.mapfiles import decode_typed_array
from pipeline.stages.render.shaping import point_size


def _blobs(n: int, venues: int = 1, seed: int = 0) -> pd.DataFrame:
    """n papers in 30 blobs of a map about as wide as UMAP's, dealt to `venues` venues."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=5, size=(30, 2))
    blob = rng.integers(0, 30, n)
    xy = centres[blob] + rng.normal(scale=0.8, size=(n, 2))
    return pd.DataFrame(
        {
            "x": xy[:, 0],
            "y": xy[:, 1],
            "topic": blob,
            "venue": [f"V{v:02d}" for v in rng.integers(0, venues, n)],
        }
    )


def _ranges(frame: pd.DataFrame) -> tuple[list[float], list[float]]:
    return [frame["x"].min() - 1, frame["x"].max() + 1], [
        frame["y"].min() - 1,
        frame["y"].max() + 1,
    ]


def test_density_is_on_by_default_where_most_papers_overplot_as_at_100000():
    big, small = _blobs(100_000), _blobs(2_000)
    for frame, on in ((big, True), (small, False)):
        x_range, y_range = _ranges(frame)
        size = point_size("auto", len(frame))
        data = density_data(frame, ["V00"], x_range, y_range, size)
        assert data["on"] is on
        share = overplotted_share(frame["x"], frame["y"], (x_range, y_range), size)
        assert data["overplotted"] == pytest.approx(share, abs=1e-3)
    assert density_data(small.head(DENSITY_MIN_PAPERS - 1), ["V00"], *_ranges(small), 7) is None


def test_each_grid_is_the_papers_smoothed_counts_scaled_to_255():
    frame = _blobs(5_000, venues=3)
    x_range, y_range = _ranges(frame)
    data = density_data(frame, ["V00", "V01", "V02"], x_range, y_range, 5)
    grids = [data["all"], *data["venues"]]
    assert [g["bins"] for g in grids] == [128, 64, 64, 64]
    for grid in grids:
        values = decode_typed_array(grid).reshape(grid["bins"], grid["bins"])
        assert values.max() == 255 and values.min() == 0
    # the densest cell of all papers is where most papers are (rows from the lowest y)
    values = decode_typed_array(data["all"]).reshape(128, 128)
    row, col = np.unravel_index(values.argmax(), values.shape)
    counts, _, _ = np.histogram2d(frame["y"], frame["x"], bins=8, range=(y_range, x_range))
    assert counts[row // 16, col // 16] >= 0.5 * counts.max()


def test_no_groups_while_the_venue_palette_tells_venues_apart():
    frame = _blobs(2_000, venues=len(VENUE_PALETTE))
    venues = sorted(frame["venue"].unique())
    assert venue_groups(frame, venues, {}) is None


def test_venues_sharing_topics_are_grouped_and_every_venue_once():
    rng = np.random.default_rng(1)
    n, venues = 6_000, [f"V{v:02d}" for v in range(24)]
    venue = rng.integers(0, 24, n)
    # four families of six venues; a family's papers come from its own five topics
    topic = (venue // 6) * 5 + rng.integers(0, 5, n)
    frame = pd.DataFrame({"venue": [venues[v] for v in venue], "topic": topic})
    labels = {t: f"topic {t}" for t in range(20)}
    groups = venue_groups(frame, venues, labels)
    assert 2 <= len(groups) <= 8
    members = sorted(v for g in groups for v in g["venues"])
    assert members == list(range(24))
    for group in groups:  # no group mixes families
        assert len({v // 6 for v in group["venues"]}) == 1
        assert group["label"] in labels.values()
    assert len({g["colour"] for g in groups}) == len(groups)

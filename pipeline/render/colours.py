"""The pages' colours: one per topic (unassigned papers muted) and one per venue."""

from __future__ import annotations

from plotly.colors import qualitative

UNASSIGNED_COLOUR = "#c7ccd1"
# Distinct mid-dark colours first (legible on white, and as text swatches), then plotly's.
PALETTE = (
    "#1f77b4 #e8590c #2b9348 #c92a2a #7048e8 #8c564b #d6336c #5c677d #a5a800 #0c8599 "
    "#f59f00 #364fc7 #5c940d #e64980 #1098ad #9c36b5 #74b816 #d9480f #3b5bdb #087f5b"
).split() + list(qualitative.Dark24 + qualitative.Light24)
VENUE_PALETTE = ["#2f6fdb", "#e8590c", "#2b9348", "#9c36b5", "#c92a2a", "#0c8599"]


def topic_colour(topic: int) -> str:
    return UNASSIGNED_COLOUR if topic < 0 else PALETTE[topic % len(PALETTE)]


def venue_colour(position: int) -> str:
    """The colour of the venue at `position` in the sorted list of venues."""
    return VENUE_PALETTE[position % len(VENUE_PALETTE)]

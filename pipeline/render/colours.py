"""The pages' colours: one per topic (unassigned papers muted) and one per venue. Every topic
and venue colour keeps at least 3:1 contrast (WCAG 2.1, non-text) against the pages' white and
the map's plot background, so points, swatches and bars stay visible."""

from __future__ import annotations

from plotly.colors import qualitative

BACKGROUNDS = ("#ffffff", "#fbfbfc")  # the pages; the map's plot area
MIN_CONTRAST = 3.0
# muted on purpose: unassigned papers sit beneath the topics (their rows say "Unassigned")
UNASSIGNED_COLOUR = "#c7ccd1"


def relative_luminance(colour: str) -> float:
    """WCAG 2.1 relative luminance of a #rrggbb colour."""
    channels = [int(colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(first: str, second: str) -> float:
    """WCAG 2.1 contrast ratio of two #rrggbb colours (1 to 21)."""
    high, low = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def legible(colour: str, ratio: float = MIN_CONTRAST) -> str:
    """`colour` (lower case), darkened in steps of 5% toward black until it has `ratio` against
    every background."""
    rgb = [int(colour.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4)]
    for step in range(21):
        shade = "#" + "".join(f"{round(c * (1 - step / 20)):02x}" for c in rgb)
        if all(contrast_ratio(shade, b) >= ratio for b in BACKGROUNDS):
            return shade
    return "#000000"


# Distinct mid-dark colours first (legible on white, and as text swatches), then plotly's Dark24
# and Light24, the light ones darkened until they keep 3:1.
PALETTE = [
    legible(c)
    for c in (
        "#1f77b4 #e8590c #2b9348 #c92a2a #7048e8 #8c564b #d6336c #5c677d #7f7d00 #0c8599 "
        "#b06f00 #364fc7 #5c940d #e64980 #1098ad #9c36b5 #a61e4d #d9480f #3b5bdb #087f5b"
    ).split()
    + list(qualitative.Dark24 + qualitative.Light24)
]
VENUE_PALETTE = ["#2f6fdb", "#e8590c", "#2b9348", "#9c36b5", "#c92a2a", "#0c8599"]


def topic_colour(topic: int) -> str:
    return UNASSIGNED_COLOUR if topic < 0 else PALETTE[topic % len(PALETTE)]


def venue_colour(position: int) -> str:
    """The colour of the venue at `position` in the sorted list of venues."""
    return VENUE_PALETTE[position % len(VENUE_PALETTE)]

"""The pages' colours: one per topic (unassigned papers muted) and one per venue. Every topic
and venue colour keeps at least 3:1 contrast (WCAG 2.1, non-text) against the pages' white and
the map's plot background, so points, swatches and bars stay visible. With more topics than the
palette holds, `topic_colours` makes each topic a shade of its theme's colour instead of cycling
the palette (which gave neighbouring topics the same colour)."""

from __future__ import annotations

import colorsys

import pandas as pd
from plotly.colors import qualitative, sample_colorscale, sequential

BACKGROUNDS = ("#ffffff", "#fbfbfc")  # the pages; the map's plot area
MIN_CONTRAST = 3.0
# muted on purpose: unassigned papers sit beneath the topics (their rows say "Unassigned")
UNASSIGNED_COLOUR = "#c7ccd1"
# The map's other colours, handed to its scripts in the page's data (shaping.map_data), which
# hold none of their own: the unassigned papers, the papers a search or filter leaves out, the
# other venues while one is highlighted, the plot area and the page around it, the panels'
# headers and frames.
MAP_COLOURS = {
    "unassigned": UNASSIGNED_COLOUR,
    "context": "#d9dde1",
    "other_venues": "#aeb4ba",
    "plot": BACKGROUNDS[1],
    "paper": BACKGROUNDS[0],
    "text": "#1f2328",
    "axis": "#e3e6ea",
    "undated": "#bfc4ca",  # papers without a year, coloured by year: muted, as unassigned ones
}


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
THEME_PALETTE = PALETTE[:20]  # the distinct ones: a theme's colour, its topics' shades
# Eleven colours far apart (CIELAB distance at least 20, tested), none grey: grey is the other
# venues when the map highlights one. Beyond eleven venues they repeat.
VENUE_PALETTE = (
    "#2f6fdb #e8590c #2b9348 #9c36b5 #c92a2a #0c8599 #8c564b #d6336c #7f7d00 #1c3d7a #b8860b"
).split()


def topic_colour(topic: int) -> str:
    return UNASSIGNED_COLOUR if topic < 0 else PALETTE[topic % len(PALETTE)]


def venue_colour(position: int) -> str:
    """The colour of the venue at `position` in the sorted list of venues."""
    return VENUE_PALETTE[position % len(VENUE_PALETTE)]


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in rgb)


def shades(colour: str, n: int) -> list[str]:
    """`n` shades of `colour`: its hue (turned a little either way) from dark to the lightest
    lightness that keeps 3:1 against every background; `[colour]` for n = 1."""
    if n <= 1:
        return [colour][:n]
    hue, lightness, saturation = colorsys.rgb_to_hls(
        *(int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    )
    lightest = lightness
    while lightest < 0.9:  # as light as 3:1 allows
        lighter = _hex(colorsys.hls_to_rgb(hue, lightest + 0.01, saturation))
        if any(contrast_ratio(lighter, b) < MIN_CONTRAST for b in BACKGROUNDS):
            break
        lightest += 0.01
    darkest = min(0.22, lightest)
    out = []
    for k in range(n):
        turn = 0.035 * (k % 3 - 1)  # neighbouring shades differ in hue too
        level = lightest - (lightest - darkest) * k / (n - 1)
        out.append(legible(_hex(colorsys.hls_to_rgb((hue + turn) % 1, level, saturation))))
    return out


def topic_colours(topics: pd.DataFrame, themes: pd.DataFrame | None) -> dict[int, str]:
    """topic -> its colour. Up to len(PALETTE) topics (or without a theme level): the palette's,
    as `topic_colour`. With more: a shade of its theme's colour (THEME_PALETTE), the theme's
    topics from light to dark in the theme's order; a topic in no theme keeps its own."""
    ids = [int(t) for t in topics["topic"]]
    colours = {t: topic_colour(t) for t in ids}
    if themes is None or sum(t >= 0 for t in ids) <= len(PALETTE):
        return colours
    for row in themes.itertuples():
        if int(row.theme) < 0:
            continue
        members = [int(t) for t in row.topics if int(t) in colours]
        base = THEME_PALETTE[int(row.theme) % len(THEME_PALETTE)]
        colours.update(zip(members, shades(base, len(members)), strict=True))
    return colours


def theme_colour(theme: int) -> str:
    """A theme's colour: that of its topics' shades."""
    return UNASSIGNED_COLOUR if theme < 0 else THEME_PALETTE[theme % len(THEME_PALETTE)]


# The year scale: matplotlib's plasma (plotly's sequential.Plasma), made for even steps of
# lightness that stay readable with the common colour-vision deficiencies, taken from its dark
# end up to YEAR_SCALE_END: beyond that its yellows fall below 3:1 on the pages' white.
YEAR_SCALE_END = 0.6


def year_colours(years: list[int]) -> list[str]:
    """Each of the sorted `years`' colour on the year scale, by its place in their span: the
    first year at the scale's dark end, the last at YEAR_SCALE_END."""
    if not years:
        return []
    first, span = years[0], max(years[-1] - years[0], 1)
    points = [YEAR_SCALE_END * (y - first) / span for y in years]
    rgb = sample_colorscale(sequential.Plasma, points, colortype="rgb")
    return [_hex(tuple(float(c) / 255 for c in v[4:-1].split(","))) for v in rgb]


def track_colour(position: int) -> str:
    """The colour of the track at `position` in the sorted list of tracks (the venues')."""
    return venue_colour(position)

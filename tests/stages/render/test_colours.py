"""The pages' colours: every topic and venue colour keeps 3:1 contrast (WCAG 2.1 non-text
contrast) against the backgrounds it is drawn on; the map's scripts take every colour from
Python."""

from __future__ import annotations

import colorsys
import math
import re

import pandas as pd
import pytest

from pipeline.colours import (
    BACKGROUNDS,
    MAP_COLOURS,
    PALETTE,
    VENUE_PALETTE,
    contrast_ratio,
    legible,
    relative_luminance,
    shades,
    theme_colour,
    topic_colour,
    topic_colours,
    venue_colour,
    year_colours,
)
from pipeline.stages.render import ASSETS_DIR, MAP_SCRIPTS
from tests.support import tables as make


def _wcag_contrast(a: str, b: str) -> float:
    """The WCAG 2.1 formula written out again, independently of the module's."""

    def luminance(colour: str) -> float:
        r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
        f = lambda c: c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4  # noqa: E731
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _page_background() -> str:
    css = (ASSETS_DIR / "style.css").read_text(encoding="utf-8")
    body = re.search(r"body \{[^}]*background: (#[0-9a-f]{6}|#fff)", css).group(1)
    return "#ffffff" if body == "#fff" else body


def test_the_formula_gives_wcags_reference_figures():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast_ratio("#ffffff", "#ffffff") == 1


def test_the_backgrounds_checked_are_those_the_pages_draw_on():
    """The page's (style.css) and the map's plot area and paper, which its scripts take from
    MAP_COLOURS in the page's data."""
    assert {_page_background(), MAP_COLOURS["plot"], MAP_COLOURS["paper"]} <= set(BACKGROUNDS)


def test_the_maps_scripts_hold_no_colour_of_their_own():
    """Every colour the map draws comes from Python (MAP_COLOURS and the topics' and venues'
    colours in the page's data), so none can drift from the palette the tests check."""
    literal = re.compile(r"#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?\b|rgba?\(")
    for name in MAP_SCRIPTS:
        script = (ASSETS_DIR / name).read_text(encoding="utf-8")
        assert literal.findall(script) == [], name
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in MAP_COLOURS.values())
    assert MAP_COLOURS["unassigned"] == topic_colour(-1)


@pytest.mark.parametrize("background", BACKGROUNDS)
def test_every_topic_and_venue_colour_keeps_3_to_1(background):
    weak = [c for c in PALETTE + VENUE_PALETTE if _wcag_contrast(c, background) < 3.0]
    assert weak == []
    assert len(set(PALETTE)) == len(PALETTE) >= 60  # distinct colours before they repeat
    assert topic_colour(0) == PALETTE[0] and topic_colour(len(PALETTE)) == PALETTE[0]


def test_light_colours_are_darkened_until_legible():
    assert legible("#1f77b4") == "#1f77b4"  # already legible: unchanged
    amber = legible("#f6f926")
    assert _wcag_contrast(amber, "#fbfbfc") >= 3.0
    assert _wcag_contrast(amber, "#fbfbfc") < 3.4  # no darker than it needs to be


def _lab(colour: str) -> tuple[float, float, float]:
    """CIELAB (D65) of a #rrggbb colour, for how far apart two colours look."""
    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    f = lambda c: c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4  # noqa: E731
    r, g, b = f(r), f(g), f(b)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    t = lambda u: u ** (1 / 3) if u > 0.008856 else 7.787 * u + 16 / 116  # noqa: E731
    return 116 * t(y) - 16, 500 * (t(x) - t(y)), 200 * (t(y) - t(z))


def test_eight_venues_get_eight_distinct_colours_none_grey():
    colours = [venue_colour(i) for i in range(len(VENUE_PALETTE))]
    assert len(colours) >= 8 and len(set(colours)) == len(colours)
    for i, first in enumerate(colours):
        assert math.hypot(*_lab(first)[1:]) > 25, first  # coloured, not a grey
        for second in colours[i + 1 :]:
            assert math.dist(_lab(first), _lab(second)) >= 20, (first, second)


def _hue(colour: str) -> float:
    return colorsys.rgb_to_hls(*(int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)))[0]


def _many_topics(n_topics: int, n_themes: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Topics -1, 0, 1, ... and the themes they are dealt into in turn (topic t in t % n_themes)."""
    dealt = [t % n_themes for t in range(n_topics)]
    topics = make.topics([-1, *range(n_topics)], themes=[-1, *dealt])
    return topics, make.themes_of(topics)


def test_up_to_the_palettes_size_topics_keep_their_own_colours():
    topics, themes = _many_topics(len(PALETTE), 10)
    colours = topic_colours(topics, themes)
    assert colours == {t: topic_colour(t) for t in topics["topic"]}
    assert topic_colours(*_many_topics(340, 20)[:1], None)[339] == topic_colour(339)


@pytest.mark.parametrize("background", BACKGROUNDS)
def test_with_more_topics_each_is_a_shade_of_its_themes_colour(background):
    topics, themes = _many_topics(340, 20)
    colours = topic_colours(topics, themes)
    assert colours[-1] == topic_colour(-1)  # the unassigned theme's topic keeps its own
    for row in themes[themes["theme"] >= 0].itertuples():
        own = [colours[t] for t in row.topics]
        assert len(set(own)) == len(own) == 17  # neighbours in a theme differ
        base = _hue(theme_colour(row.theme))
        for colour in own:
            assert _wcag_contrast(colour, background) >= 3.0
            assert abs(math.remainder(_hue(colour) - base, 1.0)) <= 0.05, (row.theme, colour)
    assert shades("#1f77b4", 1) == ["#1f77b4"] and shades("#1f77b4", 0) == []


@pytest.mark.parametrize("background", BACKGROUNDS)
def test_the_year_scale_keeps_3_to_1_and_darkens_to_the_oldest_year(background):
    years = list(range(1985, 2024))
    colours = year_colours(years)
    assert len(colours) == len(years) and len(set(colours)) == len(colours)
    assert all(_wcag_contrast(c, background) >= 3.0 for c in colours)
    lightness = [relative_luminance(c) for c in colours]
    assert lightness == sorted(lightness)  # sequential: each year lighter than the one before
    assert year_colours([2020, 2021, 2023]) == [
        year_colours([2020, 2021, 2022, 2023])[k] for k in (0, 1, 3)
    ]
    assert year_colours([]) == [] and len(year_colours([2021])) == 1
    assert (
        MAP_COLOURS["undated"] not in colours and math.hypot(*_lab(MAP_COLOURS["undated"])[1:]) < 5
    )

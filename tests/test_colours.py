"""The pages' colours: every topic and venue colour keeps 3:1 contrast (WCAG 2.1 non-text
contrast) against the backgrounds it is drawn on, read from the page assets."""

from __future__ import annotations

import re

import pytest

from pipeline.render import ASSETS_DIR
from pipeline.render.colours import (
    BACKGROUNDS,
    PALETTE,
    VENUE_PALETTE,
    contrast_ratio,
    legible,
    topic_colour,
)


def _wcag_contrast(a: str, b: str) -> float:
    """The WCAG 2.1 formula written out again, independently of the module's."""

    def luminance(colour: str) -> float:
        r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
        f = lambda c: c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4  # noqa: E731
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _page_backgrounds() -> set[str]:
    css = (ASSETS_DIR / "style.css").read_text(encoding="utf-8")
    script = (ASSETS_DIR / "map-draw.js").read_text(encoding="utf-8")  # the map's figure
    body = re.search(r"body \{[^}]*background: (#[0-9a-f]{6}|#fff)", css).group(1)
    plot = re.search(r'plot_bgcolor: "(#[0-9a-f]{6})"', script).group(1)
    return {"#ffffff" if body == "#fff" else body, plot}


def test_the_formula_gives_wcags_reference_figures():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast_ratio("#ffffff", "#ffffff") == 1


def test_the_backgrounds_checked_are_those_the_pages_draw_on():
    assert _page_backgrounds() <= set(BACKGROUNDS)


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

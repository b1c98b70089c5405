"""The pages' title and heading from the data (venues and years present) unless render.title
is set, the map link's words by the number of venues, and the years a filter offers."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.config import RenderConfig
from pipeline.labels import corpus_title, page_title, year_text
from pipeline.stages.render.venues_view import (
    paper_years,
    venue_layout,
    venues_link_text,
    year_span,
)
from tests.support.render_frames import rendered, tiny_tables


def _frame(venues: list[str], years: list[int | None]) -> pd.DataFrame:
    return pd.DataFrame({"venue": venues, "year": pd.array(years, dtype="Int32")})


@pytest.mark.parametrize(
    ("venues", "years", "title"),
    [
        (
            ["ICML", "ICLR"] * 3,
            [2020, 2021, 2022, 2023, 2025, 2025],
            "ICLR & ICML 2020–2025 topic map",
        ),
        (["ICML"], [2025], "ICML 2025 topic map"),
        (["ICML", "ICLR", "AISTATS"], [2023] * 3, "AISTATS, ICLR & ICML 2023 topic map"),
        ([f"V{i}" for i in range(8)], [2023] * 8, "8 venues, 2023 topic map"),
        (["ICML", "ICLR"], [None, None], "ICLR & ICML topic map"),
        (["ICML", "ICLR"], [2023, None], "ICLR & ICML 2023 topic map"),
    ],
)
def test_the_title_names_the_venues_and_years_present(venues, years, title):
    assert corpus_title(_frame(venues, years)) == title


def test_a_configured_title_wins_and_the_default_is_none():
    frame = _frame(["ICML"], [2025])
    assert RenderConfig().title is None
    assert page_title(None, frame) == page_title("", frame) == "ICML 2025 topic map"
    assert page_title("My map", frame) == "My map"


def test_the_pages_say_the_datas_title_unless_one_is_set():
    pages = rendered(tiny_tables())
    assert "<title>ICLR &amp; ICML 2025 topic map</title>" in pages["index.html"]
    html = [page for name, page in pages.items() if name.endswith(".html")]  # not the shards
    for page in html:
        assert "<h1>ICLR &amp; ICML 2025 topic map</h1>" in page
        assert "None" not in page.split("</head>")[0]
    pages = rendered(tiny_tables(), config=RenderConfig(title="Mine"))
    assert all("<h1>Mine</h1>" in p for name, p in pages.items() if name.endswith(".html"))


def test_link_words_and_year_span():
    assert venues_link_text(["ICML"]) == "The map"
    assert venues_link_text(["ICML", "ICLR"]) == "Venues side by side"
    assert venues_link_text([f"V{i}" for i in range(4)]) == "Venues as small multiples"
    assert year_text([]) == "" and year_text([2023]) == "2023"
    assert year_text([2025, 2020, 2021]) == "2020–2025"
    assert year_span(_frame(["A"] * 3, [2021, None, 2020])) == {"years": [2020, 2021], "undated": 1}


def test_the_maps_venue_layout_and_paper_years():
    assert venue_layout(["ICML"]) == "single"
    assert venue_layout(["ICML", "ICLR", "UAI"]) == "side_by_side"
    assert venue_layout([f"V{i}" for i in range(8)]) == "small_multiples"
    assert paper_years(_frame(["A", "B"], [2023, None])) == [2023, None]


def test_with_one_venue_the_report_links_the_map_without_promising_panels():
    index = rendered(tiny_tables(venues=["ICML"] * 5))["index.html"]
    assert "<strong>The map →</strong><span>the papers of ICML, coloured by topic</span>" in index
    assert "Venues side by side" not in index
    assert "<h1>ICML 2025 topic map</h1>" in index

"""tools/relabel_corpus.py: the many-venue corpora made from real papers (issue 33's checks)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.support.runs import load_tool

relabel_corpus = load_tool("relabel_corpus")


def _papers(n: int = 90) -> pd.DataFrame:
    """n papers on three subjects, so a venue by content has words to go by."""
    subjects = ["graph neural message passing", "diffusion image generation", "bandit regret"]
    return pd.DataFrame(
        {
            "id": [f"p{i}" for i in range(n)],
            "title": [f"On {subjects[i % 3]} {i}" for i in range(n)],
            "abstract": [
                f"We study {subjects[i % 3]} with method {i} and more words." for i in range(n)
            ],
            "year": 2020 + np.arange(n) % 4,
            "url": None,
        }
    )


def test_copies_get_new_ids_and_marked_titles_and_venues_name_their_year():
    rows = relabel_corpus.relabel(_papers(), n_venues=3, n_papers=200, seed=1)
    assert len(rows) == 200 and rows["id"].is_unique
    copies = rows[rows["id"].str.contains("-c")]
    assert len(copies) == 200 - 90 and copies["title"].str.contains(r"\[copy \d\]").all()
    names = rows["venue"].str.rsplit(" ", n=1)
    assert names.str[0].nunique() == 3
    assert (names.str[1].astype(int) == rows["year"]).all()


def test_years_drawn_from_a_span_and_the_same_seed_the_same_corpus():
    years = list(range(1985, 2024))
    first = relabel_corpus.relabel(_papers(), n_venues=2, years=years, seed=3)
    again = relabel_corpus.relabel(_papers(), n_venues=2, years=years, seed=3)
    pd.testing.assert_frame_equal(first, again)
    assert set(first["year"]) <= set(years) and first["year"].nunique() > 20

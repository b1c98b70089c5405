"""A corpus of mixed venue spellings and scripts, built by the real stages (real model, UMAP,
HDBSCAN, BERTopic) and opened in Chromium: one map panel and one report row per real venue,
the workshop papers their own group, years and tracks shown, and every Chinese, Japanese,
Russian and Arabic abstract kept and mapped."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import pipeline
from tests.support.browser_site import offline_pages
from tests.support.multilingual import ARABIC, CHINESE, JAPANESE, RUSSIAN
from tests.support.paths import ROOT
from tests.support.runs import write_config

MULTILINGUAL = CHINESE + JAPANESE + RUSSIAN + ARABIC
GROUPS = ["ICLR", "ICLR Workshop", "ICML", "NeurIPS"]
ICLR_FILE = "iclr2025_abstracts.txt"


def _abstracts(name: str) -> list[str]:
    lines = (ROOT / "data" / "raw" / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines[1:] if line.strip()]


@pytest.fixture(scope="module")
def mixed_build(tmp_path_factory):
    """The bundled ICML and ICLR abstracts under every spelling, plus the multilingual ones."""
    work = tmp_path_factory.mktemp("mixed")
    icml_a, icml_b = _abstracts("icml2025_abstracts_a.txt"), _abstracts("icml2025_abstracts_b.txt")
    (work / "icml.txt").write_text("icml 2025\n\n" + "\n\n".join(icml_a), encoding="utf-8")
    spellings = ["ICML 2025", "International Conference on Machine Learning", "ICML 2025 Spotlight"]
    pd.DataFrame(
        {"abstract": icml_b, "venue": [spellings[i % 3] for i in range(len(icml_b))]}
    ).to_csv(work / "icml.csv", index=False)
    iclr = ["ICLR 2025", "iclr2025", "ICLR 2025 Workshop"]
    rows = [{"abstract": a, "venue": iclr[i % 3]} for i, a in enumerate(_abstracts(ICLR_FILE))]
    rows += [
        {"abstract": a, "title": None, "venue": ["NeurIPS'24", "NIPS 2024"][i % 2]}
        for i, a in enumerate(MULTILINGUAL)
    ]
    (work / "papers.json").write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    inputs = [str(work / name) for name in ("icml.txt", "icml.csv", "papers.json")]
    config = write_config(work / "mixed.yaml", inputs, work / "out")
    return pipeline.build(config)


@pytest.mark.slow  # the real model, UMAP, HDBSCAN
def test_every_spelling_lands_in_one_venue_and_every_script_is_kept_and_mapped(mixed_build):
    documents, clusters = mixed_build.documents, mixed_build.clusters
    assert mixed_build.rejected.empty
    assert sorted(documents["venue"].unique()) == GROUPS
    workshop = documents[documents["venue"] == "ICLR Workshop"]
    assert set(workshop["conference"]) == {"ICLR"} and set(workshop["track"]) == {"Workshop"}
    icml = documents[documents["venue"] == "ICML"]
    assert set(icml["track"]) == {"", "Spotlight"}
    assert icml["year"].isna().sum() == 6  # "International Conference on Machine Learning"
    kept = documents[documents["abstract"].isin(MULTILINGUAL)]
    assert len(kept) == len(MULTILINGUAL) and set(kept["venue"]) == {"NeurIPS"}
    mapped = clusters[clusters["doc_id"].isin(kept["doc_id"])]
    assert len(mapped) == len(kept) and np.isfinite(mapped[["x", "y"]].to_numpy()).all()
    assert set(mixed_build.venue_topics["venue"]) == set(GROUPS)
    for terms in mixed_build.topics["terms"]:
        assert all(len(term) <= 40 for term in terms), terms  # no sentence as one "word"


@pytest.mark.slow
@pytest.mark.browser
def test_map_and_report_show_one_panel_and_one_row_per_real_venue(mixed_build, browser):
    documents = mixed_build.documents
    with offline_pages(browser) as open_page:
        state = open_page(mixed_build.map)
        page = state.page
        titles = page.evaluate(
            "[...document.querySelectorAll('#topic-map .annotation-text')]"
            ".map(a => a.textContent).filter(t => / papers$/.test(t))"
        )
        counts = documents["venue"].value_counts()
        assert titles == [f"{v}  {counts[v]} papers" for v in GROUPS]
        workshop = documents.index[documents["venue"] == "ICLR Workshop"][0]
        page.evaluate(
            "(id) => window.TopicMap.instance.select(window.TopicMap.instance.indexById.get(id))",
            documents["doc_id"][workshop],
        )
        assert page.text_content("#paper-meta").startswith("ICLR 2025 Workshop · ")
        assert state.errors == []

        report = open_page(mixed_build.report).page
        rows = report.evaluate(
            "[...document.querySelectorAll('#venues tbody tr')]"
            ".map(r => [...r.cells].map(c => c.textContent))"
        )
    assert [row[0] for row in rows] == GROUPS
    icml = rows[GROUPS.index("ICML")]
    main = ((documents["venue"] == "ICML") & (documents["track"] == "")).sum()
    assert icml[1:3] == ["2025 · 6 without a year", f"main {main} · Spotlight 6"]
    assert rows[GROUPS.index("ICLR Workshop")][1:3] == ["2025", ""]

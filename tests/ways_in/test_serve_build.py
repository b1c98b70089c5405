"""`topicmap serve` with the real model: on the bundled build, started as its own process on a
free local port, a paper's own abstract finds that paper first, an abstract is placed exactly
as `topicmap place` places it, bad requests get their 4xx and the server answers on, and the
build's folder is left as it was. And search by meaning finding what words miss: the 20
abstracts of ../shared/corpora rewritten without their titles' words
(tests/support/rewritten_abstracts.json), searched among 2,000 real papers embedded by the model,
find their own paper among the top 10 for at least 15."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import pytest

from tests.support.paths import ROOT
from tests.support.runs import run_cli
from tests.support.serving import request, serve_process

FIXTURE = ROOT / "tests/support/rewritten_abstracts.json"
CORPORA = ROOT.parent / "shared" / "corpora"
REWRITTEN = json.loads(FIXTURE.read_text(encoding="utf-8"))
ABSTRACT = (
    "We train a policy with reinforcement learning to route packets through a communication "
    "network, and it beats shortest-path routing on delay under heavy traffic."
)


def _snapshot(folder: Path) -> dict:
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.mark.slow  # needs the bundled build and the model
def test_the_bundled_build_served_searches_places_and_refuses(bundled_build, tmp_path):
    before = _snapshot(bundled_build)
    documents = pd.read_parquet(bundled_build / "documents.parquet")
    own = documents.loc[documents["abstract"].str.len().idxmin()]  # under the query's limit
    with serve_process("--dir", str(bundled_build)) as (base, _process):
        query = urlencode({"q": own["abstract"], "k": 5})
        status, answer = request(base, "GET", f"/api/search?{query}")
        assert status == 200, answer
        assert answer["results"][0]["doc_id"] == own["doc_id"]
        assert answer["results"][0]["similarity"] > 0.99  # embedded as the build embedded it
        status, placed = request(base, "POST", "/api/place", {"abstract": ABSTRACT, "k": 5})
        assert status == 200 and len(placed["neighbours"]) == 5
        for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd"):
            assert request(base, "GET", path)[0] == 404
        assert request(base, "POST", "/api/place", {"abstract": "x " * 10_001})[0] == 413
        assert request(base, "POST", "/api/place", {"title": "t"})[0] == 422
        bad = request(base, "POST", "/api/place", "{", {"Content-Type": "application/json"})
        assert bad[0] == 400
        assert request(base, "GET", "/api/search?q=contrastive&k=1")[0] == 200
        assert request(base, "GET", "/map.html")[0] == 200
    assert _snapshot(bundled_build) == before  # the server wrote nothing there
    # the same abstract through `topicmap place` (the same core): the same topic and place
    (tmp_path / "new.json").write_text(json.dumps([{"abstract": ABSTRACT}]), encoding="utf-8")
    config = bundled_build.parent / "bundled.yaml"
    out = tmp_path / "placed.csv"
    result = run_cli(
        "place", str(tmp_path / "new.json"), "--config", str(config), "--out", str(out)
    )
    assert result.returncode == 0, result.stderr[-2000:]
    row = pd.read_csv(out).iloc[0]
    assert (placed["doc_id"], placed["topic"], placed["topic_label"]) == (
        row["doc_id"],
        row["topic"],
        row["topic_label"],
    )
    for key in ("similarity", "x", "y"):
        assert placed[key] == pytest.approx(row[key], abs=1e-4)


def _title_words(title: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", title.lower()) if len(w) >= 4}


def test_the_rewritten_abstracts_use_none_of_their_titles_words():
    assert len(REWRITTEN) == 20 and len({r["id"] for r in REWRITTEN}) == 20
    for item in REWRITTEN:
        used = set(re.findall(r"[a-z0-9]+", item["rewrite"].lower()))
        assert not used & _title_words(item["title"]), (
            item["id"],
            used & _title_words(item["title"]),
        )
        assert len(item["rewrite"].split()) >= 40


def _papers(n_others: int) -> pd.DataFrame:
    """The 20 rewritten papers and `n_others` more of the same corpora (every file's first)."""
    frames = [pd.read_parquet(path) for path in sorted(CORPORA.glob("*.parquet"))]
    everything = pd.concat(frames, ignore_index=True)
    ids = {item["id"] for item in REWRITTEN}
    ours = everything[everything["id"].isin(ids)]
    assert len(ours) == 20, "the fixture's papers are in ../shared/corpora"
    per_file = n_others // len(frames) + 1
    others = pd.concat([f[~f["id"].isin(ids)].head(per_file) for f in frames]).head(n_others)
    return pd.concat([ours, others], ignore_index=True)


@pytest.mark.slow  # loads the model and embeds 2,000 papers (about two minutes on two cores)
def test_search_by_meaning_finds_what_words_miss(tmp_path):
    from pipeline import search
    from pipeline.config import parse_config
    from pipeline.neighbours import unit_rows
    from pipeline.serve.build import QueryEncoder
    from pipeline.stages.ingest import make_documents, read_file
    from pipeline.text import embedding_texts

    if not CORPORA.is_dir():
        pytest.skip(f"{CORPORA} is not here")
    config = parse_config({"inputs": ["corpora"], "embed": {"progress_bar": False}})
    _papers(1_980).drop(columns=["keywords", "primary_area"]).to_parquet(tmp_path / "c.parquet")
    records, _ = read_file(tmp_path / "c.parquet", config.ingest)
    documents, _ = make_documents(records, config.ingest)
    encoder = QueryEncoder(config)
    encoder.load()
    vectors = unit_rows(encoder(embedding_texts(documents)))
    found = {}
    for item in REWRITTEN:
        query = encoder([search.query_text(item["rewrite"], search.MAX_ABSTRACT_CHARS)])[0]
        top, _ = search.best_matches(vectors, query, 10)
        found[item["id"]] = item["id"] in documents["source_id"].to_numpy()[top].tolist()
    assert len(documents) >= 1_990
    assert sum(found.values()) >= 15, found
    assert np.isfinite(vectors).all()

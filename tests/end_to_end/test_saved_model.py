"""The saved topic model through Make, the console script and BERTopic: papers added to a built
corpus join the topics it has (every known paper unchanged), `make refit` fits anew, an
untrustworthy model stops the build with one line, `topicmap place` places any file's papers,
and the BERTopic export places the build's papers as the build did."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.stages.render.mapfiles import SHARD_DIR, shard_path
from pipeline.text import embedding_texts
from tests.support.map_files import map_papers
from tests.support.paths import ROOT
from tests.support.runs import run_make, write_config

pytestmark = pytest.mark.slow

NEW = [
    "Diffusion language models generate text by iteratively denoising masked tokens; we study "
    "their sampling speed and propose a schedule that halves the number of denoising steps.",
    "We prove regret bounds for contextual bandits with linear payoffs under heavy-tailed noise "
    "and give an algorithm whose regret matches the lower bound up to logarithmic factors.",
    "Graph neural networks over-smooth node features as depth grows; a residual normalisation "
    "keeps them apart and lets sixty-layer message passing networks train stably.",
]


@pytest.fixture
def grown(bundled_build: Path, tmp_path: Path):
    """A copy of the bundled build and a config whose inputs gained three papers."""
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)  # keeps the modification times Make compares
    extra = tmp_path / "new.txt"
    extra.write_text("ICLR 2026 Papers\n\n" + "\n\n".join(NEW) + "\n", encoding="utf-8")
    config = write_config(tmp_path / "c.yaml", [str(ROOT / "data/raw/*.txt"), str(extra)], out)
    return out, config, extra


def _clusters(folder: Path) -> pd.DataFrame:
    return tables.read_table(folder / "clusters.parquet", schemas.CLUSTERS)


def test_added_papers_join_the_saved_model_and_nothing_else_moves(bundled_build, grown):
    """The three papers are placed into the saved model; the pool they form with the build's
    unassigned papers may give new topics (emerge.py), which only those papers join: every
    paper that had a topic keeps its row, every earlier paper its position, every earlier
    topic its label."""
    out, config, _ = grown
    result = run_make("all", f"CONFIG={config}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "3 new papers placed into the saved model" in result.stderr
    before, after = _clusters(bundled_build), _clusters(out)
    known = after[after["doc_id"].isin(before["doc_id"])].reset_index(drop=True)
    had_topic = (before["topic"] >= 0).to_numpy()
    pd.testing.assert_frame_equal(known[had_topic], before[had_topic])  # identical rows
    assert np.array_equal(known[["x", "y"]].to_numpy(), before[["x", "y"]].to_numpy())
    topics_before = tables.read_table(bundled_build / "topics.parquet", schemas.TOPICS)
    topics_after = tables.read_table(out / "topics.parquet", schemas.TOPICS)
    born = set(topics_after["topic"]) - set(topics_before["topic"])
    joined = known.loc[~had_topic, "topic"]
    assert set(joined) <= born | {-1}  # unassigned papers join only a topic born now
    assert born == set() or "new topics" in result.stderr
    assert min(born, default=topics_before["topic"].max() + 1) > topics_before["topic"].max()
    added = after[~after["doc_id"].isin(before["doc_id"])]
    assert len(added) == 3
    assert set(added.loc[~added["topic"].isin(born), "placed"]) <= {"added"}
    labels_before = dict(zip(topics_before["topic"], topics_before["label"], strict=True))
    labels_after = dict(zip(topics_after["topic"], topics_after["label"], strict=True))
    assert all(labels_after[t] == label for t, label in labels_before.items() if t >= 0)
    assert topics_after["size"].sum() == topics_before["size"].sum() + 3
    if not born:
        assert "labels kept" in result.stderr and "BERTopic model kept" in result.stderr
    _says_what_changed(out, bundled_build, born)
    _shards_rewritten_only_where_they_change(bundled_build, out)
    assert run_make("-q", "all", f"CONFIG={config}").returncode == 0  # and then up to date

    refit = run_make("refit", f"CONFIG={config}")
    assert refit.returncode == 0, refit.stderr[-3000:]
    assert "fitting a topic model: asked for" in refit.stderr
    assert set(_clusters(out)["placed"]) == {"fit"}


def _map_files(folder: Path) -> dict[str, str]:
    names = ["map.html", *(f"{SHARD_DIR}/{p.name}" for p in (folder / SHARD_DIR).iterdir())]
    return {name: (folder / name).read_text(encoding="utf-8") for name in names}


def _shards_rewritten_only_where_they_change(before: Path, out: Path) -> None:
    """The earlier papers keep their places in the map (the added ones come after them), and a
    text shard differs from the earlier build's only where it holds an added paper, a paper
    whose topic changed, another set of papers, or a paper whose similar papers name an added
    one."""
    old, new = map_papers(_map_files(before)), map_papers(_map_files(out))
    n = len(old["id"])
    assert new["id"][:n] == old["id"] and len(new["id"]) == n + 3

    def members(papers: dict, shard: int) -> list[str]:
        return [i for i, s in zip(papers["id"], papers["shard"], strict=True) if s == shard]

    expected = {s for s in set(new["shard"]) if members(new, s) != members(old, s)}
    for i, shard in enumerate(new["shard"]):
        if i >= n or max(new["nn"][i]) >= n or new["topic"][i] != old["topic"][i]:
            expected.add(shard)
    rewritten = {
        number
        for number in set(new["shard"])
        if not (before / shard_path(number)).exists()
        or (before / shard_path(number)).read_bytes() != (out / shard_path(number)).read_bytes()
    }
    assert rewritten and rewritten <= expected


def _says_what_changed(out: Path, before: Path, born: set[int]) -> None:
    """The report counts the three papers added since the fit whatever topic they joined, and
    its "What changed" lists each topic born with a link to it on the map; the snapshots of
    the fit and the previous build are the bundled build's topics."""
    page = (out / "index.html").read_text(encoding="utf-8")
    note = re.search(r'<p class="note" id="fit-note">(.*?)</p>', page, flags=re.S).group(1)
    assert "3 papers added since" in note
    assert ("born since" in note) == bool(born)
    section = re.search(r'<section id="changes">(.*?)</section>', page, flags=re.S).group(1)
    listed = re.findall(r'<li class="born">.*?href="map\.html#topic=(\d+)"', section)
    assert {int(t) for t in listed} == born
    assert '<li class="added">3 papers added</li>' in section
    assert '<h3 id="latest-year">In 2026, against 2025</h3>' in page  # the new papers' year
    snapshots = tables.read_table(out / "model" / "snapshots.parquet", schemas.TOPIC_SNAPSHOTS)
    papers = _clusters(before)["topic"].value_counts()
    for kind in ("fit", "build"):
        rows = snapshots[snapshots["snapshot"] == kind]
        assert dict(zip(rows["topic"], rows["papers"], strict=True)) == papers.to_dict(), kind


def test_an_untrustworthy_model_stops_the_build_with_one_line(grown):
    out, config, _ = grown
    (out / "model" / "papers.parquet").unlink()
    before = (out / "clusters.parquet").read_bytes()
    result = run_make("all", f"CONFIG={config}")
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.stderr
    assert "model" in errors[0] and "make refit" in errors[0]
    assert (out / "clusters.parquet").read_bytes() == before  # the previous outputs stay


def test_topicmap_assign_places_a_files_papers_without_touching_the_build(grown, tmp_path):
    out, config, extra = grown
    before = {p.name: p.stat().st_mtime for p in out.iterdir()}
    table_path = tmp_path / "placed.csv"
    script = Path(sys.executable).parent / "topicmap"
    result = subprocess.run(
        [str(script), "place", str(extra), "--config", str(config), "--out", str(table_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    placed = pd.read_csv(table_path)
    assert list(placed.columns) == [
        "doc_id",
        "title",
        "topic",
        "topic_label",
        "theme",
        "theme_label",
        "similarity",
        "x",
        "y",
    ]
    assert len(placed) == 3 and placed["topic_label"].notna().all()
    assert {p.name: p.stat().st_mtime for p in out.iterdir()} == before
    other = write_config(
        tmp_path / "other.yaml", [str(extra)], out, "cluster:\n  outlier_threshold: 0.3"
    )
    refused = subprocess.run(
        [str(script), "place", str(extra), "--config", str(other)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert refused.returncode == 1
    assert "fitted with other settings (cluster.outlier_threshold)" in refused.stderr


def test_the_bertopic_export_places_the_build_papers_as_the_build_did(bundled_build):
    from bertopic import BERTopic

    model = BERTopic.load(str(bundled_build / "bertopic"))
    documents = tables.read_table(bundled_build / "documents.parquet", schemas.DOCUMENTS)
    clusters = _clusters(bundled_build)
    predicted, _ = model.transform(embedding_texts(documents))
    agreement = (np.asarray(predicted) == clusters["topic"].to_numpy()).mean()
    assert agreement >= 0.97, agreement  # 76 papers: at most two differ
    info = model.get_topic_info()
    topics = tables.read_table(bundled_build / "topics.parquet", schemas.TOPICS)
    assert info["CustomName"].tolist() == topics["label"].tolist()
    assert info["Count"].tolist() == topics["size"].tolist()
    assert [list(r) for r in info["Representation"]] == [list(t) for t in topics["terms"]]

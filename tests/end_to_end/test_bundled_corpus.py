"""The real stack end to end: `make all` on the bundled corpus with the real MiniLM model,
UMAP, HDBSCAN and BERTopic, then the properties a user relies on."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from tests.support.paths import CORPORA
from tests.support.runs import bundled_config, run_cli, run_make, write_config

pytestmark = pytest.mark.slow

STAGE_FILES = [
    "documents.parquet",
    "embeddings.parquet",
    "clusters.parquet",
    "topics.parquet",
    "themes.parquet",
    "venue_topics.parquet",
]


def test_build_leaves_every_stage_file(bundled_build: Path):
    for name in [
        *STAGE_FILES,
        "rejected.parquet",
        "metrics.json",
        "index.html",
        "map.html",
        "topic_info.csv",
        "document_info.csv",
        "rejected.csv",
    ]:
        assert (bundled_build / name).stat().st_size > 0, name
    assert not list(bundled_build.glob("*.tmp")), "temporary files left behind"


def test_every_bundled_abstract_is_clustered_by_venue(bundled_build: Path):
    documents = tables.read_table(bundled_build / "documents.parquet", schemas.DOCUMENTS)
    clusters = tables.read_table(bundled_build / "clusters.parquet", schemas.CLUSTERS)
    rejected = tables.read_table(bundled_build / "rejected.parquet", schemas.REJECTED)
    assert rejected.empty
    assert len(clusters) == 76 and clusters["doc_id"].is_unique
    merged = clusters.merge(documents, on="doc_id", validate="one_to_one")
    assert merged["venue"].value_counts().to_dict() == {"ICML": 57, "ICLR": 19}
    assert set(merged["year"]) == {2025}
    assert np.isfinite(merged[["x", "y"]].to_numpy()).all()


def test_real_embeddings_are_unit_minilm_vectors(bundled_build: Path):
    documents = tables.read_table(bundled_build / "documents.parquet", schemas.DOCUMENTS)
    doc_ids, vectors = tables.read_embeddings(bundled_build / "embeddings.parquet", width=384)
    assert doc_ids == documents["doc_id"].tolist()
    assert vectors.dtype == np.float32 and vectors.shape == (76, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # Real semantic vectors: abstracts about Wasserstein distances sit nearer each other than
    # the average pair of papers does.
    similarity = vectors @ vectors.T
    ot = np.flatnonzero(documents["abstract"].str.contains("Wasserstein").to_numpy())
    assert len(ot) >= 2
    ot_pairs = similarity[np.ix_(ot, ot)][np.triu_indices(len(ot), 1)]
    all_pairs = similarity[np.triu_indices(76, 1)]
    assert ot_pairs.mean() > all_pairs.mean() + 0.15


def test_bundled_corpus_gives_several_labelled_topics(bundled_build: Path):
    topics = tables.read_table(bundled_build / "topics.parquet", schemas.TOPICS)
    clusters = tables.read_table(bundled_build / "clusters.parquet", schemas.CLUSTERS)
    assigned = topics[topics["topic"] >= 0]
    assert 3 <= len(assigned) <= 12
    assert assigned["label"].is_unique and assigned["label"].str.len().gt(0).all()
    assert topics["size"].sum() == 76
    venues = tables.read_table(bundled_build / "venue_topics.parquet", schemas.VENUE_TOPICS)
    counts = venues[venues["level"] == "topic"].groupby("id")["count"].sum()
    assert counts.to_dict() == dict(zip(topics["topic"], topics["size"], strict=True))
    assert (clusters["topic"] == -1).mean() < 0.25
    for terms in assigned["terms"]:
        assert len(terms) >= 3 and "the" not in terms
    # with the real model's KeyBERT + MMR reranking, each term keeps its c-TF-IDF weight
    for terms, weights in zip(assigned["terms"], assigned["term_weights"], strict=True):
        assert len(weights) == len(terms) and all(w > 0 for w in weights)


def test_second_make_is_a_no_op(bundled_build: Path):
    config = bundled_build.parent / "bundled.yaml"
    assert run_make("-q", "all", f"CONFIG={config}").returncode == 0
    again = run_make("all", f"CONFIG={config}")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout


def test_rebuilding_clusters_gives_identical_topics(bundled_build: Path, tmp_path: Path):
    config = bundled_build.parent / "bundled.yaml"
    out = tmp_path / "clusters.parquet"
    result = run_cli(
        "cluster",
        "--config",
        str(config),
        "--documents",
        str(bundled_build / "documents.parquet"),
        "--embeddings",
        str(bundled_build / "embeddings.parquet"),
        "--clusters",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    first = tables.read_table(bundled_build / "clusters.parquet", schemas.CLUSTERS)
    second = tables.read_table(out, schemas.CLUSTERS)
    pd.testing.assert_frame_equal(first, second)


@pytest.mark.parametrize(
    ("setting", "first_stage"),
    [("render:\n  title: Another title", "render"), ("label:\n  n_terms: 7", "label")],
)
def test_a_setting_reruns_its_stage_and_those_after_only(
    bundled_build: Path, tmp_path: Path, setting: str, first_stage: str
):
    """Change one section in a copy of the build: Make plans that stage and later ones alone."""
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)  # copy2 keeps the modification times Make compares
    config = bundled_config(tmp_path / "copy.yaml", bundled_build, out, setting)
    plan = run_make("-n", "all", f"CONFIG={config}")
    assert plan.returncode == 0, plan.stderr
    planned = [
        line.split("-m pipeline ")[1].split()[0]
        for line in plan.stdout.splitlines()
        if "-m pipeline " in line
    ]
    # makevars refreshes the stamps (it runs because the config file is new)
    planned = [stage for stage in planned if stage != "makevars"]
    order = ["ingest", "embed", "cluster", "label", "render"]
    earlier = order[: order.index(first_stage)]
    assert planned and planned[0] == first_stage, plan.stdout
    assert not set(planned) & set(earlier), plan.stdout
    if first_stage == "render":
        assert planned == ["render"], plan.stdout


@pytest.mark.skipif(not CORPORA.exists(), reason="../shared/corpora is not present")
def test_real_corpora_ingest_all_3401_papers(tmp_path: Path):
    config = write_config(
        tmp_path / "corpora.yaml",
        [str(CORPORA / "iclr2023.parquet"), str(CORPORA / "icml2023.parquet")],
        tmp_path / "out",
    )
    result = run_cli(
        "ingest",
        "--config",
        str(config),
        "--documents",
        str(tmp_path / "out/documents.parquet"),
        "--rejected",
        str(tmp_path / "out/rejected.parquet"),
    )
    assert result.returncode == 0, result.stderr
    assert "total: read 3401 = kept 3401 + rejected 0" in result.stderr
    documents = tables.read_table(tmp_path / "out/documents.parquet", schemas.DOCUMENTS)
    assert documents["venue"].value_counts().to_dict() == {"ICML": 1828, "ICLR": 1573}
    assert documents["title"].notna().all() and documents["url"].notna().all()
    assert documents["doc_id"].is_unique

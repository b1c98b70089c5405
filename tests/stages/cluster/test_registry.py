"""The topic registry: new topics among added papers without a refit (emergence), the registry
saved with the model and read back, and a registry or model folder that cannot be trusted
refused with one line."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.config import ClusterConfig
from pipeline.errors import PipelineError
from pipeline.stages.cluster import emerge, make_clusters
from pipeline.stages.cluster import model as models
from pipeline.stages.cluster import registry as registries
from tests.support import tables as make

pytestmark = pytest.mark.slow  # real UMAP + HDBSCAN fits

SIZES = (60, 45, 35, 20)


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _corpus(n_new: int, seed: int = 0):
    """Four blobs fitted, then `n_new` papers of a fifth blob far from them."""
    rng = np.random.default_rng(seed)
    centres = _unit(rng.normal(size=(5, 384)))
    truth = np.repeat(np.arange(5), (*SIZES, n_new))
    vectors = _unit(centres[truth] + rng.normal(scale=0.05, size=(len(truth), 384)))
    ids = [f"p{i:04d}" for i in range(len(truth))]
    documents = make.documents([f"paper {i}" for i in range(len(truth))], doc_ids=ids)
    return documents, vectors, truth


@pytest.fixture(scope="module")
def built():
    documents, vectors, truth = _corpus(25)
    old = truth < 4
    first = make_clusters(documents[old], vectors[old], ClusterConfig(), "enc")
    config = ClusterConfig(refit_share=0.5)
    grown = make_clusters(documents, vectors, config, "enc", first.model, first.clusters)
    return documents, vectors, truth, first, grown


def test_a_new_area_becomes_a_topic_with_the_next_number_and_nothing_earlier_moves(built):
    _, _, truth, first, grown = built
    assert not grown.refitted and grown.changed
    topics = grown.clusters["topic"].to_numpy()
    assert set(topics[truth == 4]) == {4}  # the next number after 0-3
    known = grown.clusters.iloc[: len(first.clusters)].reset_index(drop=True)
    pd.testing.assert_frame_equal(known, first.clusters)  # topics, positions: identical
    registry = grown.model.registry
    assert registry.set_index("topic").loc[4, ["status", "made"]].tolist() == ["active", "emerged"]
    assert registry.set_index("topic").loc[4, "made_in"] == grown.model.fit_id
    # drawn as an island of its own, not on top of the topic placing put it beside
    new = grown.clusters[truth == 4][["x", "y"]].to_numpy()
    assert np.linalg.norm(new - new.mean(axis=0), axis=1).mean() > 0


def test_new_papers_near_an_existing_topic_make_no_topic(caplog):
    documents, vectors, truth = _corpus(0)
    first = make_clusters(documents, vectors, ClusterConfig(), "enc")
    more, more_vectors, _ = _corpus(0, seed=0)
    rng = np.random.default_rng(5)
    extra = _unit(vectors[truth == 0][:12] + rng.normal(scale=0.05, size=(12, 384)))
    grown_docs = pd.concat(
        [
            documents,
            make.documents([f"x{i}" for i in range(12)], doc_ids=[f"x{i}" for i in range(12)]),
        ],
        ignore_index=True,
    )
    with caplog.at_level(logging.INFO, "pipeline.cluster"):
        grown = make_clusters(
            grown_docs,
            np.vstack([vectors, extra]),
            ClusterConfig(refit_share=0.5),
            "enc",
            first.model,
            first.clusters,
        )
    assert not grown.changed and set(grown.clusters["topic"].iloc[-12:]) == {0}
    assert "no new topic" in caplog.text or "nearer to existing topics' papers" in caplog.text


def test_near_is_measured_on_the_topics_centres():
    centres = _unit(np.array([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    nearest = np.sort((centres @ centres.T - 2 * np.eye(4)).max(axis=1))
    assert emerge.near_threshold(centres) == pytest.approx(np.percentile(nearest, 95))
    assert emerge.near_threshold(centres[:1]) == 1.0  # one topic: nothing is near


def test_a_pool_too_small_is_not_an_error(caplog):
    vectors = _unit(np.random.default_rng(0).normal(size=(6, 384)))
    with caplog.at_level(logging.INFO, "pipeline.cluster"):
        existing = emerge.Existing(vectors[:2], vectors[:2], 0.42)
        found = emerge.find_topics(vectors, np.arange(6), ClusterConfig(), existing, 7, 5)
    assert found.numbers == [] and (found.topics == -1).all()
    assert "too few to cluster" in caplog.text


def test_the_registry_is_saved_with_the_model_and_read_back(built, tmp_path):
    *_, grown = built
    models.save(grown.model, tmp_path / "model")
    loaded = models.load(tmp_path / "model")
    assert loaded.fit_id == grown.model.fit_id
    plain = ["topic", "status", "made", "made_in", "change", "changed_in", "size", "label"]
    pd.testing.assert_frame_equal(
        loaded.registry[plain], grown.model.registry[plain], check_dtype=False
    )
    assert [list(p) for p in loaded.registry["parents"]] == [
        list(p) for p in grown.model.registry["parents"]
    ]
    assert np.allclose(
        np.stack(loaded.registry["centre"]), np.stack(grown.model.registry["centre"])
    )


def test_a_registry_of_another_model_or_version_or_edited_by_hand_is_refused(built, tmp_path):
    *_, first, grown = built
    models.save(first.model, tmp_path / "a")
    models.save(grown.model, tmp_path / "b")
    registry = tmp_path / "b" / "registry.parquet"
    (tmp_path / "a" / "registry.parquet").replace(registry)  # another model's registry
    with pytest.raises(PipelineError, match=r"registry\.parquet: the topic registry of another"):
        models.load(tmp_path / "b")
    models.save(grown.model, tmp_path / "b")
    table = tables.read_table(registry, schemas.TOPIC_REGISTRY)
    notes = {**registries.notes(grown.model), "format": "0"}
    tables.write_table(table, registry, schemas.TOPIC_REGISTRY, notes=notes)
    with pytest.raises(PipelineError, match="another version of the project: run `make refit`"):
        models.load(tmp_path / "b")
    models.save(grown.model, tmp_path / "b")
    table.loc[0, "label"] = "mine"  # a hand edit that keeps the registry well-formed
    tables.write_table(table, registry, schemas.TOPIC_REGISTRY, notes=registries.notes(grown.model))
    with pytest.raises(PipelineError, match="edited by hand.*make refit"):
        models.load(tmp_path / "b")

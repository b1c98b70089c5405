"""The saved topic model: fitted once (on a stratified sample for large corpora), saved as
tables, new papers placed into it as the fit placed its own, refitted when it no longer fits,
and refused with one line when it is partial, foreign or from other versions."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.config import ClusterConfig, EngineConfig
from pipeline.errors import PipelineError
from pipeline.stages.cluster import fit_model, make_clusters, read_saved, sample_settings
from pipeline.stages.cluster import model as models
from pipeline.stages.cluster.place import place, place_in_chunks
from pipeline.stages.cluster.sample import stratified_sample
from tests.support import tables as make
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # real UMAP + HDBSCAN fits

ENCODER = "test encoder"
SIZES = (60, 45, 35, 20)  # blobs, unequal so that topics are numbered by size


def _blobs(n_per=SIZES, seed=0, noise=0.05):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(len(SIZES), 384))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    truth = np.repeat(np.arange(len(n_per)), n_per)
    vectors = centres[truth] + rng.normal(scale=noise, size=(len(truth), 384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    n = len(truth)
    documents = make.documents(
        [f"paper {i} of blob {t}" for i, t in enumerate(truth)],
        doc_ids=[f"s{seed}-{i:04d}" for i in range(n)],
        venues=np.where(np.arange(n) % 3 == 0, "ICLR", "ICML"),
        years=2020 + np.arange(n) % 2,
    )
    return documents, vectors.astype(np.float32), truth, centres


@pytest.fixture(scope="module")
def fitted():
    documents, vectors, truth, centres = _blobs()
    result = make_clusters(documents, vectors, ClusterConfig(), ENCODER)
    return documents, vectors, truth, centres, result


def test_a_fit_places_its_own_papers_again(fitted):
    documents, vectors, _, _, result = fitted
    assert result.refitted and set(result.clusters["placed"]) == {"fit"}
    placed = place(result.model, vectors)
    assert (placed.topics == result.clusters["topic"].to_numpy()).all()  # the fit's own rule
    own = result.clusters["similarity"].to_numpy()
    assert np.allclose(placed.similarity, own, atol=1e-5)
    assert (own > 0.5).mean() > 0.9  # tight blobs: papers are close to their topic's centre


def test_placing_in_chunks_places_each_paper_as_placing_them_all_at_once(fitted):
    """The local and the Ray engine place papers a chunk at a time: no paper's topic or position
    depends on the others in its chunk."""
    _, vectors, _, _, result = fitted
    whole = place(result.model, vectors)
    chunked = place_in_chunks(result.model, vectors, EngineConfig(shard_papers=7))
    np.testing.assert_array_equal(chunked.topics, whole.topics)
    np.testing.assert_allclose(chunked.similarity, whole.similarity, atol=1e-6)
    np.testing.assert_allclose(chunked.coords, whole.coords, atol=1e-5)
    assert len(place_in_chunks(result.model, vectors[:0], EngineConfig()).topics) == 0


@pytest.mark.ray
@pytest.mark.parametrize("workers", [1, 2])
def test_placing_on_ray_is_placing_here_bit_for_bit(fitted, monkeypatch, workers):
    """On a real local Ray instance, 1 or 2 actors holding the model: the same placements."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # Ray's workers import this checkout
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    _, vectors, _, _, result = fitted
    here = place_in_chunks(result.model, vectors, EngineConfig(shard_papers=16))
    engine = EngineConfig(kind="ray", concurrency=workers, shard_papers=16)
    on_ray = place_in_chunks(result.model, vectors, engine)
    for field in ("topics", "similarity", "coords"):
        np.testing.assert_array_equal(getattr(on_ray, field), getattr(here, field))


def test_new_papers_join_the_right_topic_and_sit_among_it(fitted):
    documents, vectors, truth, centres, result = fitted
    new_docs, new_vectors, new_truth, _ = _blobs(n_per=(5, 5, 5, 5), seed=1)
    # the same centres: new papers of known topics
    rng = np.random.default_rng(5)
    new_vectors = centres[new_truth] + rng.normal(scale=0.05, size=new_vectors.shape)
    new_vectors /= np.linalg.norm(new_vectors, axis=1, keepdims=True)
    placed = place(result.model, new_vectors.astype(np.float32))
    topic_of_blob = (
        pd.Series(result.clusters["topic"].to_numpy()).groupby(truth).agg(lambda t: t.mode()[0])
    )
    assert (placed.topics == topic_of_blob[new_truth].to_numpy()).all()
    coords = result.clusters[["x", "y"]].to_numpy()
    for paper, topic in enumerate(placed.topics):  # drawn inside its topic's region
        members = coords[result.clusters["topic"].to_numpy() == topic]
        low, high = members.min(axis=0), members.max(axis=0)
        assert ((placed.coords[paper] >= low) & (placed.coords[paper] <= high)).all()
    far = np.random.default_rng(9).normal(size=(3, 384)).astype(np.float32)
    far /= np.linalg.norm(far, axis=1, keepdims=True)
    assert (place(result.model, far).topics == -1).all()  # like nothing fitted: unassigned


def test_model_round_trips_through_its_folder(fitted, tmp_path):
    *_, result = fitted
    models.save(result.model, tmp_path / "model")
    loaded = models.load(tmp_path / "model")
    assert loaded.fit_id == result.model.fit_id and loaded.doc_ids == result.model.doc_ids
    assert np.array_equal(loaded.vectors, result.model.vectors)
    assert np.array_equal(loaded.coords, result.model.coords)
    assert loaded.fitted_at == result.model.fitted_at
    assert np.array_equal(loaded.weights, result.model.weights)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # no work folder left


def _extended(fitted, new_docs, new_vectors, **config):
    documents, vectors, _, _, result = fitted
    grown = pd.concat([documents, new_docs], ignore_index=True)
    both = np.vstack([vectors, new_vectors])
    return make_clusters(
        grown, both, ClusterConfig(**config), ENCODER, result.model, result.clusters
    )


def test_added_papers_keep_every_known_paper_as_it_was(fitted):
    *_, centres, result = fitted
    new_docs, new_vectors, new_truth, _ = _blobs(n_per=(3, 3, 2, 2), seed=2)
    new_vectors = centres[new_truth] + 0.05 * new_vectors
    new_vectors = (new_vectors / np.linalg.norm(new_vectors, axis=1, keepdims=True)).astype(
        np.float32
    )
    grown = _extended(fitted, new_docs, new_vectors)
    assert not grown.refitted and grown.model is result.model
    known = grown.clusters.iloc[: len(result.clusters)].reset_index(drop=True)
    pd.testing.assert_frame_equal(known, result.clusters)  # byte-identical rows
    added = grown.clusters.iloc[len(result.clusters) :]
    assert set(added["placed"]) == {"added"} and (added["topic"] >= 0).all()


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("settings", "cluster settings changed (cluster.outlier_threshold)"),
        ("many", "papers were added since the fit"),
        ("far", "new papers fit no topic"),
    ],
)
def test_the_model_is_refitted_when_it_no_longer_fits(fitted, caplog, case, expected):
    new_docs, new_vectors, *_ = _blobs(n_per=(25, 25, 0, 0), seed=3)
    config = {"outlier_threshold": 0.45} if case == "settings" else {}
    if case == "far":
        new_vectors = np.random.default_rng(4).normal(size=new_vectors.shape).astype(np.float32)
        new_vectors /= np.linalg.norm(new_vectors, axis=1, keepdims=True)
        config = {"refit_share": 0.5}
    elif case != "many":
        new_docs, new_vectors = new_docs.iloc[:2], new_vectors[:2]
    with caplog.at_level("INFO", logger="pipeline.cluster"):
        result = _extended(fitted, new_docs, new_vectors, **config)
    assert result.refitted and set(result.clusters["placed"]) == {"fit"}
    assert expected in caplog.text


def test_removed_papers_refit(fitted, caplog):
    documents, vectors, _, _, result = fitted
    with caplog.at_level("INFO", logger="pipeline.cluster"):
        again = make_clusters(
            documents.iloc[5:],
            vectors[5:],
            ClusterConfig(),
            ENCODER,
            result.model,
            result.clusters,
        )
    assert again.refitted and "5 papers were removed since the fit" in caplog.text


def test_large_corpora_are_fitted_on_a_stratified_sample_and_the_rest_assigned():
    documents, vectors, truth, _ = _blobs()
    config = ClusterConfig(fit_max_papers=100)
    result = make_clusters(documents, vectors, config, ENCODER)
    placed = result.clusters["placed"].value_counts().to_dict()
    assert placed == {"fit": 100, "assigned": len(documents) - 100}
    assert len(result.model.doc_ids) == 100 and result.model.papers_at_fit == len(documents)
    assigned = result.clusters["placed"].eq("assigned").to_numpy()
    topics = result.clusters["topic"].to_numpy()
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(truth, topics) > 0.95
    assert (topics[assigned] >= 0).mean() > 0.95


def test_a_sample_fit_can_be_given_the_papers_it_fits():
    documents, vectors, truth, _ = _blobs()
    rows = np.arange(1, len(documents), 2)  # every other paper, not the stratified sample
    result = fit_model(documents, vectors, ClusterConfig(), ENCODER, rows=rows)
    fitted = result.clusters["placed"].eq("fit").to_numpy()
    assert np.array_equal(np.flatnonzero(fitted), rows)
    assert result.clusters["doc_id"].tolist() == documents["doc_id"].tolist()
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(truth, result.clusters["topic"]) > 0.95


@pytest.mark.parametrize(
    ("n_corpus", "sizes"),
    [(100_000, (40, 20)), (1_000_000, (28, 14))],
)
def test_a_sample_is_fitted_with_sizes_scaled_by_the_root_of_its_share(n_corpus, sizes):
    """Auto sizes of the whole corpus (1M papers: 126 / 63) times sqrt(50,000 / n): a million
    papers fitted on 50,000 get clusters of 28, not the 6 that the share itself would give."""
    config = ClusterConfig()
    scaled = sample_settings(config, 50_000, n_corpus)
    assert (scaled.min_cluster_size, scaled.min_samples) == sizes
    fixed = sample_settings(config.model_copy(update={"min_cluster_size": 100}), 25_000, 100_000)
    assert fixed.min_cluster_size == 50
    assert sample_settings(config, 50_000, 50_000) is config


def test_the_sample_is_stratified_and_the_same_for_the_same_papers():
    documents = make.documents(
        doc_ids=[f"d{i}" for i in range(1000)],
        venues=["ICML"] * 600 + ["ICLR"] * 400,
        years=[2020, 2021] * 500,
    )
    rows = stratified_sample(documents, 100)
    assert len(rows) == 100
    chosen = documents.iloc[rows]
    assert chosen.groupby(["venue", "year"]).size().to_dict() == {
        ("ICLR", 2020): 20,
        ("ICLR", 2021): 20,
        ("ICML", 2020): 30,
        ("ICML", 2021): 30,
    }
    shuffled = documents.sample(frac=1, random_state=1).reset_index(drop=True)
    again = shuffled.iloc[stratified_sample(shuffled, 100)]
    assert set(again["doc_id"]) == set(chosen["doc_id"])
    assert (stratified_sample(documents, 5000) == np.arange(1000)).all()


# --- the saved model on disk: refused with one line when it cannot be trusted --------------


@pytest.fixture
def saved(fitted, tmp_path):
    *_, result = fitted
    folder = tmp_path / "model"
    models.save(result.model, folder)
    clusters = tmp_path / "clusters.parquet"
    notes = {k: str(v) for k, v in result.model.summary().items()}
    tables.write_table(result.clusters, clusters, schemas.CLUSTERS, notes=notes)
    return folder, clusters


def test_a_saved_model_and_its_clusters_are_read_back(saved):
    folder, clusters = saved
    model, previous = read_saved(folder, clusters, ENCODER)
    assert model.fit_id == models.load(folder).fit_id and len(previous) == sum(SIZES)


def _break(folder, clusters, how):
    if how == "partial":
        (folder / "papers.parquet").unlink()
    elif how == "missing":
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    elif how == "versions":
        manifest = json.loads((folder / "fit.json").read_text())
        manifest["versions"]["umap-learn"] = "0.4.0"
        (folder / "fit.json").write_text(json.dumps(manifest))
    elif how == "foreign":
        frame = tables.read_table(clusters, schemas.CLUSTERS)
        tables.write_table(frame, clusters, schemas.CLUSTERS, notes={"fit_id": "another"})
    elif how == "not-a-model":
        (folder / "fit.json").write_text('{"hello": 1}')


@pytest.mark.parametrize(
    ("how", "encoder", "expected"),
    [
        ("partial", ENCODER, "papers.parquet: missing, the model in"),
        ("missing", ENCODER, "the saved topic model is missing"),
        ("versions", ENCODER, "fitted with other package versions (umap-learn 0.4.0 ->"),
        ("foreign", ENCODER, "the saved model did not place"),
        ("not-a-model", ENCODER, "not a topic model of this pipeline"),
        ("none", "another encoder", "fitted on vectors of test encoder, the papers' are of"),
    ],
)
def test_an_untrustworthy_model_is_one_line_naming_make_refit(saved, how, encoder, expected):
    folder, clusters = saved
    _break(folder, clusters, how)
    with pytest.raises(PipelineError) as info:
        read_saved(folder, clusters, encoder)
    message = str(info.value)
    assert expected in message and "make refit" in message and "\n" not in message

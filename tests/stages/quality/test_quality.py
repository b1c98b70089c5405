"""Quality figures end to end: config checks, stability and baseline runs, the new Make targets
and their files on the bundled corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline import schemas, tables
from pipeline.config import ClusterConfig, parse_config
from pipeline.errors import ConfigError
from pipeline.stages.quality import make_baseline, seed_agreement, seed_runs
from pipeline.text import banned_words
from tests.support.runs import bundled_config, run_make
from tests.support.wordlists import faults

BASE = {"inputs": ["data/raw/*.txt"]}


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ({"cluster": {"outlier_threshold": 1.5}}, "key 'cluster.outlier_threshold'"),
        ({"cluster": {"outlier_threshold": -0.1}}, "key 'cluster.outlier_threshold'"),
        ({"cluster": {"max_topic_share": 0}}, "key 'cluster.max_topic_share'"),
        ({"label": {"min_term_share": 2}}, "key 'label.min_term_share'"),
        ({"label": {"label_words": 1}}, "key 'label.label_words'"),
        ({"label": {"n_themes": 1}}, "key 'label.n_themes'"),
        ({"label": {"n_themes": 30}, "cluster": {"max_topics": 20}}, "key 'label.n_themes'"),
        ({"quality": {"seeds": [1, 1]}}, "key 'quality.seeds'"),
        ({"quality": {"seeds": [1]}}, "key 'quality.seeds'"),
        ({"compare": {"z_threshold": 0}}, "key 'compare.z_threshold'"),
    ],
)
def test_impossible_settings_are_refused_with_the_key_named(section, expected):
    with pytest.raises(ConfigError, match=expected.replace(".", r"\.")):
        parse_config({**BASE, **section})


def test_possible_settings_load():
    config = parse_config({**BASE, "label": {"n_themes": 12}, "cluster": {"max_topics": 40}})
    assert (config.label.n_themes, config.cluster.max_topics) == (12, 40)


def test_stability_reports_agreement_between_seeds():
    runs = {1: np.array([0, 0, 1, 1, -1]), 2: np.array([1, 1, 0, 0, -1])}
    figures = seed_agreement(runs)
    assert figures["ari_min"] == pytest.approx(1.0) and figures["runs"] == 2
    assert figures["seeds"] == "1, 2" and figures["topics_per_run"] == "2, 2"


def test_seed_runs_reuse_the_build_and_rerun_the_other_seeds():
    vectors = np.eye(5, 8, dtype=np.float32)  # under 8 papers: one topic, no UMAP needed
    known = {42: np.array([7, 7, 7, 7, 7])}
    runs = seed_runs(vectors, ClusterConfig(), [42, 43], known)
    assert list(runs) == [42, 43]
    assert runs[42].tolist() == [7] * 5 and runs[43].tolist() == [0] * 5


def _three_blobs() -> tuple[np.ndarray, np.ndarray]:
    """90 unit vectors in three tight blobs of 30 (the topic of each, and the vectors)."""
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(3, 32))
    truth = np.repeat(np.arange(3), 30)
    vectors = centres[truth] + rng.normal(scale=0.05, size=(90, 32))
    return truth, (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.slow  # BERTopic's UMAP + HDBSCAN
def test_baseline_is_bertopic_defaults_scored_like_this_build():
    truth, vectors = _three_blobs()
    words = ["the transport of sinkhorn", "the graph of nodes", "the reward of agents"]
    texts = [f"{words[t]} and the paper {i}" for i, t in enumerate(truth)]
    figures = make_baseline(texts, vectors, [1, 2], banned_words())
    assert figures["topics"] >= 2 and figures["seed"] == 1
    for key in ("unassigned_share", "largest_topic_share", "topic_diversity"):
        assert 0 <= figures[key] <= 1, key
    # NPMI of the baseline's own terms: each topic's score in [-1, 1], the mean over topics
    scores = [row["npmi"] for row in figures["npmi_by_topic"] if row["npmi"] is not None]
    assert len(figures["npmi_by_topic"]) == figures["topics"] and scores
    assert all(-1 <= score <= 1 for score in scores)
    assert figures["npmi_mean"] == pytest.approx(sum(scores) / len(scores))
    assert set(figures["stability"]) == {"ari_min", "ari_median"}
    assert all("_" in label for label in figures["labels"])  # BERTopic's "0_word_word" labels


# --- on the bundled corpus, through Make ----------------------------------------------------


@pytest.mark.slow
def test_build_writes_metrics_venue_table_and_themes(bundled_build: Path):
    metrics = json.loads((bundled_build / "metrics.json").read_text(encoding="utf-8"))
    assert 3 <= metrics["topics"] <= 12, metrics  # several distinct topics from 76 papers
    assert metrics["papers"] == 76
    clusters = tables.read_table(bundled_build / "clusters.parquet", schemas.CLUSTERS)
    assert metrics["outlier_share"] == pytest.approx(clusters["raw_outlier"].mean())
    assert metrics["unassigned_share"] == pytest.approx((clusters["topic"] == -1).mean())
    # HDBSCAN's outliers near a topic join it; the rounds on the topics' firm centres may also
    # leave a paper HDBSCAN took in unassigned (far from every centre): few either way. Whether
    # HDBSCAN leaves any of these 76 out depends on the CPU's bf16 vectors (none on an AVX-512
    # BF16 EPYC, several on an AMX Xeon); the reassignment itself is unit-tested in cluster's tests
    if clusters["raw_outlier"].any():
        assert clusters.loc[clusters["raw_outlier"], "topic"].ge(0).any()
    assert metrics["unassigned_share"] <= 0.15
    assert metrics["labels_unique"] and metrics["labels_with_stop_or_filler_words"] == 0
    assert 0 < metrics["topic_diversity"] <= 1
    scores = [row["npmi"] for row in metrics["npmi_by_topic"] if row["npmi"] is not None]
    assert len(metrics["npmi_by_topic"]) == metrics["topics"] and scores
    assert all(-1 <= score <= 1 for score in scores)
    assert metrics["npmi_mean"] == pytest.approx(sum(scores) / len(scores))
    topics = tables.read_table(bundled_build / "topics.parquet", schemas.TOPICS)
    themes = tables.read_table(bundled_build / "themes.parquet", schemas.THEMES)
    assigned = topics[topics["topic"] >= 0]
    assert assigned["theme"].ge(0).all() and themes["label"].str.len().gt(0).all()
    assert metrics["themes"] == assigned["theme"].nunique() == (themes["theme"] >= 0).sum()
    for docs in assigned["representative_docs"]:
        assert 1 <= len(docs) <= 3
    # checked against the tests' own list of stop and filler words, not the pipeline's
    named = [*assigned["label"], *themes.loc[themes["theme"] >= 0, "label"]]
    assert not {text: faults(text) for text in named if faults(text)}
    terms = [term for row in [*assigned["terms"], *themes["terms"]] for term in row]
    assert not {term: faults(term) for term in terms if faults(term)}
    venues = tables.read_table(bundled_build / "venue_topics.parquet", schemas.VENUE_TOPICS)
    assert set(venues["venue"]) == {"ICML", "ICLR"}
    assert set(venues["level"]) == {"topic", "theme"}
    html = (bundled_build / "index.html").read_text(encoding="utf-8")
    assert 'id="quality"' in html and 'id="themes"' in html


@pytest.mark.slow
def test_stability_and_baseline_targets_feed_the_report(bundled_build: Path, tmp_path: Path):
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)  # keeps the modification times Make compares
    config = bundled_config(tmp_path / "copy.yaml", bundled_build, out)
    first = run_make("stability", "baseline", f"CONFIG={config}")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    stability_figures = json.loads((out / "stability.json").read_text(encoding="utf-8"))
    assert stability_figures["runs"] == 3 and stability_figures["seeds"] == "42, 43, 44"
    baseline = json.loads((out / "baseline.json").read_text(encoding="utf-8"))
    assert baseline["papers"] == 76 and "stability" in baseline  # (defaults find few topics)
    # both reach the report as declared inputs of the render target
    report = (out / "index.html").read_text(encoding="utf-8")
    assert "BERTopic defaults" in report and "stability" in report
    assert f"{stability_figures['ari_min']:.3g}" in report
    # both are kept: nothing is rerun, and a plain `all` finds everything up to date
    again = run_make("-q", "stability", "baseline", "all", f"CONFIG={config}")
    assert again.returncode == 0, again.stdout


@pytest.mark.slow  # BERTopic's UMAP + HDBSCAN
def test_baseline_npmi_mean_is_over_every_topic_of_different_scores():
    truth, vectors = _three_blobs()
    # topic 0's words always meet; topic 1's and 2's only in some of their papers
    words = [
        lambda i: "transport sinkhorn coupling",
        lambda i: "graph nodes" if i % 2 else "graph edges",
        lambda i: ["reward agents", "reward policy", "bandit agents"][i % 3],
    ]
    texts = [f"{words[t](i)} paper {i}" for i, t in enumerate(truth)]
    figures = make_baseline(texts, vectors, [1, 2], banned_words())
    scores = [row["npmi"] for row in figures["npmi_by_topic"] if row["npmi"] is not None]
    assert len(set(np.round(scores, 6))) > 1, scores  # else a mean of one topic looks right
    assert figures["npmi_mean"] == pytest.approx(sum(scores) / len(scores))

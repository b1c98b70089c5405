"""Metrics stage: a build's quality figures from its tables."""

from __future__ import annotations

import pytest

from pipeline.stages import metrics
from pipeline.stages.metrics import make_metrics
from tests.support import tables as make
from tests.support.build_folder import write_build


def _tiny_build() -> dict:
    documents = make.documents(
        [
            "Optimal transport with sinkhorn iterations.",
            "Optimal transport and sinkhorn barycenters.",
            "Graph neural networks pass messages.",
            "Quantum annealing schedules.",
        ],
        doc_ids=["d0", "d1", "d2", "d3"],
        venues=["A", "A", "B", "B"],
        years=2023,
        sources="s",
    )
    clusters = make.clusters(
        documents["doc_id"], [0, 0, 1, -1], raw_outlier=[False, True, False, True], similarity=0.5
    )
    topics = make.topics(
        [-1, 0, 1],
        labels=["Unassigned", "optimal transport, sinkhorn", "graph neural networks"],
        terms=[["quantum"], ["optimal transport", "sinkhorn"], ["graph neural networks"]],
        term_weights=[[0.1], [0.3, 0.2], [0.4]],
        sizes=[1, 2, 1],
        themes=[-1, 0, 0],
        representative_docs=[[], ["d0"], ["d2"]],
    )
    themes = make.themes_of(
        topics, labels={0: "maths"}, terms={0: ["optimal transport"], -1: ["quantum"]}
    )
    return {"documents": documents, "clusters": clusters, "topics": topics, "themes": themes}


def test_build_metrics_on_a_tiny_build():
    frames = _tiny_build()
    documents, clusters, topics, themes = (
        frames[k] for k in ("documents", "clusters", "topics", "themes")
    )
    figures = make_metrics(documents, clusters, topics, themes)
    assert figures["topics"] == 2 and figures["themes"] == 1
    assert figures["outlier_share"] == 0.5 and figures["unassigned_share"] == 0.25
    assert figures["largest_topic_share"] == 0.5
    assert figures["topic_diversity"] == 1.0
    assert figures["labels_unique"] and figures["labels_with_stop_or_filler_words"] == 0
    assert "stability" not in figures  # stability.json goes to the report itself
    # counted with the label stage's tokeniser: both papers of topic 0 hold both its terms
    assert [row["topic"] for row in figures["npmi_by_topic"]] == [0, 1]
    assert figures["npmi_by_topic"][0]["npmi"] == pytest.approx(1.0)
    assert figures["npmi_by_topic"][1]["npmi"] is None  # one term: no pair to score
    assert figures["npmi_mean"] == pytest.approx(1.0)  # the mean of the topics with a score


def test_term_figures_are_kept_when_the_terms_basis_is_unchanged(tmp_path, monkeypatch):
    """Papers only added to the saved model: the label stage's basis is the same, so NPMI is
    not counted again; shares are."""
    import numpy as np

    from pipeline import tables
    from pipeline.stages import metrics

    frames = _tiny_build()
    paths = write_build(tmp_path, {"topics": {"basis": "b1"}, "themes": {"basis": "b1"}}, **frames)
    out = tmp_path / "metrics.json"
    metrics.run(paths["documents"], paths["clusters"], paths["topics"], paths["themes"], out)
    first = tables.read_json(out, "metrics")
    assert first["terms_basis"] == "b1" and first["scoring_basis"] == metrics.scoring_basis()

    def never(*args, **kwargs):
        raise AssertionError("counted again")

    monkeypatch.setattr(metrics, "term_texts", never)
    clusters = frames["clusters"].assign(topic=np.array([0, 0, 0, -1], dtype=np.int32))
    write_build(tmp_path, clusters=clusters)
    metrics.run(paths["documents"], paths["clusters"], paths["topics"], paths["themes"], out)
    second = tables.read_json(out, "metrics")
    assert second["npmi_by_topic"] == first["npmi_by_topic"]
    assert second["largest_topic_share"] == 0.75 != first["largest_topic_share"]
    monkeypatch.setattr(metrics, "scoring_basis", lambda: "changed")  # the scoring code changed
    with pytest.raises(AssertionError, match="counted again"):
        metrics.run(paths["documents"], paths["clusters"], paths["topics"], paths["themes"], out)
    monkeypatch.undo()
    monkeypatch.setattr(metrics, "term_texts", never)
    write_build(tmp_path, {"topics": {"basis": "b2"}}, topics=frames["topics"])
    with pytest.raises(AssertionError, match="counted again"):
        metrics.run(paths["documents"], paths["clusters"], paths["topics"], paths["themes"], out)


def test_theme_terms_are_scored_as_topic_terms_are():
    themes = make.themes(
        [0, 1, -1],
        labels=["a, b", "c, d", "Unassigned"],
        terms=[["a", "b"], ["c", "d", "a"], ["z"]],
        sizes=[2, 2, 1],
    )
    doc_terms = [{"a", "b"}, {"a", "b"}, {"c"}, {"d"}]
    figures = metrics.theme_figures(themes, doc_terms)
    # a and b always meet (NPMI 1); c, d never, and a with neither (-1)
    assert figures["theme_npmi_mean"] == pytest.approx((1.0 + -1.0) / 2)
    assert figures["theme_diversity"] == pytest.approx(4 / 5)  # a is said twice
    assert figures["theme_labels_unique"] is True
    assert [t["theme"] for t in figures["npmi_by_theme"]] == [0, 1]  # -1 left out
    assert figures["npmi_by_theme"][0] == {"theme": 0, "label": "a, b", "npmi": 1.0}
    assert set(metrics.TERM_FIGURES) >= set(figures)  # kept with the topics' when unchanged

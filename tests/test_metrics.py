"""Metrics stage: a build's quality figures from its tables."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.metrics import build_metrics


def test_build_metrics_on_a_tiny_build():
    documents = pd.DataFrame(
        {
            "doc_id": ["d0", "d1", "d2", "d3"],
            "venue": ["A", "A", "B", "B"],
            "conference": ["A", "A", "B", "B"],
            "track": [""] * 4,
            "year": [2023] * 4,
            "title": [None] * 4,
            "abstract": [
                "Optimal transport with sinkhorn iterations.",
                "Optimal transport and sinkhorn barycenters.",
                "Graph neural networks pass messages.",
                "Quantum annealing schedules.",
            ],
            "source": ["s"] * 4,
            "source_id": [None] * 4,
            "url": [None] * 4,
        }
    )
    clusters = pd.DataFrame(
        {"doc_id": ["d0", "d1", "d2", "d3"], "topic": [0, 0, 1, -1], "x": 0.0, "y": 0.0}
    )
    clusters["raw_outlier"] = [False, True, False, True]
    clusters["placed"], clusters["similarity"] = "fit", 0.5
    topics = pd.DataFrame(
        {
            "topic": [-1, 0, 1],
            "label": ["Unassigned", "optimal transport, sinkhorn", "graph neural networks"],
            "terms": [["quantum"], ["optimal transport", "sinkhorn"], ["graph neural networks"]],
            "size": [1, 2, 1],
            "theme": [-1, 0, 0],
            "representative_docs": [[], ["d0"], ["d2"]],
        }
    )
    themes = pd.DataFrame(
        {
            "theme": [0, -1],
            "label": ["maths", "Unassigned"],
            "terms": [["optimal transport"], ["quantum"]],
            "size": [3, 1],
            "topics": [[0, 1], [-1]],
        }
    )
    figures = build_metrics(documents, clusters, topics, themes)
    assert figures["topics"] == 2 and figures["themes"] == 1
    assert figures["outlier_share_raw"] == 0.5 and figures["outlier_share_final"] == 0.25
    assert figures["largest_topic_share"] == 0.5
    assert figures["topic_diversity"] == 1.0
    assert figures["labels_unique"] and figures["labels_with_stop_or_filler_words"] == 0
    assert "stability" not in figures  # stability.json goes to the report itself
    # counted with the label stage's tokeniser: both papers of topic 0 hold both its terms
    assert [row["topic"] for row in figures["npmi_by_topic"]] == [0, 1]
    assert figures["npmi_by_topic"][0]["npmi"] == pytest.approx(1.0)
    assert figures["npmi_by_topic"][1]["npmi"] is None  # one term: no pair to score
    assert figures["npmi_mean"] == pytest.approx(1.0)  # the mean of the topics with a score

"""Labels joined to papers one way (pipeline.labels): every row keeps its place, a topic or theme
the tables do not name reads as the unassigned label."""

from __future__ import annotations

import pandas as pd

from pipeline.labels import with_labels, with_theme_labels, with_topic_labels
from pipeline.schemas import UNASSIGNED_LABEL
from tests.support import tables as make


def test_each_paper_gets_its_topic_label_theme_and_theme_label_in_its_own_order():
    topics = make.topics([-1, 0, 1], labels=["Unassigned", "graphs", "kernels"], themes=[-1, 7, 7])
    themes = make.themes([7], labels=["learning theory"])
    papers = pd.DataFrame({"doc_id": ["c", "a", "b", "d"], "topic": [1, -1, 0, 1]})
    joined = with_labels(papers, topics, themes)
    assert joined["doc_id"].tolist() == ["c", "a", "b", "d"]
    assert joined["topic_label"].tolist() == ["kernels", "Unassigned", "graphs", "kernels"]
    assert joined["theme"].tolist() == [7, -1, 7, 7]
    assert joined["theme_label"].tolist() == [
        "learning theory",
        UNASSIGNED_LABEL,
        "learning theory",
        "learning theory",
    ]


def test_a_topic_the_table_does_not_name_is_unassigned_not_missing():
    topics = make.topics([0], labels=["graphs"])
    joined = with_topic_labels(pd.DataFrame({"topic": [0, 5]}), topics)
    assert joined["topic_label"].tolist() == ["graphs", UNASSIGNED_LABEL]
    assert joined["theme"].tolist() == [0, -1]
    assert with_theme_labels(joined, make.themes([0]))["theme_label"].tolist() == [
        "theme 0",
        UNASSIGNED_LABEL,
    ]

"""What the label stage carries over when topics carry on: whole rows of topics whose papers are
unchanged, a surviving topic's label while it still describes its papers, new topics in the
nearest theme (or their own), and themes matched by the topics they hold after a refit."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.stages.label import keep
from tests.support import tables as make


def _topics(labels: dict[int, str], terms: dict[int, list[str]], themes: dict[int, int]):
    topics = sorted(labels)
    return make.topics(
        topics,
        labels=[labels[t] for t in topics],
        terms=[terms[t] for t in topics],
        sizes=[5] * len(topics),
        themes=[themes[t] for t in topics],
        representative_docs=[[f"d{t}"] for t in topics],
    )


def _earlier():
    topics = _topics(
        {0: "graph networks", 1: "bandit regret"},
        {0: ["graph networks", "message passing"], 1: ["bandit regret", "exploration"]},
        {0: 0, 1: 1},
    )
    themes = make.themes_of(topics, labels={0: "graphs", 1: "bandits"})
    return keep.Earlier(topics, themes, {0: "a", 1: "b"})


def test_a_label_is_kept_while_its_words_are_among_the_topics_best_terms():
    assert keep.still_describes("graph neural networks", ["neural networks", "graph", "nodes"])
    assert keep.still_describes("graph neural networks", ["graph", "neural ode", "nodes"])
    assert not keep.still_describes("graph neural networks", ["graph", "message passing"])
    assert not keep.still_describes("graph neural networks", ["bandit", "regret", "networks"])
    assert not keep.still_describes("", ["graph"])


def test_unchanged_topics_keep_their_rows_and_a_new_topic_gets_a_label_of_its_own():
    fresh = _topics(
        {0: "message passing", 1: "regret bounds", 2: "bandit regret"},
        {0: ["message passing"], 1: ["regret bounds"], 2: ["bandit regret", "mesh rendering"]},
        {0: 5, 1: 5, 2: 6},
    )
    topics, how = keep.kept_topics(fresh, _earlier(), {0: "a", 1: "b", 2: "c"})
    assert topics["label"].tolist() == ["graph networks", "bandit regret", "mesh rendering"]
    assert topics["theme"].tolist()[:2] == [0, 1]  # the earlier rows, themes included
    assert how == {"kept": 2, "label kept": 0, "relabelled": 0, "new": 1}


def test_a_surviving_topic_keeps_its_label_only_while_it_describes_its_papers():
    fresh = _topics(
        {0: "message passing", 1: "regret bounds"},
        {0: ["graph networks", "nodes"], 1: ["online learning", "experts"]},
        {0: 0, 1: 1},
    )
    topics, how = keep.kept_topics(fresh, _earlier(), {0: "changed", 1: "changed"})
    assert topics["label"].tolist() == ["graph networks", "regret bounds"]
    assert how == {"kept": 0, "label kept": 1, "relabelled": 1, "new": 0}


def test_a_new_topic_joins_the_nearest_theme_or_one_of_its_own():
    labels = {0: "graph networks", 1: "bandit regret", 3: "graph kernels"}
    before = _topics(labels, {0: ["g"], 1: ["b"], 3: ["k"]}, {0: 0, 1: 1, 3: 0})
    earlier = keep.Earlier(before, make.themes_of(before), {0: "a", 1: "b", 3: "d"})
    centres = {0: np.array([1.0, 0.0, 0.0]), 1: np.array([0.0, 1.0, 0.0])}
    centres[3] = np.array([0.8, 0.6, 0.0])  # theme 0's topics are 0.95 from its centre
    fresh = _topics(
        {**labels, 2: "graph pooling"},
        {0: ["g"], 1: ["b"], 2: ["graph pooling"], 3: ["k"]},
        {0: 0, 1: 1, 2: 9, 3: 0},
    )
    near = {**centres, 2: np.array([0.95, 0.31, 0.0]) / np.linalg.norm([0.95, 0.31, 0.0])}
    topics, themes = keep.joined_themes(fresh, earlier, near)
    assert topics["theme"].tolist() == [0, 1, 0, 0]
    assert sorted(themes.set_index("theme").loc[0, "topics"]) == [0, 2, 3]
    far = {**centres, 2: np.array([0.0, 0.0, 1.0])}
    topics, themes = keep.joined_themes(fresh, earlier, far)
    assert topics["theme"].tolist() == [0, 1, 2, 0]
    assert themes.set_index("theme").loc[2, "label"] == "graph pooling"


def test_after_a_refit_themes_are_numbered_by_the_earlier_themes_they_match():
    earlier = _earlier()
    fresh = _topics({0: "g", 1: "b", 5: "n"}, {0: ["g"], 1: ["b"], 5: ["n"]}, {0: 1, 1: 0, 5: 2})
    fresh_themes = make.themes_of(fresh, labels={0: "fresh b", 1: "fresh g", 2: "fresh n"})
    topics, themes = keep.matched_themes(fresh, fresh_themes, earlier)
    assert topics["theme"].tolist() == [0, 1, 2]
    labels = dict(zip(themes["theme"], themes["label"], strict=True))
    assert labels == {0: "graphs", 1: "bandits", 2: "fresh n"}


def test_paper_digests_depend_on_the_papers_not_their_order():
    a = keep.paper_digests(np.array(["x", "y", "z"]), np.array([0, 0, 1]))
    b = keep.paper_digests(np.array(["z", "y", "x"]), np.array([1, 0, 0]))
    assert a == b and a[0] != a[1]
    assert isinstance(pd.Series(a).iloc[0], str)

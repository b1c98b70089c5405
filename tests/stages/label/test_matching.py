"""Group labels chosen together so that each paper's words pick its own group's label."""

from __future__ import annotations

import numpy as np

from pipeline.phrases import head_phrase
from pipeline.stages.label import matching
from pipeline.stages.label.counts import count_chunk
from pipeline.stages.label.matching import (
    matched_labels,
    matched_share,
    option_scores,
    read_words,
    reader_evidence,
    reader_words,
)
from pipeline.stages.label.names import Label, matched_topic_labels
from pipeline.stages.label.themes import fragments, label_options, own_phrases, shared_phrases

TEXTS = (
    ["Policy gradients for robot control tasks."] * 4
    + ["Value functions for control tasks."] * 2
    + ["Graph kernels for molecule tasks."] * 4
)
ROWS = {0: np.arange(6), 1: np.arange(6, 10)}


def _heads(options: dict[int, list[str]]) -> dict[int, list[frozenset]]:
    return {g: [head_phrase(t.split(",")[0]) for t in texts] for g, texts in options.items()}


def test_reader_words_are_every_word_of_two_letters_or_more():
    assert reader_words("Tasks of RL: a 3-D model") == ["tasks", "of", "rl", "model"]
    evidence = reader_evidence(TEXTS)
    assert "task" in evidence.column and "of" not in evidence.column  # 'for', 'tasks' folded


def test_a_paper_scores_a_label_by_the_rarity_of_its_words_it_uses():
    evidence = reader_evidence(TEXTS)
    scores = option_scores(evidence, np.arange(10), ["robot control", "graph kernels"])
    idf = {w: evidence.idf[evidence.column[w]] for w in ("robot", "control", "graph", "kernel")}
    assert scores[0, 0] == idf["robot"] + idf["control"] and scores[0, 1] == 0
    assert scores[4, 0] == idf["control"] and scores[9, 1] == idf["graph"] + idf["kernel"]


def test_labels_are_chosen_so_that_papers_pick_their_own_groups():
    """Group 0's first option (`robot`) names four of its six papers; its second, longer one
    (`policy gradients, value functions`) all six: taken."""
    evidence = reader_evidence(TEXTS)
    options = {0: ["robot", "policy gradients, value functions"], 1: ["graph kernels"]}
    chosen = matched_labels(options, _heads(options), evidence, ROWS)
    assert chosen == {0: 1, 1: 0}
    texts = {g: options[g][k] for g, k in chosen.items()}
    assert matched_share(texts, evidence, ROWS) == 1.0
    first = {0: "robot", 1: "graph kernels"}
    assert matched_share(first, evidence, ROWS) == 8 / 10  # no word of either label: a tie


def test_a_longer_label_must_match_more_papers_and_no_two_groups_share_a_label():
    evidence = reader_evidence(TEXTS)
    options = {0: ["control", "control tasks"], 1: ["graph kernels", "control"]}
    chosen = matched_labels(options, _heads(options), evidence, ROWS)
    assert chosen == {0: 0, 1: 0}  # 'tasks' helps no paper: the shorter label stays
    options = {0: ["graph kernels"], 1: ["graph kernels", "molecule"]}
    chosen = matched_labels(options, _heads(options), evidence, ROWS)
    assert chosen == {0: 0, 1: 1}  # group 1 may not take group 0's label
    assert matched_labels({}, {}, evidence, {}) == {}  # no group (no topic has a label)


def test_options_scored_a_block_at_a_time_choose_as_all_at_once(monkeypatch):
    evidence = reader_evidence(TEXTS)
    options = {
        0: ["robot", "policy", "value functions", "policy gradients, value functions"],
        1: ["graph", "molecule", "graph kernels", "molecule tasks"],
    }
    whole = matched_labels(options, _heads(options), evidence, ROWS)
    monkeypatch.setattr(matching, "OPTION_BLOCK", 1)
    assert matched_labels(options, _heads(options), evidence, ROWS) == whole == {0: 3, 1: 0}


def test_each_option_counts_the_papers_it_would_match_with_the_other_labels_held():
    # the count of `_Scorer.hits` (over the papers whose match can change) against the number
    # of all papers matched with the option put in, on random papers, groups and labels
    rng = np.random.default_rng(7)
    vocabulary = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    for _ in range(30):
        texts = [" ".join(rng.choice(vocabulary, rng.integers(1, 6))) for _ in range(60)]
        evidence = reader_evidence(texts)
        cut = np.sort(rng.choice(np.arange(1, 60), 2, replace=False))
        rows = dict(enumerate(np.split(np.arange(60), cut)))
        options = {
            g: [" ".join(rng.choice(vocabulary, rng.integers(1, 4))) for _ in range(5)]
            for g in rows
        }
        scorer = matching._Scorer(options, sorted(options), evidence, rows, read_words)
        table = np.stack([scorer.scores(i, range(1))[:, 0] for i in range(3)], axis=1)
        rivals = matching._Rivals(table.copy(), scorer.own)
        for i in range(3):
            all_options = scorer.scores(i, range(5))
            for k, count in enumerate(scorer.hits(i, rivals)):
                put = table.copy()
                put[:, i] = all_options[:, k]
                assert count == matching._matched(put, scorer.own).sum()


def test_a_phrase_cut_short_is_known_by_the_longer_phrase_its_papers_use():
    uses = {
        "large language": 40,
        "large language models": 38,  # 0.95 of its papers: `large language` is cut short
        "reinforcement learning": 50,
        "offline reinforcement learning": 20,  # 0.4: `reinforcement learning` stands
        "ordinary differential": 30,
        "ordinary differential equation": 12,  # with its plural, 0.8
        "ordinary differential equations": 12,
    }
    terms = ["large language", "reinforcement learning", "ordinary differential"]
    assert fragments(terms, uses) == {"large language", "ordinary differential"}
    assert fragments([], uses) == set()
    terms = ["object detection", "vision", "masked images", "image modeling", "more data"]
    assert own_phrases(terms, {"image modeling"}) == [
        "object detection",
        "masked images",
        "more data",
    ]


def test_a_group_label_may_add_its_own_phrases_to_two_of_its_members():
    labels = [
        Label("vision transformers, patches", "vision transformers"),
        Label("vision-language models, captions", "vision-language models"),
        Label("camera poses", "camera poses"),
    ]
    options = [text for text, _ in label_options([], labels, ["object detection"])]
    assert "vision transformers, camera poses, object detection" in options  # own after heads
    assert "vision transformers, object detection, captions" not in options  # one member
    assert "camera poses, object detection" not in options
    assert max(text.count(",") for text in options) == 3  # four parts at most
    assert all(
        sum(
            part in text
            for part in (
                "vision transformers",
                "vision-language models",
                "camera poses",
                "patches",
                "captions",
            )
        )
        >= 2
        for text in options
    )


def test_label_options_name_two_members_and_put_the_shortest_first():
    labels = [
        Label("offline reinforcement learning, logged data", "offline reinforcement learning"),
        Label("multi-agent reinforcement learning, games", "multi-agent reinforcement learning"),
        Label("robot manipulation, grasping", "robot manipulation"),
    ]
    options = [text for text, _ in label_options(["reinforcement learning"], labels)]
    # a shared phrase's words are not counted: `reinforcement learning:` names the theme
    assert options[:2] == [
        "reinforcement learning: offline, multi-agent",
        "reinforcement learning: logged data, multi-agent",  # the largest member first
    ]
    assert options.index("logged data, robot manipulation") == 6  # four words, no shared phrase
    assert not any("games" in text or "grasping" in text for text in options)  # single words
    assert "offline reinforcement learning, multi-agent reinforcement learning" in options
    assert all(text.count(",") >= 1 for text in options)  # two parts or more
    lengths = [len(text.split(": ")[-1].replace(",", "").split()) for text in options]
    assert lengths == sorted(lengths)
    assert label_options([], labels[:1]) == [
        ("offline reinforcement learning, logged data", head_phrase(labels[0].head))
    ]


def test_topic_labels_are_chosen_again_so_that_papers_pick_their_own():
    """Topic 0's label (its head alone) names four of its six papers; among its candidates'
    options `policy gradients, value functions` names all six. Topic 1 keeps its Label."""
    evidence = reader_evidence(TEXTS)
    scored = {
        0: [("policy gradients", 2.0), ("value functions", 1.5)],
        1: [("graph kernels", 2.0), ("molecule", 1.0)],
    }
    labels = {0: Label("policy gradients", "policy gradients"), 1: Label("graph kernels", "g")}
    found = matched_topic_labels(labels, scored, evidence, ROWS, 5)
    assert found[0] == Label("policy gradients, value functions", "policy gradients")
    assert found[1] is labels[1]


def test_a_shared_phrase_describes_two_of_the_themes_topics():
    texts = ["Spectral graph cuts."] * 4 + ["Spectral graph flows."] * 4
    texts += ["Heat kernels."] * 4 + ["Random walks."] * 4 + ["Graph cuts."] * 4
    groups = np.repeat([0, 1, 2, 3, 4], 4)
    counts = count_chunk(texts, groups, 3)
    terms = ["spectral graph", "graph cuts", "heat kernels"]
    # two of five topics each (not half of them); `heat kernels` one
    assert shared_phrases(terms, [0, 1, 2, 3, 4], counts, 0.5) == ["spectral graph", "graph cuts"]
    assert shared_phrases(terms, [0], counts, 0.5) == []


def test_a_labels_hyphenated_words_are_read_as_the_papers_words():
    texts = ["Multi-agent coordination games."] * 3 + ["Single-agent planning games."] * 3
    evidence = reader_evidence(texts)
    assert read_words("multi-agent games, self-play") == {"multi", "agent", "game", "self", "play"}
    chinese = reader_evidence(["强化学习的多智能体方法。"])
    assert read_words("强化学习, 多智能体") <= set(chinese.column)  # cut as the papers are
    scores = option_scores(evidence, np.arange(6), ["multi-agent games", "games"], read_words)
    assert (scores[:3, 0] > scores[:3, 1]).all()  # `multi` names the first three only
    options = {0: ["games", "multi-agent games"], 1: ["planning games", "single-agent games"]}
    rows = {0: np.arange(3), 1: np.arange(3, 6)}
    chosen = matched_labels(options, _heads(options), evidence, rows, read_words)
    assert options[0][chosen[0]] == "multi-agent games"
    # read as terms, `multi-agent` names no paper: the tie keeps the shorter label
    assert matched_labels(options, _heads(options), evidence, rows) == {0: 0, 1: 0}

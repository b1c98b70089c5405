"""The noun-phrase rules labels are made and checked by (pipeline/phrases.py)."""

from __future__ import annotations

import pytest

from pipeline.phrases import (
    head_phrase,
    is_acronym_of,
    is_head_noun,
    is_noun_phrase,
    readability_faults,
)


@pytest.mark.parametrize(
    "term",
    [
        "offline reinforcement learning",
        "graph neural networks",
        "signal",
        "objective",
        "differential privacy",
        "self-attention",
        "fine-tuning",
        "metric",
        "batch size",
    ],
)
def test_noun_phrases_pass(term):
    assert is_noun_phrase(term)


@pytest.mark.parametrize(
    "term",
    [
        "collaboratively",  # an adverb
        "distributed",  # a participle
        "federated learning distributed",
        "pre-trained",
        "zero-shot",  # a modifier compound
        "test-time",
        "vision-language",
        "generative",
        "causal",
        "robust",
        "learn collaboratively",  # an adverb anywhere
        "interpretable",
        "stochastic",
        "overcome",  # a verb (its ending says nothing)
        "drift detection unlike",  # a preposition
        "whereas",  # one whose -s is no plural
    ],
)
def test_adjectives_adverbs_and_participles_are_no_heads(term):
    assert not is_noun_phrase(term)


def test_heads_of_other_scripts_pass_and_heads_fold_plurals():
    assert is_head_noun("强化学习")
    assert head_phrase("Diffusion Models") == head_phrase("diffusion model")


@pytest.mark.parametrize(
    ("short", "long", "abbreviates"),
    [
        ("dp", "differential privacy", True),
        ("marl", "multi-agent reinforcement learning", True),
        ("asr", "automatic speech recognition", True),
        ("ssl", "self-supervised learning", True),
        ("clip", "vision-language models", False),
        ("python", "programming language", False),
        ("gnn", "graph neural networks", True),
        ("rl", "graph neural networks", False),
    ],
)
def test_acronyms_of_a_phrase(short, long, abbreviates):
    assert is_acronym_of(short, long) is abbreviates


def test_readability_faults_name_each_failing_label_and_why():
    labels = {
        0: "offline reinforcement learning, optimal policy",
        1: "distributed, collaboratively",  # the example: no noun head, an adverb
        2: "Topic 2",  # a fallback name: one word
        3: "offline reinforcement learning",  # the head of label 0 again
        4: "a b c d e f",  # six words
    }
    faults = readability_faults(labels)
    assert "offline reinforcement learning, optimal policy" not in faults
    assert faults["distributed, collaboratively"] == [
        "not a noun phrase: distributed",
        "not a noun phrase: collaboratively",
    ]
    assert faults["Topic 2"] == ["1 words"]
    assert faults["offline reinforcement learning"] == [
        "head shared with: offline reinforcement learning, optimal policy"
    ]
    assert faults["a b c d e f"][0] == "6 words"

"""The text that stands for a paper: what is embedded, and the term tokeniser."""

from __future__ import annotations

import numpy as np
import pandas as pd
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.text import (
    _TOKEN,
    MAX_NGRAM,
    banned_words,
    count_words,
    embedding_texts,
    has_words,
    phrase_terms,
    term_analyzer,
    words_of,
)
from tests.support import tables as make
from tests.support.wordlists import ML_RHETORIC, NOT_IN_LABELS


def test_embedding_texts_prefixes_title_when_present():
    documents = make.documents(
        ["Distances between measures.", "An untitled abstract.", "Empty title abstract."],
        titles=["Sliced Wasserstein", None, ""],
    )
    assert embedding_texts(documents) == [
        "Sliced Wasserstein. Distances between measures.",
        "An untitled abstract.",
        "Empty title abstract.",
    ]


def test_embedding_texts_treats_nan_title_as_missing():
    documents = make.documents(["First abstract.", "Second abstract."], titles=["A title", None])
    documents["title"] = pd.Series(["A title", np.nan])  # how pandas stores the missing title
    assert embedding_texts(documents) == ["A title. First abstract.", "Second abstract."]


def test_phrases_never_cross_punctuation_stop_or_filler_words():
    banned = banned_words()
    text = "We propose optimal transport of measures; deep reinforcement learning, with $x$ agents."
    terms = phrase_terms(text, 3, banned)
    assert {"optimal transport", "reinforcement learning", "deep reinforcement learning"} <= set(
        terms
    )
    assert "transport measures" not in terms  # "of" breaks the phrase
    assert "measures deep" not in terms  # so does the semicolon
    # generic words count only inside a phrase with a specific word
    assert not {"learning", "deep", "deep learning", "propose", "x"} & set(terms)
    assert phrase_terms("Learning models from data.", 3, banned) == []


def test_a_term_is_found_whatever_the_longest_phrase_counted():
    """Scores that ask whether papers use given terms may count with the longest phrases."""
    text = "Deep reinforcement learning for robot manipulation, with offline data."
    longest = set(term_analyzer()(text))
    for max_ngram in range(1, MAX_NGRAM + 1):
        assert set(term_analyzer(max_ngram)(text)) <= longest


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abXY-_ 1'.", max_size=30))
def test_ascii_words_are_the_words_of_the_tokeniser_for_every_script(segment):
    """Plain ASCII text takes a faster path (re): it must find what the general pattern does."""
    general = [m.group() for m in _TOKEN.finditer(segment) if m.lastgroup == "word"]
    assert words_of(segment, japanese=False) == general


def test_the_term_analyzer_drops_every_stop_and_filler_word():
    from pipeline.text import term_analyzer

    analyzer = term_analyzer()
    leaked = {}
    for word in sorted(NOT_IN_LABELS - ML_RHETORIC) + sorted(ML_RHETORIC - {"state-of-the-art"}):
        words = {w for term in analyzer(f"sinkhorn {word} barycenters") for w in term.split()}
        if word in words:
            leaked[word] = sorted(words)
    assert not leaked


ASCII_TEXT = st.text(alphabet=st.characters(max_codepoint=127), max_size=300)


@given(ASCII_TEXT, st.integers(min_value=1, max_value=8))
@settings(max_examples=300, deadline=None)
def test_ascii_word_counts_are_the_general_rules_and_has_words_agrees(text, n):
    """The ASCII shortcut counts what the general rule counts: the space-separated pieces
    holding a letter or digit (no Chinese or Japanese in ASCII)."""
    general = sum(1 for w in text.split() if regex.search(r"[\p{L}\p{N}]", w))
    assert count_words(text) == general
    assert has_words(text, n) == (general >= n)

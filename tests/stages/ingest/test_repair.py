"""Ingest's text repair: PDF line breaks, LaTeX, whitespace (venue strings: test_venues.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from pipeline.stages.ingest.hyphens import HYPHENATED, JOINED, LEFT, SUSPENDED, decide
from pipeline.stages.ingest.repair import (
    fix_unicode,
    join_broken_words,
    normalise_space,
    repair_text,
    vocabulary_of,
)

# ---------------------------------------------------------------- pure core: helpers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\tb\nc   d", "a b c d"),
        ("  lead and trail \r\n", "lead and trail"),
        ("non\u00a0breaking", "non breaking"),
        ("cafe\u0301", "caf\u00e9"),  # NFC
        (" \n\t", ""),
    ],
)
def test_normalise_space(text, expected):
    assert normalise_space(text) == expected


# ---------------------------------------------------------------- pure core: text repair


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # words hyphenated at a line break (PDF extraction)
        ("condi-\ntional", "conditional"),
        ("condi- \r\n  tional", "conditional"),
        ("re-\nsults and con-\nvex sets", "results and convex sets"),
        ("the token-\nization step", "the tokenization step"),  # a bare suffix
        ("a data-\nset, as any dataset", "a dataset, as any dataset"),  # joined form elsewhere
        # ... but not real compounds
        ("self-\nsupervised", "self-supervised"),
        ("Self-\nsupervised", "Self-supervised"),
        ("non-\nconvex and multi-\nagent", "non-convex and multi-agent"),
        ("state-of-the-\nart", "state-of-the-art"),
        ("GPU-\nfriendly and 3D-\naware", "GPU-friendly and 3D-aware"),
        ("pre-\nTraining", "pre-Training"),  # capital after the break
        ("co-\nattention, as co-attention", "co-attention, as co-attention"),  # hyphen elsewhere
        ("a dash -\nthen more", "a dash - then more"),
        ("x-\n2", "x-2"),
        # hard line breaks, Windows line endings, tabs, PDF debris
        ("one\ntwo\r\nthree\rfour\tfive", "one two three four five"),
        ("e\u00ad\nvery soft\u00adhyphen", "every softhyphen"),
        ("\ufb01ne \ufb02ow e\ufb00ect", "fine flow effect"),
        ("bell\x07 and nul\x00 and \ud800 surrogate", "bell and nul and surrogate"),
        # LaTeX: formatting dropped, notes and citations removed, maths kept
        (r"\textit{x} and \textbf{\emph{bold}} text", "x and bold text"),
        (r"as shown \cite{a, b}.\footnote{See the {appendix}.} Next", "as shown. Next"),
        (r"{\em old} style, 50\% \& more", "old style, 50% & more"),
        (r"keep $\mathcal{O}(\sqrt{n})$ and $\textbf{x}$ maths", None),
        # markup stays text (the pages escape it); HTML entities are repaired
        ("<script>alert(1)</script> &amp; <b>b</b>", "<script>alert(1)</script> & <b>b</b>"),
    ],
)
def test_repair_text(text, expected):
    assert repair_text(text) == (text if expected is None else expected)


@pytest.mark.parametrize(
    ("broken", "corpus", "expected"),
    [
        ("finite-\nsample", "a finite set of one sample", "finite-sample"),  # two known words
        ("finite-\nsample", "", "finitesample"),  # no evidence: joined
        ("proper-\nties", "proper ties and properties", "properties"),  # joined form wins
        ("pre-\ntrained", "a pre-trained model", "pre-trained"),  # hyphenated form known
        ("condi-\ntional", "condi-\ntional again", "conditional"),  # fragments are not words
        ("in-\nformation", "in formation", "information"),  # short parts do not count
    ],
)
def test_hyphen_breaks_use_the_corpus_vocabulary(broken, corpus, expected):
    vocabulary = vocabulary_of([corpus, broken])
    assert repair_text(broken, vocabulary) == expected


@pytest.mark.parametrize(
    ("broken", "corpus", "expected"),
    [
        ("condi-\rtional", "", "conditional"),  # an old Mac line break
        ("model-\ning", "", "modeling"),  # a bare suffix, even after a compound's first word
        ("iPhone-\nfriendly", "", "iPhone-friendly"),  # a capital inside: a name, kept
        ("rim-\nset", "a rim and a set", "rim-set"),  # known words of three letters
        ("50\\% and \\& more", "", "50% and & more"),  # LaTeX escapes without any brace
    ],
)
def test_repair_edges(broken, corpus, expected):
    assert repair_text(broken, vocabulary_of([corpus, broken])) == expected


def test_vocabulary_leaves_out_the_fragments_of_broken_words():
    for newline in ("\n", "\r\n", "\r"):
        assert set(vocabulary_of([f"Condi-{newline}tional here"])) == {"here"}, repr(newline)


# ---------------------------------------------------------------- mojibake and HTML entities


@pytest.mark.parametrize(
    ("text", "expected", "kinds"),
    [
        ("caf\u00c3\u00a9 and na\u00c3\u00afve", "café and naïve", {"mojibake": 1}),
        ("\u00e2\u20ac\u0153quoted\u00e2\u20ac\u009d", "\u201cquoted\u201d", {"mojibake": 1}),
        ("A &amp; B, it&#39;s &lt;b&gt;", "A & B, it's <b>", {"HTML entities": 1}),
        ("$a < b$ &amp; c", "$a < b$ & c", {"HTML entities": 1}),  # beside a literal "<"
        ("\u201ccurly\u201d quotes stay", None, {}),  # not uncurled
        ("中文，逗号 and ＡＢＣ", None, {}),  # full-width forms stay
        ("plain ASCII & no entity", None, {}),
    ],
)
def test_mojibake_and_html_entities_are_repaired_and_counted(text, expected, kinds):
    counts = Counter()
    assert repair_text(text, counts=counts) == (text if expected is None else expected)
    assert {k: counts[k] for k in ("mojibake", "HTML entities") if counts[k]} == kinds


# ---------------------------------------------------------------- flattened line breaks

# what the corpus uses elsewhere, counted as vocabulary_of counts it
CORPUS = vocabulary_of(
    [
        "variational inference, the proposed model",
        "low-rank low-rank lowrank adapters",
        "CNN-based detectors",
        "pretraining and pre-training and pretraining",
        "out-of-distribution",
    ]
)


@pytest.mark.parametrize(
    ("text", "expected", "case"),
    [
        # joined: the joined word occurs elsewhere in the corpus
        ("a varia- tional bound", "a variational bound", JOINED),
        ("the pro- posed model", "the proposed model", JOINED),
        ("Varia- tional bounds", "Variational bounds", JOINED),
        ("more pre- training", "more pretraining", JOINED),  # joined more often than hyphenated
        # ... or in the word list (Webster's 2nd, GCIDE; with plurals, -ed, -ing)
        ("we can- not", "we cannot", JOINED),
        ("a net- work", "a network", JOINED),
        ("of func- tions", "of functions", JOINED),
        ("by us- ing it", "by using it", JOINED),
        # closed up as a compound: the corpus writes it with the hyphen, more often
        ("a low- rank update", "a low-rank update", HYPHENATED),
        ("CNN- based", "CNN-based", HYPHENATED),
        ("out- of-distribution data", "out-of-distribution data", HYPHENATED),
        # left as written: nothing knows the word
        ("the- smoothing", None, LEFT),
        ("a forward- mode pass", None, LEFT),
        ("CNN- baseda", None, LEFT),
    ],
)
def test_flattened_line_break_hyphens(text, expected, case):
    counts = Counter()
    assert repair_text(text, CORPUS, counts) == (text if expected is None else expected)
    assert counts[case] == 1


@pytest.mark.parametrize(
    "text",
    [
        "pre- and post-training",
        "first- or second-order methods",
        "single- and multi-agent settings",
        "low- to high-resolution images",
        "neither under- nor over-fitting",
        "full- vs low-rank",
        "Self- and cross-attention",
    ],
)
def test_suspended_hyphens_stay(text):
    counts = Counter()
    assert repair_text(text, CORPUS, counts) == text
    assert counts[SUSPENDED] == 1 and counts[JOINED] == counts[HYPHENATED] == 0


@pytest.mark.parametrize(
    "text",
    [
        "maths $\\mathrm{varia}- tional$ stays",  # inside maths
        "a dash -- then more",
        "samples-- which",
        "a - b",
        "x- y",  # one letter before the break
        "snake_case- name",
    ],
)
def test_no_flattened_break_is_seen_where_there_is_none(text):
    counts = Counter()
    assert repair_text(text, vocabulary_of(["varia tional xy variational"]), counts) == text
    assert not (counts[JOINED] or counts[HYPHENATED])


def test_the_vocabulary_counts_words_and_compounds():
    assert CORPUS["low-rank"] == 2 and CORPUS["lowrank"] == 1 and CORPUS["pretraining"] == 2
    assert decide("low", "rank", CORPUS) == ("low-rank", HYPHENATED)
    assert decide("low", "rank", {"lowrank": 3, "low-rank": 2}) == ("lowrank", JOINED)
    assert decide("low", "rank", {"lowrank": 2, "low-rank": 2}) == ("low-rank", HYPHENATED)


def test_every_repair_is_counted():
    counts = Counter()
    text = "A \ufb01ne condi-\ntional \\emph{bound}\r\nwith a varia- tional gap &amp; more"
    assert repair_text(text, CORPUS, counts) == (
        "A fine conditional bound with a variational gap & more"
    )
    assert counts == Counter(
        {
            "line endings": 1,
            "ligatures": 1,
            "HTML entities": 1,
            "words joined at a line break": 1,
            "LaTeX formatting": 1,
            "whitespace": 1,
            JOINED: 1,
        }
    )


@pytest.mark.parametrize(
    ("text", "expected", "kinds"),
    [
        ("condi-\r\ntional", "conditional", {"line endings", "words joined at a line break"}),
        ("condi-\rtional", "conditional", {"line endings", "words joined at a line break"}),
        ("x\ry", "x y", {"line endings", "whitespace"}),
        ("a\u00adb", "ab", {"soft hyphens"}),
        ("a\x07b", "a b", {"control characters"}),
    ],
)
def test_each_repair_is_counted_under_its_own_name(text, expected, kinds):
    counts = Counter()
    assert repair_text(text, counts=counts) == expected
    assert counts == Counter(dict.fromkeys(kinds, 1))


def test_counts_add_up_over_texts_and_the_default_vocabulary_is_the_texts_own():
    counts = Counter()
    for _ in range(3):
        repair_text("a\u00adb", counts=counts)
    assert counts == Counter({"soft hyphens": 3})
    # no vocabulary given: this text's own words decide ("properties" occurs unbroken)
    assert repair_text("proper-\nties, as in properties") == "properties, as in properties"
    assert repair_text("a varia- tional gap, variational") == "a variational gap, variational"
    assert join_broken_words("proper-\nties, as in properties") == "properties, as in properties"
    assert (
        join_broken_words("finite-\nsample of a finite sample")
        == "finite-sample of a finite sample"
    )


def test_fix_unicode_repairs_without_counts_and_counts_only_what_it_changed():
    assert fix_unicode("caf&eacute; &amp; more") == "café & more"
    counts = Counter()
    assert fix_unicode("café stays", counts) == "café stays" and counts == Counter()

"""Ingest's text repair: PDF line breaks, LaTeX, whitespace (venue strings: test_ingest_venues)."""

from __future__ import annotations

import pytest

from pipeline.ingest.repair import normalise_space, repair_text, vocabulary_of

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
        # markup stays text
        ("<script>alert(1)</script> &amp; <b>b</b>", None),
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
        assert vocabulary_of([f"Condi-{newline}tional here"]) == {"here"}, repr(newline)

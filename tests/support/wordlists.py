"""What no label or term may hold, listed here independently of `pipeline.text` (which the label
stage filters with), so a word dropped from the pipeline's own lists shows up in the tests:
scikit-learn's English stop words, and the rhetoric of ML abstracts written out by hand."""

from __future__ import annotations

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

ML_RHETORIC = frozenset(
    """
    propose proposed proposes proposing method methods approach approaches result results show
    shows shown paper papers novel new existing work study demonstrate demonstrates achieve
    achieves improve improves improved significantly experiments experimental empirical
    extensive effective effectively introduce introduces present presents outperform outperforms
    baseline baselines benchmark benchmarks state-of-the-art recent recently previous challenging
    use using based code github https
    """.split()
)
# Too general to name a topic alone (allowed inside a phrase: "reinforcement learning").
GENERIC_ALONE = frozenset("learning model models data task tasks problem framework network".split())
NOT_IN_LABELS = frozenset(ENGLISH_STOP_WORDS) | ML_RHETORIC


def label_words(label: str) -> list[str]:
    return label.lower().replace(",", " ").split()


def faults(label: str) -> set[str]:
    """The stop or filler words in a label (or a term), and a generic word standing alone as
    one of its terms."""
    alone = {t.strip() for t in label.lower().split(",")} & GENERIC_ALONE
    return (set(label_words(label)) & NOT_IN_LABELS) | alone

"""The text that stands for a paper: what it is embedded as, and the terms counted in it.

Terms are words and phrases of up to `max_ngram` words that never cross punctuation, an English
stop word or a filler word of ML abstracts ("propose", "method", "results", ...), and that are
not made of generic words alone ("learning" and "models" only inside phrases such as
"reinforcement learning"); maths, LaTeX, URLs and markup go first. The label stage names topics
with these terms and the metrics stage scores them (NPMI) with the same tokeniser.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd

MAX_NGRAM = 3  # the longest phrase any setting counts as a term (label.max_ngram <= this)

# The rhetoric of ML abstracts: never part of a term or a label.
ML_FILLER = frozenset(
    """
    propose proposed proposes proposing method methods approach approaches result results show
    shows shown showing paper papers novel new existing work works study studies demonstrate
    demonstrates demonstrated use used using uses based achieve achieves achieved
    improve improves improved improvement improvements significantly significant experiments
    experimental empirical empirically extensive extensively various effective effectively
    efficiently introduce introduces introduced present presents address addresses provide
    provides leverage leverages leveraging furthermore moreover additionally however including
    include includes outperform outperforms outperforming baseline baselines benchmark
    benchmarks code available github com https http www org et al le ge wide range key
    challenge challenges challenging recent recently previous previously different well simple
    state-of-the-art so-called well-known enable enables allow allows able paradigm aim aims
    """.split()
)
# Too general to name a topic alone, yet part of phrases that do ("reinforcement learning").
GENERIC = frozenset(
    """
    learning learn learned model models modeling data task tasks problem problems framework
    performance efficient large small high low state art prior network networks neural deep
    training train trained algorithm algorithms optimal feature features estimating generating
    generate dataset datasets machine
    """.split()
)
_LATEX_MATH = re.compile(r"\$[^$]*\$")
_LATEX_COMMAND = re.compile(r"\\[a-zA-Z]+")
_URL = re.compile(r"https?://\S+|www\.\S+")
_MARKUP = re.compile(r"<[^>]{0,200}>")
TOKEN_PATTERN = r"(?u)\b[a-zA-Z][a-zA-Z\-]*[a-zA-Z]\b"
_WORD = re.compile(TOKEN_PATTERN)
_PHRASE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"'/|\u2018\u2019\u201c\u201d]+|\s-+\s|--+")


def embedding_texts(documents: pd.DataFrame) -> list[str]:
    """The text embedded per paper: 'Title. Abstract' where a title exists, else the abstract."""
    return [
        f"{title}. {abstract}" if isinstance(title, str) and title else abstract
        for title, abstract in zip(documents["title"], documents["abstract"], strict=True)
    ]


def clean_for_terms(text: str) -> str:
    """Drop maths, LaTeX commands, URLs and markup before counting terms."""
    for pattern in (_LATEX_MATH, _URL, _MARKUP, _LATEX_COMMAND):
        text = pattern.sub(" ", text)
    return text


def term_texts(documents: pd.DataFrame) -> list[str]:
    """The text terms are counted in per paper: 'Title. Abstract' without maths and markup."""
    return [clean_for_terms(text) for text in embedding_texts(documents)]


def banned_words() -> set[str]:
    """English stop words and ML filler: no term or label contains one."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return set(ENGLISH_STOP_WORDS | ML_FILLER)


def phrase_terms(text: str, max_ngram: int, banned: set[str]) -> list[str]:
    """The terms of a text: runs of words between punctuation and banned words, cut into every
    n-gram up to `max_ngram` words, less those made only of GENERIC words."""
    terms = []
    for segment in _PHRASE_BREAK.split(clean_for_terms(text).lower()):
        run: list[str] = []
        for word in [*_WORD.findall(segment), ""]:  # "" ends the last run
            if word and word not in banned:
                run.append(word)
                continue
            for n in range(1, max_ngram + 1):
                for i in range(len(run) - n + 1):
                    if not GENERIC.issuperset(run[i : i + n]):
                        terms.append(" ".join(run[i : i + n]))
            run = []
    return terms


def term_analyzer(max_ngram: int = MAX_NGRAM) -> Callable[[str], list[str]]:
    """The term tokeniser: text -> its terms of up to `max_ngram` words, in order.

    A paper uses a term of n <= max_ngram words whatever max_ngram is, so scores that ask
    whether papers use given terms (NPMI) may count with the default.
    """
    banned = banned_words()
    return lambda text: phrase_terms(text, max_ngram, banned)

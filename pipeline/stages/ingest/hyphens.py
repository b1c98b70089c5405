"""Words a source hyphenated at a line break and then flattened to one line, leaving a hyphen
and a space inside the word (`varia- tional`, `pro- posed`).

Such a word is joined when the joined form is a known word: one the corpus uses elsewhere
(more often than the hyphenated form), else one of an English word list (Webster's 2nd and
GCIDE, from the `english-words` package). Where the corpus uses the hyphenated form instead
(`low- rank`, `test- time`), the hyphen is kept and the space dropped. Suspended hyphens stay as
written (`pre- and post-training`, `first- or second-order`, `low- to high-resolution`), and so
does everything neither the corpus nor the word list knows (`the- smoothing`), and maths.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from functools import cache

# A word (or compound), a hyphen, one space, a word: `varia- tional`, `out-of- distribution`.
# A dash (`--`, ` - `) never matches: the part before must end in a letter or digit.
FLATTENED = re.compile(r"(?<![\w-])([^\W_]+(?:-[^\W_]+)*)- ([^\W_]+(?:-[^\W_]+)*)(?![\w-])")
# The words after a suspended hyphen: `pre- and post-`, `first- or second-`, `low- to high-`.
SUSPENSION = frozenset("and or nor to vs versus but than as via through".split())
MATH = re.compile(r"(\$\$.+?\$\$|(?<!\\)\$.+?(?<!\\)\$|\\\(.+?\\\)|\\\[.+?\\\])", re.S)

# The cases, as the ingest log counts them
JOINED = "flattened line breaks joined"
HYPHENATED = "flattened line breaks closed up as compounds"
SUSPENDED = "suspended hyphens kept"
LEFT = "flattened line breaks left as written (word unknown)"


@cache
def word_list() -> frozenset[str]:
    """Lowercase English words (Webster's 2nd and GCIDE), loaded once when first needed."""
    from english_words import get_english_words_set

    return frozenset(get_english_words_set(["web2", "gcide"], lower=True))


# Endings the lists seldom hold, and what is left of the word without them
INFLECTIONS = (("s", ""), ("es", ""), ("d", ""), ("ed", ""), ("ing", ""), ("ing", "e"))


def in_word_list(word: str) -> bool:
    """A word of the list, or a plural, past or -ing form of one (the lists hold few)."""
    words = word_list()
    return word in words or any(
        word.endswith(end) and word[: -len(end)] + stem in words for end, stem in INFLECTIONS
    )


def decide(left: str, right: str, vocabulary: Mapping[str, int]) -> tuple[str, str]:
    """(what to write, which case) for `left- right`; `vocabulary` counts the corpus's words
    and compounds, lowercased."""
    written = f"{left}- {right}"
    if right.lower() in SUSPENSION:
        return written, SUSPENDED
    joined, hyphenated = left + right, f"{left}-{right}"
    n_joined = vocabulary.get(joined.lower(), 0)
    n_hyphenated = vocabulary.get(hyphenated.lower(), 0)
    # a word broken in two: letters before the break, lowercase after, no capital inside
    plain = (
        len(left) >= 2
        and left.isalpha()
        and right[0].islower()
        and not any(c.isupper() for c in left[1:])
    )
    if plain and n_joined > n_hyphenated:
        return joined, JOINED
    if n_hyphenated:
        return hyphenated, HYPHENATED
    if plain and in_word_list(joined.lower()):
        return joined, JOINED
    return written, LEFT


def join_flattened_breaks(
    text: str, vocabulary: Mapping[str, int], counts: Counter | None = None
) -> str:
    """`text` with its flattened line-break hyphens repaired (outside maths); `counts` gains
    one per case (joined, hyphenated, suspended, left)."""
    if "- " not in text:
        return text

    def repair(match: re.Match) -> str:
        written, case = decide(match.group(1), match.group(2), vocabulary)
        if counts is not None:
            counts[case] += 1
        return written

    parts = MATH.split(text)  # odd items are maths, kept as written
    for i in range(0, len(parts), 2):
        parts[i] = FLATTENED.sub(repair, parts[i])
    return "".join(parts)


def flattened_breaks(text: str) -> list[tuple[str, str]]:
    """Every `left- right` pair in `text` outside maths (for measuring)."""
    parts = MATH.split(text)
    return [m.groups() for part in parts[::2] for m in FLATTENED.finditer(part)]

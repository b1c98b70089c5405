"""Text repair for abstracts and titles as extracted from PDFs and exports: one clean line.

Windows line endings, tabs, control characters and PDF ligatures are normalised; mojibake
(`Ã©` -> `é`) and HTML entities (`&amp;` -> `&`) are repaired by ftfy; words hyphenated across a
line break are joined (`condi-\\ntional` -> `conditional`, but `self-\\nsupervised` ->
`self-supervised`), hard line breaks are unwrapped, LaTeX formatting outside maths is dropped
(`\\textit{x}` -> `x`, `\\footnote{...}` and `\\cite{...}` removed), and words a source broke at
a line break and flattened (`varia- tional`) are joined where the word is known (`hyphens`).
Maths (`$...$`), HTML tags and everything else stay as written: the pages escape them. Each
repair that changed a text is counted (`repair_text(..., counts=)`) for the ingest log.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Mapping

import ftfy

from pipeline.stages.ingest.hyphens import join_flattened_breaks

# ftfy's repairs of mojibake and HTML entities only: quotes, character widths (CJK
# punctuation), ligatures, line breaks and control characters are left to the rules below.
UNICODE_FIXES = ftfy.TextFixerConfig(
    unescape_html=True,  # also beside a literal "<" (maths: "$a < b$ &amp; ...")
    uncurl_quotes=False,
    fix_character_width=False,
    fix_latin_ligatures=False,
    fix_line_breaks=False,
    fix_surrogates=False,
    remove_control_chars=False,
    normalization=None,
    explain=True,
)
# Control characters (not tab or newline) and lone surrogates (JSON "\ud800"), which Parquet
# cannot store: each becomes a space.
UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
LIGATURES = str.maketrans(
    {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"}
)
# A word hyphenated at a line break ("condi-\ntional"); the part before may itself hold hyphens.
BROKEN_WORD = re.compile(r"(?<![\w-])(\w(?:[\w-]*\w)?)-[ \t]*\n[ \t]*(\w+)")
WORD = re.compile(r"\w+(?:-\w+)*")  # a word or a hyphenated compound, unbroken
# Whole words that start hyphenated compounds, kept when a break follows them
# ("self-\nsupervised" -> "self-supervised"). Syllables PDF hyphenation splits at (con-, re-,
# pre-, in-) are deliberately absent: "con-\nvex" must become "convex".
COMPOUND_FIRST = frozenset(
    """self non semi multi cross well high low large small long short fine end real zero few one
    two three first second state data task model open closed trade plug top half full single
    double mixed black white human sample time domain""".split()
)
# Endings that never start a word of their own: "token-\nization" is "tokenization".
SUFFIXES = frozenset("ing ings ed er ers ly ity ities ize ized izes ization izations".split())
BRACED = r"\{((?:[^{}]|\{[^{}]*\})*)\}"  # {...} with one level of nested braces
MATH = re.compile(r"(\$\$.+?\$\$|(?<!\\)\$.+?(?<!\\)\$|\\\(.+?\\\)|\\\[.+?\\\])", re.S)
LATEX_DROP = re.compile(
    r"\s*~?\\(?:footnote|cite[pt]?|citeauthor|ref|eqref|label)\*?(?:\[[^\]]*\])*\s*" + BRACED
)
LATEX_FORMAT = re.compile(
    r"\\(?:text(?:it|bf|tt|sc|rm|sf|sl|up|normal)|emph|underline|mbox)\s*" + BRACED
)
LATEX_OLD_FORMAT = re.compile(r"\{\\(?:em|it|bf|tt|sc|rm|sf|sl)\s+([^{}]*)\}")
LATEX_ESCAPED = re.compile(r"\\([%&_#])")


def vocabulary_of(texts: Iterable[str]) -> Counter[str]:
    """How often each word and hyphenated compound occurs in `texts`, lowercased (words split
    at a line break are not among them)."""
    vocabulary: Counter[str] = Counter()
    for text in texts:
        text = text.lower().replace("\r\n", "\n").replace("\r", "\n")
        text = BROKEN_WORD.sub(" ", text) if "\n" in text else text
        vocabulary.update(WORD.findall(text))
    return vocabulary


def fix_unicode(text: str, counts: Counter | None = None) -> str:
    """Mojibake and HTML entities repaired by ftfy; `counts` gains "mojibake" and "HTML
    entities" when the text had them. ASCII text without `&` has neither and is not looked at."""
    if text.isascii() and "&" not in text:
        return text
    fixed, steps = ftfy.fix_and_explain(text, config=UNICODE_FIXES)
    if counts is not None and fixed != text:
        kinds = {"HTML entities" if s.parameter == "unescape_html" else "mojibake" for s in steps}
        counts.update(kinds)
    return fixed


def join_broken_words(text: str, vocabulary: Collection[str] | None = None) -> str:
    """Join words hyphenated across a line break; keep the hyphen of real compounds.

    `vocabulary` holds the words seen unbroken (the corpus's, else this text's own). In order:
    the hyphen stays when the part after the break does not start lowercase or the part before
    is not a plain word (`GPU-`, `3D-`, `end-to-`); the word is joined when the joined form is
    known (`proper-ties`); the hyphen stays when the hyphenated form is known; the word is
    joined when the part after is a bare suffix (`token-ization`); the hyphen stays when the part
    before starts compounds (`self-`, `non-`, `multi-`) or both parts are known words of three
    letters or more (`finite-sample`); otherwise the word is joined (`condi-tional`).
    """
    if "\n" not in text:
        return text
    known = vocabulary_of([text]) if vocabulary is None else vocabulary

    def repair(match: re.Match) -> str:
        left, right = match.group(1), match.group(2)
        hyphenated, joined = f"{left}-{right}", left + right
        plain = left.isalpha() and right[0].islower() and not any(c.isupper() for c in left[1:])
        if not plain:
            return hyphenated
        if joined.lower() in known:
            return joined
        if hyphenated.lower() in known:
            return hyphenated
        if right.lower() in SUFFIXES:
            return joined
        if left.lower() in COMPOUND_FIRST:
            return hyphenated
        parts_known = all(len(p) >= 3 and p.lower() in known for p in (left, right))
        return hyphenated if parts_known else joined

    return BROKEN_WORD.sub(repair, text)


def strip_latex_formatting(text: str) -> str:
    """Drop LaTeX formatting outside maths: `\\emph{x}` -> `x`, `\\footnote{..}` -> nothing."""
    if "\\" not in text and "{" not in text:
        return text
    parts = MATH.split(text)  # odd items are maths, kept as written
    for i in range(0, len(parts), 2):
        part = parts[i]
        for _ in range(4):  # nested: \textbf{\emph{x}}
            before = part
            part = LATEX_DROP.sub("", part)
            part = LATEX_FORMAT.sub(r"\1", part)
            part = LATEX_OLD_FORMAT.sub(r"\1", part)
            if part == before:
                break
        parts[i] = LATEX_ESCAPED.sub(r"\1", part)
    return "".join(parts)


def repair_text(
    text: str, vocabulary: Mapping[str, int] | None = None, counts: Counter | None = None
) -> str:
    """Clean an abstract or title as extracted from a PDF or an export into one line of text.

    `vocabulary` (see `vocabulary_of`) decides hyphenated line breaks; by default, this text's.
    `counts` gains one for each repair that changed the text (and per flattened break).
    """
    counts = Counter() if counts is None else counts
    known = vocabulary_of([text]) if vocabulary is None else vocabulary
    steps = (
        ("line endings", lambda t: t.replace("\r\n", "\n").replace("\r", "\n")),
        ("soft hyphens", lambda t: re.sub("\u00ad[ \t]*\n[ \t]*", "", t).replace("\u00ad", "")),
        ("mojibake or HTML entities", lambda t: fix_unicode(t, counts)),
        ("ligatures", lambda t: t.translate(LIGATURES)),
        ("control characters", lambda t: UNPRINTABLE.sub(" ", t)),
        ("words joined at a line break", lambda t: join_broken_words(t, known)),
        ("LaTeX formatting", strip_latex_formatting),
        ("whitespace", normalise_space),
    )
    for name, step in steps:
        repaired = step(text)
        if repaired != text and name != "mojibake or HTML entities":  # counted by kind
            counts[name] += 1
        text = repaired
    return join_flattened_breaks(text, known, counts)


def normalise_space(text: str) -> str:
    """NFC-normalise and collapse every whitespace run to one space."""
    return " ".join(unicodedata.normalize("NFC", text).split())

"""The text that stands for a paper: what it is embedded as, and the terms counted in it.

Terms are words and phrases of up to `max_ngram` words that never cross punctuation, a stop
word or a filler word of ML abstracts ("propose", "method", "results", ...), and that are not
made of generic words alone ("learning" and "models" only inside phrases such as
"reinforcement learning"); maths, LaTeX, URLs and markup go first. Words are letters of any
script (Cyrillic, Arabic, Greek, ...); Chinese is cut into words by jieba, Japanese at its
changes of script (kanji compounds and katakana words are terms, hiragana particles break
phrases), and CJK words in a phrase are joined without spaces (强化学习). The label stage names
topics with these terms and the metrics stage scores them (NPMI) with the same tokeniser.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from functools import cache, lru_cache

import pandas as pd
import regex  # Unicode scripts and set operations (\p{Han}, [\p{L}--\p{Han}]), which re lacks

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
    compared compare compares reveal reveals revealed success successful successfully obtain
    obtains obtained presented promise promising establish establishes established important
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
# The same rhetoric and generic words in the other languages most often met (our own short
# lists: stop-word lists hold no ML rhetoric).
OTHER_FILLER = frozenset(
    """
    我们 本文 提出 一种 方法 基于 通过 实验 结果 表明 证明 显著 提高 现有 可以 能够 使用 利用
    进行 以及 并且 然而 此外 其中 这些 这种 一个 研究 工作 新的 本研究 本論文 提案 手法 実験
    結果 既存 従来 предлагаем предложенный предлагается метод методы метода подход подхода
    результаты показываем показано работе статье новый новая новые существующих используя
    эксперименты نقترح طريقة نتائج النتائج الورقة البحث تظهر
    """.split()
)
OTHER_GENERIC = frozenset(
    """
    学习 模型 数据 任务 问题 框架 性能 网络 神经 深度 训练 算法 特征 数据集 学習 モデル データ
    タスク 問題 ネットワーク 深層 訓練 アルゴリズム 特徴 обучение обучения модель модели
    данных данные задача задачи сеть сети нейронных нейронные глубокого алгоритм
    """.split()
)
# stop-words' lists of the languages not written in Latin letters (those of Latin-script
# languages could ban English words: Italian "data", French "point")
STOP_WORD_LANGUAGES = (
    "arabic bulgarian chinese greek gujarati hebrew hindi japanese korean persian russian ukrainian"
).split()
_LATEX_MATH = re.compile(r"\$[^$]*\$")
_LATEX_COMMAND = re.compile(r"\\[a-zA-Z]+")
_URL = re.compile(r"https?://\S+|www\.\S+")
_MARKUP = re.compile(r"<[^>]{0,200}>")
_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\u30fc"  # ー, the long-vowel mark, is "Common"
_LETTER = rf"[[\p{{L}}\p{{M}}]--[{_CJK}]]"
_NOT_IN_WORD = rf"[[\p{{L}}\p{{M}}\p{{N}}_]--[{_CJK}]]"
# A word: two or more letters (hyphens inside) of a script written with spaces, not glued to
# digits or underscores (word2vec, x_1 are no terms), as `\b[a-zA-Z][a-zA-Z-]*[a-zA-Z]\b` in
# English; or a run of Chinese characters, of katakana, of hiragana.
TOKEN_PATTERN = (
    rf"(?P<han>\p{{Han}}+)|(?P<katakana>[\p{{Katakana}}\u30fc]+)|(?P<hiragana>\p{{Hiragana}}+)"
    rf"|(?<!{_NOT_IN_WORD})(?P<word>{_LETTER}(?:{_LETTER}|-)*{_LETTER})(?!{_NOT_IN_WORD})"
)
_TOKEN = regex.compile(TOKEN_PATTERN, regex.V1)
# the same words in ASCII text, which the re module finds about three times faster
_ASCII_WORD = re.compile(r"\b[a-zA-Z][a-zA-Z\-]*[a-zA-Z]\b")
_CJK_CHAR = regex.compile(rf"[{_CJK}]", regex.V1)
_WORD_CHAR = regex.compile(r"[\p{L}\p{N}]")
_WORDLESS_ASCII = re.compile(r"(?<!\S)[^\sA-Za-z0-9]+(?!\S)")  # an ASCII text's words without one
# ASCII and CJK full-width punctuation, Arabic comma, semicolon and question mark
_PHRASE_BREAK = re.compile(
    r"[.,;:!?()\[\]{}\"'/|\u2018\u2019\u201c\u201d\u3000-\u303f\uff01-\uff0f\uff1a-\uff20"
    r"\uff3b-\uff40\uff5b-\uff65\u060c\u061b\u061f\u06d4]+|\s-+\s|--+"
)
LONGEST_JAPANESE_TERM = 8  # kanji compounds longer than this are cut like Chinese


def embedding_texts(documents: pd.DataFrame) -> list[str]:
    """The text embedded per paper: 'Title. Abstract' where a title exists, else the abstract."""
    return [
        f"{title}. {abstract}" if isinstance(title, str) and title else abstract
        for title, abstract in zip(documents["title"], documents["abstract"], strict=True)
    ]


def text_key(text: str) -> str:
    """The embedding cache's key of a text embedded: a hash of its exact characters."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def clean_for_terms(text: str) -> str:
    """Drop maths, LaTeX commands, URLs and markup before counting terms."""
    for pattern in (_LATEX_MATH, _URL, _MARKUP, _LATEX_COMMAND):
        text = pattern.sub(" ", text)
    return text


def term_texts(documents: pd.DataFrame) -> list[str]:
    """The text terms are counted in per paper: 'Title. Abstract' without maths and markup."""
    return [clean_for_terms(text) for text in embedding_texts(documents)]


def count_words(text: str) -> int:
    """Words as a reader counts them: the words between spaces, and in Chinese and Japanese,
    written without spaces, one word per two characters (a 300-character abstract is about
    150 words, not one)."""
    if text.isascii():  # no Chinese or Japanese: the re module, four times faster
        return len(text.split()) - len(_WORDLESS_ASCII.findall(text))
    n_cjk = len(_CJK_CHAR.findall(text))
    spaced = [w for w in _CJK_CHAR.sub(" ", text).split() if _WORD_CHAR.search(w)]
    return len(spaced) + math.ceil(n_cjk / 2)


def has_words(text: str, n: int) -> bool:
    """count_words(text) >= n, counting a prefix first: one that ends at a space holds a subset
    of the text's words (count_words costs 0.1 ms on an abstract, for a check of five words)."""
    cut = text.find(" ", 40 * n)
    return (cut > 0 and count_words(text[:cut]) >= n) or count_words(text) >= n


@cache
def banned_words() -> frozenset[str]:
    """Stop words (English, and those of the languages not written in Latin letters) and ML
    filler: no term or label contains one."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    from stop_words import get_stop_words

    latin = regex.compile(r"\p{Latin}")
    others = {
        word.lower()
        for language in STOP_WORD_LANGUAGES
        for word in get_stop_words(language)
        if not latin.search(word)
    }
    return frozenset(ENGLISH_STOP_WORDS | ML_FILLER | OTHER_FILLER | others)


def _is_cjk(word: str) -> bool:
    return bool(word) and bool(_CJK_CHAR.match(word))


def _cut_chinese(token: str) -> list[str]:
    """jieba's words of a run of Chinese characters (imported here, not with the module: a
    tenth of a second in every stage process, for corpora that rarely hold Chinese)."""
    import rjieba

    return rjieba.cut(token)


def words_of(segment: str, japanese: bool) -> list[str | None]:
    """The words of a piece of text between punctuation, in order; None where a phrase must
    break (hiragana particles, a lone Chinese character)."""
    if segment.isascii():
        return _ASCII_WORD.findall(segment)
    words: list[str | None] = []
    for match in _TOKEN.finditer(segment):
        kind, token = match.lastgroup, match.group()
        if kind == "han":
            long = not japanese or len(token) > LONGEST_JAPANESE_TERM
            cut = _cut_chinese(token) if long else [token]
            words.extend(w if len(w) > 1 else None for w in cut)
        elif kind == "word" or (kind == "katakana" and len(token) > 1):
            words.append(token)
        else:  # hiragana, a lone katakana
            words.append(None)
    return words


def term_words(term: str) -> list[str]:
    """The words of a term: 'optimal transport' has two, and so has '强化学习' (强化, 学习),
    whose words are joined without a space; Chinese characters are always cut by jieba here,
    so that a term and the longer terms holding it are cut alike."""
    words: list[str] = []
    for piece in term.split():
        if not _CJK_CHAR.search(piece):
            words.append(piece)
            continue
        for match in _TOKEN.finditer(piece):
            token = match.group()
            words.extend(_cut_chinese(token) if match.lastgroup == "han" else [token])
    return words


def _join(words: list[str]) -> str:
    """Words of a phrase joined: with a space, none between two CJK words."""
    out = words[0]
    for before, word in zip(words, words[1:], strict=False):
        out += word if _is_cjk(before[-1]) and _is_cjk(word[0]) else " " + word
    return out


def phrase_terms(text: str, max_ngram: int, banned: frozenset[str] | set[str]) -> list[str]:
    """The terms of a text: runs of words between punctuation and banned words, cut into every
    n-gram up to `max_ngram` words, less those made only of generic words."""
    terms = []
    text = clean_for_terms(text).lower()
    japanese = bool(regex.search(r"[\p{Hiragana}\p{Katakana}]", text))
    generic = GENERIC | OTHER_GENERIC
    join = " ".join if text.isascii() else _join  # no CJK word to join without a space
    for segment in _PHRASE_BREAK.split(text):
        run: list[str] = []
        for word in [*words_of(segment, japanese), None]:  # None ends the last run
            if word and word not in banned:
                run.append(word)
                continue
            for n in range(1, max_ngram + 1):
                for i in range(len(run) - n + 1):
                    if not generic.issuperset(run[i : i + n]):
                        terms.append(join(run[i : i + n]))
            run = []
    return terms


# Texts whose terms are kept: a stage may read a paper's terms more than once (the label stage
# counts every paper's, then BERTopic's KeyBERTInspired reads its representative papers' again).
# A bound, as a million papers' terms would not fit in memory (about 10 KB a paper).
REMEMBERED_TEXTS = 16_384


@lru_cache(maxsize=REMEMBERED_TEXTS)
def _remembered_terms(text: str, max_ngram: int) -> tuple[str, ...]:
    return tuple(phrase_terms(text, max_ngram, banned_words()))


def term_analyzer(max_ngram: int = MAX_NGRAM) -> Callable[[str], tuple[str, ...]]:
    """The term tokeniser: text -> its terms of up to `max_ngram` words, in order.

    A paper uses a term of n <= max_ngram words whatever max_ngram is, so scores that ask
    whether papers use given terms (NPMI) may count with the default.
    """
    return lambda text: _remembered_terms(text, max_ngram)

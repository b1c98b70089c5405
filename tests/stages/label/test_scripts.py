"""Terms and labels of papers written in scripts other than Latin, through the label stage's core:
Chinese and Japanese are cut into words (never a sentence as one term), Russian and Arabic words
are terms, and stop words of those languages are not."""

from __future__ import annotations

import numpy as np
import pytest
import regex

from pipeline.config import LabelConfig
from pipeline.stages.label import make_topics
from pipeline.text import banned_words, phrase_terms
from tests.support import tables as make
from tests.support.inprocess import clusters_for, unit_vectors
from tests.support.multilingual import ARABIC, CHINESE, JAPANESE, RUSSIAN

LONGEST_CJK_TERM = 12  # characters: a phrase of a few words, never a clause


@pytest.fixture(scope="module")
def labelled():
    groups = [CHINESE, JAPANESE, RUSSIAN, ARABIC]
    abstracts = [a for group in groups for a in group]
    topics_of = [k for k, group in enumerate(groups) for _ in group]
    documents = make.documents(abstracts)
    vectors = unit_vectors(len(abstracts))
    clusters = clusters_for(documents, vectors, topics_of)
    topics, _ = make_topics(documents, clusters, vectors, LabelConfig(representation="ctfidf"))
    return topics.set_index("topic")


def test_chinese_is_cut_into_words_and_phrases_not_clauses():
    terms = phrase_terms(CHINESE[0], 3, banned_words())
    assert {"强化学习", "样本效率", "环境模型"} <= set(terms)
    assert max(map(len, terms)) <= LONGEST_CJK_TERM
    assert not {"的", "我们", "本文", "提出", "方法"} & set(terms)  # stop words and filler


def test_japanese_kanji_and_katakana_words_are_terms_hiragana_breaks_them():
    terms = set(phrase_terms(JAPANESE[0], 3, banned_words()))
    assert {"大規模言語モデル", "知識蒸留", "量子化", "推論速度"} <= terms
    assert not any("の" in term or "を" in term for term in terms)


def test_russian_and_arabic_words_are_terms_their_stop_words_are_not():
    russian = set(phrase_terms(RUSSIAN[0], 3, banned_words()))
    assert {"графовые нейронные сети", "вершин"} <= russian
    assert not {"и", "для", "мы", "однако"} & russian
    arabic = set(phrase_terms(ARABIC[0], 3, banned_words()))
    assert {"التعرف", "الكلام", "اللهجات"} <= arabic
    assert not {"على", "من", "في"} & arabic


def test_each_script_gets_terms_and_a_label_of_its_own(labelled):
    scripts = {0: r"\p{Han}", 1: r"[\p{Han}\p{Katakana}]", 2: r"\p{Cyrillic}", 3: r"\p{Arabic}"}
    for topic, script in scripts.items():
        terms, label = list(labelled.loc[topic, "terms"]), labelled.loc[topic, "label"]
        assert len(terms) >= 2, (topic, terms)
        assert all(regex.search(script, term) for term in terms), (topic, terms)
        assert regex.search(script, label) and not label.startswith("Topic"), label
    cjk_terms = [t for topic in (0, 1) for t in labelled.loc[topic, "terms"]]
    assert max(map(len, cjk_terms)) <= LONGEST_CJK_TERM
    assert np.unique(labelled["label"]).size == len(labelled)

"""The label check: could a reader match each paper to its own label among all the labels? No
encoder of the build takes part, so a label is judged by the words it shares with its papers.

Every assigned paper's `title. abstract` is scored against every label by BM25 (k1 1.2, b 0.75;
the papers are the documents, each label a query): lower-cased words of two or more letters
(Chinese and Japanese cut into words), plurals folded on both sides (`fold`), each label word
counted once. A paper's rank is one plus
the labels scoring at least as high as its own, so a tie is a miss: top-1 is the share of papers
whose own label is the unique best (rank 1), MRR the mean of 1 / rank; chance is 1 / labels.
The same for the themes' labels, and for BERTopic's default names of the same topics (the top
four words of its c-TF-IDF over the topics' joined texts, as `0_the_policy_rl_reinforcement`).

BM25 is a few lines of our own rather than a library's (rank_bm25, bm25s): its rules (each label
word once, the plural folding) are this check's definition, and no such package is in the lock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import regex
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from pipeline.text import embedding_texts, words_of

K1, B = 1.2, 0.75  # BM25's usual constants (Robertson; Lucene's defaults)
BERTOPIC_NAME_WORDS = 4  # BERTopic's default topic name: its id and four top words
CHUNK = 65_536  # papers scored at once: a dense block of CHUNK x labels scores
_WORD = re.compile(r"[^\W\d_]{2,}")  # runs of two or more letters of any script
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]")
_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")


def fold(word: str) -> str:
    """A plural folded to its singular by a rule simple enough to state: words of five or more
    letters ending in -ies end in -y (policies: policy), words of four or more ending in -s lose
    it unless they end in -ss, -us or -is (networks: network; loss, corpus, analysis stay)."""
    if len(word) >= 5 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) >= 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """A text's words as the check counts them: lower-cased, two or more letters, folded; a
    run of Chinese or Japanese, written without spaces, cut into its words as the label
    stage's tokeniser cuts it (`pipeline.text.words_of`: jieba for Chinese, Japanese at its
    changes of script), rather than counted as one word."""
    text = text.lower()
    found = _WORD.findall(text)
    if text.isascii():
        return [fold(w) for w in found]
    japanese = bool(_KANA.search(text))
    out = []
    for token in found:
        if _CJK.search(token):
            out.extend(w for w in words_of(token, japanese) if w and len(w) >= 2)
        else:
            out.append(fold(token))
    return out


def query_words(label: str) -> list[str]:
    """A label's words, each once, in order."""
    return list(dict.fromkeys(words(label)))


def bm25_weights(texts: Iterable[str], vocabulary: Sequence[str]) -> sp.csr_matrix:
    """papers x vocabulary: each word's BM25 weight in each paper, idf ln(1 + (N - n + 0.5) /
    (n + 0.5)) (Lucene's, never negative) times tf (k1 + 1) / (tf + k1 (1 - b + b len / mean len)),
    a paper's length being all its words."""
    index = {w: j for j, w in enumerate(vocabulary)}
    rows, cols, lengths = [], [], []
    for i, text in enumerate(texts):
        found = words(text)
        lengths.append(len(found))
        hits = [index[w] for w in found if w in index]
        rows.extend([i] * len(hits))
        cols.extend(hits)
    n, lengths = len(lengths), np.asarray(lengths, dtype=np.float64)
    tf = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, len(index)), dtype=np.float64)
    tf.sum_duplicates()
    df = np.bincount(tf.indices, minlength=len(index))
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    norm = K1 * (1 - B + B * lengths / max(float(lengths.mean()) if n else 0.0, 1.0))
    row_of = np.repeat(np.arange(n), np.diff(tf.indptr))
    tf.data = idf[tf.indices] * tf.data * (K1 + 1) / (tf.data + norm[row_of])
    return tf


def reciprocal_ranks(texts: Sequence[str], own: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Per paper, 1 / (1 + the other labels scoring at least as high as its own label
    `labels[own]`): 1 where its own label is the unique best match."""
    queries = [query_words(label) for label in labels]
    vocabulary = sorted({w for q in queries for w in q})
    column = {w: j for j, w in enumerate(vocabulary)}
    pairs = [(column[w], k) for k, q in enumerate(queries) for w in q]
    query = sp.csr_matrix(
        (np.ones(len(pairs)), tuple(np.array(pairs, dtype=np.int64).reshape(-1, 2).T)),
        shape=(len(vocabulary), len(labels)),
    )
    weights = bm25_weights(texts, vocabulary)
    own = np.asarray(own, dtype=np.int64)
    ranks = np.empty(len(own), dtype=np.float64)
    for start in range(0, len(own), CHUNK):
        block = slice(start, start + CHUNK)
        scores = np.round((weights[block] @ query).toarray(), 9)  # sums in any order tie exactly
        mine = scores[np.arange(len(scores)), own[block]]
        ranks[block] = (scores >= mine[:, None]).sum(axis=1)  # its own label counts itself
    return 1.0 / ranks


def match_figures(texts: Sequence[str], own: Sequence, labels: dict) -> dict:
    """top-1, MRR and chance of matching each paper (`texts`) to its own label (`own`: each
    paper's key into `labels`, key -> label)."""
    keys = list(labels)
    position = {key: k for k, key in enumerate(keys)}
    rr = reciprocal_ranks(texts, np.array([position[o] for o in own]), [labels[k] for k in keys])
    top1 = rr == 1.0
    return {
        "labels": len(keys),
        "top1": float(top1.mean()) if len(rr) else None,
        "mrr": float(rr.mean()) if len(rr) else None,
        "chance": 1.0 / len(keys) if keys else None,
        "_top1": top1,
    }


def bertopic_clean(text: str) -> str:
    """BERTopic's own preprocessing before its vectorizer (BERTopic._preprocess_text, English):
    line breaks and tabs to spaces, then only ASCII letters, digits and spaces."""
    return re.sub(r"[^A-Za-z0-9 ]+", "", text.replace("\n", " ").replace("\t", " "))


def class_tfidf(counts: sp.csr_matrix) -> sp.csr_matrix:
    """BERTopic's c-TF-IDF with its defaults (ClassTfidfTransformer: each class's counts as
    shares, times log(1 + mean words per class / the word's count)). Written out here, the few
    lines it is, because importing bertopic for it cost every build's metrics stage 5.4 s; the
    tests check it against BERTopic's own weights."""
    df = np.asarray(counts.sum(axis=0)).ravel()
    idf = np.log(int(counts.sum(axis=1).mean()) / df + 1)
    return (normalize(counts, axis=1, norm="l1") @ sp.diags(idf)).tocsr().sorted_indices()


def bertopic_names(texts: Sequence[str], topics: Sequence[int]) -> dict[int, str]:
    """BERTopic's default names of the given topics (-1 among them as BERTopic fits it too):
    its c-TF-IDF over each topic's joined texts counted by a default CountVectorizer, the top
    four words by weight (ties: the first in the vocabulary)."""
    from sklearn.feature_extraction.text import CountVectorizer

    frame = pd.DataFrame({"topic": np.asarray(topics), "text": [bertopic_clean(t) for t in texts]})
    joined = frame.groupby("topic", sort=True)["text"].agg(" ".join)
    vectorizer = CountVectorizer()
    try:
        counts = vectorizer.fit_transform(joined.tolist())
    except ValueError:  # no word left (papers in Chinese, say): BERTopic's names would be empty
        return {int(topic): "" for topic in joined.index}
    weights = class_tfidf(counts)
    vocabulary = vectorizer.get_feature_names_out()
    names = {}
    for i, topic in enumerate(joined.index):
        row = slice(weights.indptr[i], weights.indptr[i + 1])
        words, values = weights.indices[row], weights.data[row]
        best = np.argsort(-values, kind="stable")[:BERTOPIC_NAME_WORDS]
        names[int(topic)] = " ".join(vocabulary[words[j]] for j in best if values[j] > 0)
    return names


def make_label_check(papers: pd.DataFrame, topics: pd.DataFrame, themes: pd.DataFrame) -> dict:
    """The check on `papers` (the fitted ones: title, abstract, topic; the unassigned count only
    in BERTopic's c-TF-IDF, as it fits topic -1 too): figures for the topic labels, BERTopic's
    names of the same topics and the theme labels, and each topic's own top-1 beside its
    BERTopic name."""
    texts = embedding_texts(papers)
    topic_of = papers["topic"].to_numpy()
    assigned = topic_of >= 0
    kept = [t for t, a in zip(texts, assigned, strict=True) if a]
    own = topic_of[assigned]
    named = topics[topics["topic"] >= 0]
    labels = dict(zip(named["topic"].astype(int), named["label"], strict=True))
    names = bertopic_names(texts, topic_of) if assigned.any() else {}
    theme_labels = {
        int(h): label for h, label in zip(themes["theme"], themes["label"], strict=True) if h >= 0
    }
    theme_of = dict(zip(named["topic"].astype(int), named["theme"].astype(int), strict=True))
    in_theme = np.array([theme_of.get(int(t), -1) in theme_labels for t in own], dtype=bool)
    figures = {
        "topics": match_figures(kept, own, labels),
        "bertopic_names": match_figures(kept, own, {t: names.get(t, "") for t in labels}),
        "themes": match_figures(
            [t for t, i in zip(kept, in_theme, strict=True) if i],
            [theme_of[int(t)] for t in own[in_theme]],
            theme_labels,
        ),
    }
    by_topic = [
        {
            "topic": t,
            "label": label,
            "top1": _share(figures["topics"]["_top1"][own == t]),
            "bertopic_name": names.get(t, ""),
            "bertopic_top1": _share(figures["bertopic_names"]["_top1"][own == t]),
        }
        for t, label in labels.items()
    ]
    for key in figures:
        figures[key].pop("_top1")
    return {"papers": int(assigned.sum()), **figures, "by_topic": by_topic}


def _share(hits: np.ndarray) -> float | None:
    return float(hits.mean()) if len(hits) else None

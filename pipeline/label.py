"""Stage 4, label: documents + clusters -> topics.parquet (one row per topic).

Terms come from BERTopic's class-based TF-IDF over the papers of each topic, with English stop
words, the filler of ML abstracts and LaTeX/markup removed, and bigrams kept. A label is the best
few terms, where a phrase absorbs the single words it contains ("optimal transport", not
"optimal, transport").
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import tables
from pipeline.config import LabelConfig
from pipeline.embed import embedding_texts
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.label")

UNASSIGNED_LABEL = "Unassigned"

# Words every ML abstract uses; they say nothing about a topic.
ML_FILLER = frozenset(
    """
    propose proposed proposes proposing method methods approach approaches result results show
    shows shown showing paper papers novel new existing work works study studies demonstrate
    demonstrates demonstrated use used using uses based achieve achieves achieved state art
    performance improve improves improved improvement significantly significant task tasks
    problem problems framework model models learning learn data experiments experimental
    empirical empirically extensive various effective effectively efficient efficiently
    introduce introduces present presents address provide provides propose leverage
    leverages furthermore moreover additionally however including include includes
    outperform outperforms outperforming baseline baselines benchmark benchmarks code available
    github com https http www org et al e g i g le ge wide range key challenge challenges
    recent recently prior previous previously different well high low large small simple
    state-of-the-art so-called well-known
    """.split()
)
_LATEX_MATH = re.compile(r"\$[^$]*\$")
_LATEX_COMMAND = re.compile(r"\\[a-zA-Z]+")
_URL = re.compile(r"https?://\S+|www\.\S+")
_MARKUP = re.compile(r"<[^>]{0,200}>")
TOKEN_PATTERN = r"(?u)\b[a-zA-Z][a-zA-Z\-]*[a-zA-Z]\b"


def clean_for_terms(text: str) -> str:
    """Drop maths, LaTeX commands, URLs and markup before counting terms."""
    for pattern in (_LATEX_MATH, _URL, _MARKUP, _LATEX_COMMAND):
        text = pattern.sub(" ", text)
    return text


def stop_words() -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS | ML_FILLER)


def topic_terms(texts: list[str], topics: np.ndarray, config: LabelConfig) -> dict[int, list[str]]:
    """Top c-TF-IDF terms per topic, best first."""
    from bertopic.vectorizers import ClassTfidfTransformer
    from sklearn.feature_extraction.text import CountVectorizer

    topic_ids = sorted(set(topics.tolist()))
    joined = [
        " ".join(clean_for_terms(t) for t, k in zip(texts, topics, strict=True) if k == topic)
        for topic in topic_ids
    ]
    vectorizer = CountVectorizer(
        stop_words=stop_words(),
        ngram_range=(1, config.max_ngram),
        token_pattern=TOKEN_PATTERN,
        lowercase=True,
    )
    try:
        counts = vectorizer.fit_transform(joined)
    except ValueError:  # no term survives the stop lists (e.g. a corpus of one-word records)
        return {topic: [] for topic in topic_ids}
    scores = ClassTfidfTransformer(reduce_frequent_words=True).fit_transform(counts).toarray()
    vocabulary = vectorizer.get_feature_names_out()
    result = {}
    for row, topic in enumerate(topic_ids):
        order = np.lexsort((vocabulary, -scores[row]))  # ties broken alphabetically
        result[topic] = [vocabulary[i] for i in order[: config.n_terms] if scores[row, i] > 0]
    return result


def short_label(terms: list[str], n_terms: int) -> str:
    """Join the best `n_terms` terms; a phrase replaces the words it contains."""
    picked: list[str] = []
    for term in terms:
        words = set(term.split())
        overlapping = [p for p in picked if set(p.split()) & words]
        if not overlapping:
            if len(picked) < n_terms:
                picked.append(term)
        elif all(set(p.split()) <= words for p in overlapping):
            picked[picked.index(overlapping[0])] = term
            picked = [p for p in picked if p not in overlapping[1:]]
    return ", ".join(picked)


def label_topics(
    documents: pd.DataFrame, clusters: pd.DataFrame, config: LabelConfig
) -> pd.DataFrame:
    """Pure core: one row per topic with label, terms, size and a count per venue."""
    merged = clusters.merge(documents, on="doc_id", how="left", validate="one_to_one")
    if merged["abstract"].isna().any() or len(merged) != len(documents):
        raise PipelineError("clusters do not match documents (different papers): rerun cluster")
    topics = merged["topic"].to_numpy()
    terms = topic_terms(embedding_texts(merged), topics, config)
    venues = sorted(merged["venue"].unique())
    counts = pd.crosstab(merged["topic"], merged["venue"]).reindex(columns=venues, fill_value=0)
    rows = []
    for topic, topic_terms_ in terms.items():
        if topic == -1:
            label = UNASSIGNED_LABEL
        else:
            label = short_label(topic_terms_, config.label_terms) or f"Topic {topic}"
        row = {
            "topic": topic,
            "label": label,
            "terms": topic_terms_,
            "size": int((topics == topic).sum()),
        }
        row.update({f"count_{venue}": int(counts.loc[topic, venue]) for venue in venues})
        rows.append(row)
    frame = pd.DataFrame(rows)
    duplicated = frame["label"].duplicated(keep="first")
    frame.loc[duplicated, "label"] = [
        f"{label} ({topic})"
        for label, topic in zip(frame["label"][duplicated], frame["topic"][duplicated], strict=True)
    ]
    return frame.sort_values("topic").reset_index(drop=True)


def run(config: LabelConfig, documents_path: Path, clusters_path: Path, out_path: Path) -> None:
    documents = tables.read_table(documents_path, tables.DOCUMENTS)
    clusters = tables.read_table(clusters_path, tables.CLUSTERS)
    topics = label_topics(documents, clusters, config)
    for row in topics.itertuples():
        log.info("topic %3d  %4d papers  %s", row.topic, row.size, row.label)
    tables.write_table(topics, out_path, tables.TOPICS)

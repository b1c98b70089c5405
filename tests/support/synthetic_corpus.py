"""A synthetic corpus shaped like the real 2023 one, for render tests that need size, not a model.

`corpus(n)` gives every table the render stage reads, all seeded: papers of two venues in about
40 topics (in 10 themes) laid out as blobs on the map, with titles, URLs and abstracts of
realistic length (the real ICLR + ICML 2023 abstracts average 1,216 characters; these average
about 1,300). Tables the pipeline derives (venue_topics, metrics) come from the producing
stages' own cores, and every table passes its schema (tests.support.tables builds them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline import schemas
from pipeline.config import CompareConfig
from pipeline.stages import compare, metrics
from tests.support import tables as make


@dataclass
class Corpus:
    documents: pd.DataFrame
    embeddings: tuple[list[str], np.ndarray]
    clusters: pd.DataFrame
    topics: pd.DataFrame
    themes: pd.DataFrame
    venue_topics: pd.DataFrame
    metrics: dict


def _words(rng: np.random.Generator, n: int) -> list[str]:
    letters = np.array(list("etaoinshrdlucmfwypvbgk"))
    return ["".join(rng.choice(letters, size=rng.integers(3, 11))) for _ in range(n)]


def _papers(rng, vocabulary, n: int, n_topics: int):
    """(documents, vectors, clusters): papers in blobs on the map, one blob per topic."""
    venues = np.where(rng.random(n) < 1574 / 3401, "ICLR", "ICML")
    sizes = rng.dirichlet(np.full(n_topics, 3.0))
    topic = rng.choice(n_topics, size=n, p=sizes)
    topic[rng.random(n) < 0.06] = -1  # some unassigned
    centres = rng.uniform(-8, 8, size=(n_topics, 2))
    xy = np.where(
        (topic >= 0)[:, None],
        centres[np.maximum(topic, 0)] + rng.normal(0, 0.6, size=(n, 2)),
        rng.uniform(-9, 9, size=(n, 2)),
    )
    directions = rng.normal(size=(n_topics, 384))
    vectors = directions[np.maximum(topic, 0)] + rng.normal(0, 1.2, size=(n, 384))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    doc_ids = [f"p{i:015x}" for i in range(n)]

    def sentence(k: int) -> str:
        return " ".join(rng.choice(vocabulary, size=k)).capitalize()

    abstracts = [
        ". ".join(sentence(18) for _ in range(int(rng.integers(8, 12)))) + "." for _ in range(n)
    ]
    documents = make.documents(
        abstracts,
        doc_ids=doc_ids,
        venues=venues,
        years=2023,
        titles=[sentence(int(rng.integers(5, 11))) for _ in range(n)],
        sources="synthetic.parquet",
        source_ids=[f"id{i}" for i in range(n)],
        urls=[f"https://openreview.net/forum?id={i:011d}" for i in range(n)],
    )
    clusters = make.clusters(
        doc_ids,
        topic,
        x=xy[:, 0],
        y=xy[:, 1],
        raw_outlier=(topic < 0) | (rng.random(n) < 0.15),
        similarity=0.6,
    )
    return documents, vectors, clusters


def _topic_tables(rng, vocabulary, clusters: pd.DataFrame, n_themes: int):
    """(topics, themes) shaped like the label stage's: random terms, themes of topics."""
    topic = clusters["topic"].to_numpy()
    ids = sorted(set(topic.tolist()))
    sizes = pd.Series(topic).value_counts()
    theme_of = {t: (-1 if t < 0 else t % n_themes) for t in ids}
    terms = [list(dict.fromkeys(rng.choice(vocabulary, size=10))) for _ in ids]
    topics = make.topics(
        ids,
        labels=[
            schemas.UNASSIGNED_LABEL if t < 0 else ", ".join(w[:3])
            for t, w in zip(ids, terms, strict=True)
        ],
        terms=terms,
        term_weights=[[round(0.2 / (k + 1), 4) for k in range(len(w))] for w in terms],
        sizes=[int(sizes[t]) for t in ids],
        themes=[theme_of[t] for t in ids],
        representative_docs=[
            clusters.loc[clusters["topic"] == t, "doc_id"].tolist()[:3] for t in ids
        ],
    )
    theme_ids = sorted(set(theme_of.values()), key=lambda h: (h < 0, h))
    theme_terms = {h: list(dict.fromkeys(rng.choice(vocabulary, size=10))) for h in theme_ids}
    labels = {h: f"theme {h} words" for h in theme_ids if h >= 0}
    return topics, make.themes_of(topics, labels, theme_terms)


def corpus(n: int = 3401, n_topics: int = 40, seed: int = 0, n_themes: int = 10) -> Corpus:
    rng = np.random.default_rng(seed)
    vocabulary = np.array(_words(rng, 3000))
    documents, vectors, clusters = _papers(rng, vocabulary, n, n_topics)
    topics, themes = _topic_tables(rng, vocabulary, clusters, n_themes)
    venue_topics = compare.make_venue_topics(documents, clusters, topics, themes, CompareConfig())
    figures = metrics.make_metrics(documents, clusters, topics, themes)
    doc_ids = documents["doc_id"].tolist()
    return Corpus(documents, (doc_ids, vectors), clusters, topics, themes, venue_topics, figures)

"""A synthetic corpus shaped like the real 2023 one, for render tests that need size, not a model.

`corpus(n)` gives documents, (doc_ids, vectors), clusters and topics frames, plus optional themes,
metrics and a venue_topics table, all seeded: papers of two venues in about 40 topics laid out as
blobs on the map, with titles, URLs and abstracts of realistic length (the real ICLR + ICML 2023
abstracts average 1,216 characters; these average about 1,300).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass
class Corpus:
    documents: pd.DataFrame
    embeddings: tuple[list[str], np.ndarray]
    clusters: pd.DataFrame
    topics: pd.DataFrame
    metrics: dict
    baseline: dict
    venue_topics: pd.DataFrame


def _words(rng: np.random.Generator, n: int) -> list[str]:
    letters = np.array(list("etaoinshrdlucmfwypvbgk"))
    return ["".join(rng.choice(letters, size=rng.integers(3, 11))) for _ in range(n)]


def corpus(n: int = 3401, n_topics: int = 40, seed: int = 0, themes: bool = False) -> Corpus:
    rng = np.random.default_rng(seed)
    vocabulary = np.array(_words(rng, 3000))
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
    documents = pd.DataFrame(
        {
            "doc_id": doc_ids,
            "venue": venues,
            "year": np.full(n, 2023, dtype=np.int32),
            "title": [sentence(int(rng.integers(5, 11))) for _ in range(n)],
            "abstract": abstracts,
            "source": ["synthetic.parquet"] * n,
            "source_id": [f"id{i}" for i in range(n)],
            "url": [f"https://openreview.net/forum?id={i:011d}" for i in range(n)],
        }
    )
    clusters = pd.DataFrame(
        {
            "doc_id": doc_ids,
            "topic": topic.astype(np.int32),
            "x": xy[:, 0].astype(np.float32),
            "y": xy[:, 1].astype(np.float32),
        }
    )
    ids = sorted(set(topic.tolist()))
    rows = []
    for t in ids:
        members = topic == t
        terms = list(dict.fromkeys(rng.choice(vocabulary, size=10)))
        rows.append(
            {
                "topic": np.int32(t),
                "label": "Unassigned" if t < 0 else ", ".join(terms[:3]),
                "terms": terms,
                "size": np.int32(members.sum()),
                "count_ICLR": np.int32((members & (venues == "ICLR")).sum()),
                "count_ICML": np.int32((members & (venues == "ICML")).sum()),
            }
        )
    topics = pd.DataFrame(rows)
    if themes:
        topics["theme"] = [(-1 if t < 0 else t % 10) for t in topics["topic"]]
        topics["theme_label"] = [
            None if t < 0 else f"theme {t % 10} words" for t in topics["topic"]
        ]
    totals = {v: int((venues == v).sum()) for v in ("ICLR", "ICML")}
    venue_rows = []
    for row in topics[topics["topic"] >= 0].itertuples():
        p_iclr = row.count_ICLR / totals["ICLR"]
        p_icml = row.count_ICML / totals["ICML"]
        pooled = (row.count_ICLR + row.count_ICML) / n
        se = np.sqrt(pooled * (1 - pooled) * (1 / totals["ICLR"] + 1 / totals["ICML"])) or 1.0
        z = (p_iclr - p_icml) / se
        for venue, sign in (("ICLR", 1), ("ICML", -1)):
            venue_rows.append(
                {"level": "topic", "id": int(row.topic), "venue": venue, "z": sign * z}
            )
    metrics = {
        "n_topics": len(ids) - 1,
        "outlier_share_raw": 0.21,
        "outlier_share": float((topic < 0).mean()),
        "largest_topic_share": float(np.bincount(topic[topic >= 0]).max() / n),
        "topic_diversity": 0.86,
        "npmi": {str(t): 0.1 for t in ids if t >= 0},
    }
    baseline = {"n_topics": 50, "outlier_share": 0.238, "largest_topic_share": 0.186}
    return Corpus(
        documents,
        (doc_ids, vectors),
        clusters,
        topics,
        metrics,
        baseline,
        pd.DataFrame(venue_rows),
    )

"""Corpora for the many-venue and per-year tests, made from the real ones where they are at hand.

`eight_venues` deals the papers of the eight files of paths.CORPORA (ICLR and ICML,
2020-2023, their years kept) out to eight venues, renamed, each with papers of every year;
`years_corpus` spreads two venues' papers over 2020-2025 with some papers undated. Topics and
map positions are synthetic_corpus's (seeded); venue_topics, venue_years and metrics come from
their stages' own cores."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.config import CompareConfig
from pipeline.stages import compare, metrics
from tests.support.paths import CORPORA
from tests.support.synthetic_corpus import Corpus, corpus

FILES = [f"{c}{y}.parquet" for c in ("iclr", "icml") for y in (2020, 2021, 2022, 2023)]
# the eight files' papers as eight venues (names long enough to test the headers)
EIGHT = ["AISTATS", "COLT", "ICLR", "ICML", "IJCAI", "NeurIPS", "TMLR", "UAI Workshop"]


@dataclass
class Built:
    corpus: Corpus
    venue_years: pd.DataFrame
    real: bool  # titles and abstracts from ../shared/corpora


def _real_papers(per_file: int) -> pd.DataFrame | None:
    if not all((CORPORA / f).is_file() for f in FILES):
        return None
    parts = [
        pd.read_parquet(CORPORA / name, columns=["title", "abstract", "year", "url"]).head(per_file)
        for name in FILES
    ]
    papers = pd.concat(parts, ignore_index=True)
    return papers.assign(venue=[EIGHT[i % len(EIGHT)] for i in range(len(papers))])


def _rebuild(synthetic: Corpus) -> Built:
    d, c, t, h = synthetic.documents, synthetic.clusters, synthetic.topics, synthetic.themes
    synthetic.venue_topics = compare.make_venue_topics(d, c, t, h, CompareConfig())
    synthetic.metrics = metrics.make_metrics(d, c, t, h)
    return Built(synthetic, compare.make_venue_years(d, c, t, h, CompareConfig()), False)


def eight_venues(per_venue: int = 60, seed: int = 3) -> Built:
    """Eight venues of `per_venue` papers each, every one with papers of 2020-2023."""
    synthetic = corpus(8 * per_venue, n_topics=24, n_themes=6, seed=seed)
    documents = synthetic.documents
    real = _real_papers(per_venue)
    if real is not None:
        for column in ("title", "abstract", "url", "venue"):
            documents[column] = real[column].to_numpy()
        documents["year"] = real["year"].to_numpy().astype(np.int32)
    else:
        n = len(documents)
        documents["venue"] = [EIGHT[i % len(EIGHT)] for i in range(n)]
        documents["year"] = np.array([2020 + (i // 8) % 4 for i in range(n)], dtype=np.int32)
    documents["conference"] = documents["venue"]
    built = _rebuild(synthetic)
    built.real = real is not None
    return built


def years_corpus(n: int = 900, undated: int = 20, seed: int = 5) -> Built:
    """Two venues over 2020-2023 and 2025 (no 2024, as in the real corpora), `undated` papers
    without a year, and one known lean: in 2021 half of ICML's papers are in topic 0."""
    synthetic = corpus(n, n_topics=20, n_themes=5, seed=seed)
    rng = np.random.default_rng(seed)
    years = rng.choice([2020, 2021, 2022, 2023, 2025], size=n).astype(float)
    years[rng.choice(n, size=undated, replace=False)] = np.nan
    documents, clusters = synthetic.documents, synthetic.clusters
    documents["year"] = pd.array(years, dtype="Int32")
    lean = (documents["venue"] == "ICML").to_numpy() & (years == 2021) & (rng.random(n) < 0.5)
    clusters.loc[clusters["doc_id"].isin(documents.loc[lean, "doc_id"]), "topic"] = 0
    synthetic.topics["size"] = synthetic.topics["topic"].map(clusters["topic"].value_counts())
    sizes = synthetic.topics.set_index("topic")["size"]
    synthetic.themes["size"] = [int(sizes[list(t)].sum()) for t in synthetic.themes["topics"]]
    return _rebuild(synthetic)


def venue_names(n: int) -> list[str]:
    """n venue names, some long enough to test the panels' headers."""
    long = ("Conference on Learning Representations", "Workshop on Causal Inference")
    return [long[k % 2] + f" {k:02d}" if k % 5 == 0 else f"Venue {k:02d}" for k in range(n)]


def n_venues(n: int, per_venue: int = 40, seed: int = 4) -> Built:
    """n venues of about `per_venue` papers, 2020-2023, each leaning to its own topics (most of
    its papers from the topics numbered like it), so venues share topics in groups."""
    synthetic = corpus(n * per_venue, n_topics=30, n_themes=6, seed=seed)
    documents, clusters = synthetic.documents, synthetic.clusters
    topic = documents[["doc_id"]].merge(clusters[["doc_id", "topic"]])["topic"].to_numpy()
    rng = np.random.default_rng(seed)
    leaning = np.where(topic >= 0, topic % n, rng.integers(0, n, len(topic)))
    venue = np.where(rng.random(len(topic)) < 0.7, leaning, rng.integers(0, n, len(topic)))
    names = venue_names(n)
    documents["venue"] = [names[v] for v in venue]
    documents["conference"] = documents["venue"]
    documents["year"] = (2020 + rng.integers(0, 4, len(topic))).astype(np.int32)
    return _rebuild(synthetic)

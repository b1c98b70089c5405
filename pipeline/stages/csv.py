"""Stage csv: the build's tables as BERTopic users know them, and the ledger, as CSV.

`topic_info.csv` has the columns of BERTopic's `get_topic_info()` (Topic, Count, Name,
CustomName, Representation, Representative_Docs), then the topic's theme and its share of each
venue's papers (`share_<venue>`, from compare's venue_topics.parquet); `document_info.csv` those
of `get_document_info(docs)` (Document, Topic, Name, CustomName, Representation,
Representative_Docs, Top_n_words, Representative_document), then doc_id, title, venue, year
and url. Topic -1 is the unassigned papers, as in BERTopic; lists are written as BERTopic's
DataFrames write them (`['a', 'b']`), so pandas code written against BERTopic reads both
unchanged. `rejected.csv` is rejected.parquet, the ledger, for a spreadsheet.

Nothing is computed here that another stage owns: terms, labels, themes and representative
papers come from the label stage, venue shares from compare.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import csv_files, schemas, tables
from pipeline.labels import with_theme_labels, with_topic_labels
from pipeline.text import embedding_texts

log = logging.getLogger("pipeline.csv")


def bertopic_name(topic: int, terms: list[str]) -> str:
    """BERTopic's default topic name: the id and the first four terms, joined by '_'."""
    return f"{topic}_" + "_".join(terms[:4])


def venue_shares(venue_topics: pd.DataFrame) -> pd.DataFrame:
    """topic -> its share of each venue's papers (`share_<venue>` columns, venues sorted)."""
    rows = venue_topics[venue_topics["level"] == "topic"]
    shares = rows.pivot_table(index="id", columns="venue", values="share", aggfunc="first")
    shares = shares.reindex(sorted(shares.columns), axis=1)
    shares.columns = [schemas.VENUE_SHARE_PREFIX + str(v) for v in shares.columns]
    shares.columns.name = None
    return shares


def make_topic_info(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    themes: pd.DataFrame,
    venue_topics: pd.DataFrame,
    registry: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Pure core: one row per topic (-1 first, as BERTopic sorts them) with BERTopic's
    get_topic_info() columns, then ours (status and fit from the saved model's `registry`)."""
    text_of = dict(zip(documents["doc_id"], embedding_texts(documents), strict=True))
    ordered = with_theme_labels(topics.sort_values("topic", ignore_index=True), themes)
    info = pd.DataFrame(
        {
            "Topic": ordered["topic"].astype(int),
            "Count": ordered["size"].astype(int),
            "Name": [
                bertopic_name(int(t), list(w))
                for t, w in zip(ordered["topic"], ordered["terms"], strict=True)
            ],
            "CustomName": ordered["label"],
            "Representation": [list(terms) for terms in ordered["terms"]],
            "Representative_Docs": [
                [text_of[d] for d in docs] for docs in ordered["representative_docs"]
            ],
            "theme": ordered["theme"].astype(int),
            "theme_label": ordered["theme_label"],
            "status": _from_registry(registry, ordered["topic"], "status"),
            "fit": _from_registry(registry, ordered["topic"], "made_in"),
        }
    )
    shares = venue_shares(venue_topics).reindex(info["Topic"]).fillna(0.0)
    return pd.concat([info, shares.reset_index(drop=True)], axis=1)


def _from_registry(registry: pd.DataFrame | None, topics: pd.Series, column: str) -> list[str]:
    known = {} if registry is None else dict(zip(registry["topic"], registry[column], strict=True))
    return [str(known.get(int(t), "")) for t in topics]


def make_document_info(
    documents: pd.DataFrame, clusters: pd.DataFrame, topics: pd.DataFrame
) -> pd.DataFrame:
    """Pure core: one row per paper with BERTopic's get_document_info() columns, then ours; the
    fitted papers first in doc_id order (the order the model was fitted in, so the first rows
    line up with its topics_), then the papers placed into it, in doc_id order."""
    placed = clusters["placed"].to_numpy() != "fit"
    order = np.lexsort((clusters["doc_id"].to_numpy(), placed))
    ordered = clusters.iloc[order].reset_index(drop=True)
    merged = with_topic_labels(tables.join_papers(documents, ordered), topics)
    text_of = dict(zip(documents["doc_id"], embedding_texts(documents), strict=True))
    representative = {d for docs in topics["representative_docs"] for d in docs}
    topic = merged["topic"].astype(int)
    # one list per topic, shared by its papers' rows (the CSV writer prints each list once)
    words_of = {int(t): list(w) for t, w in zip(topics["topic"], topics["terms"], strict=True)}
    docs_of = {
        int(t): [text_of[d] for d in docs]
        for t, docs in zip(topics["topic"], topics["representative_docs"], strict=True)
    }
    terms = pd.Series([words_of.setdefault(t, []) for t in topic], topic.index, dtype=object)
    examples = pd.Series([docs_of.setdefault(t, []) for t in topic], topic.index, dtype=object)
    names = {t: bertopic_name(t, words_of[t]) for t in words_of}
    top_words = {t: " - ".join(words_of[t]) for t in words_of}
    return pd.DataFrame(
        {
            "Document": merged["doc_id"].map(text_of),
            "Topic": topic,
            "Name": topic.map(names),
            "CustomName": merged["topic_label"],
            "Representation": terms,
            "Representative_Docs": examples,
            "Top_n_words": topic.map(top_words),
            "Representative_document": merged["doc_id"].isin(representative),
            "doc_id": merged["doc_id"],
            "title": merged["title"],
            "venue": merged["venue"],
            "year": merged["year"].astype("Int32"),
            "url": merged["url"],
        }
    )


def run(
    documents: Path,
    rejected: Path,
    clusters: Path,
    topics: Path,
    themes: Path,
    venue_topics: Path,
    topic_info: Path,
    document_info: Path,
    rejected_csv: Path,
    registry: Path | None = None,
) -> None:
    tables.stage_lineage(  # refuse tables from different builds
        "csv",
        documents=documents,
        rejected=rejected,
        clusters=clusters,
        topics=topics,
        themes=themes,
        venue_topics=venue_topics,
    )
    papers = tables.read_table(documents, schemas.DOCUMENTS)
    topic_table = tables.read_table(topics, schemas.TOPICS)
    by_topic = make_topic_info(
        papers,
        topic_table,
        tables.read_table(themes, schemas.THEMES),
        tables.read_table(venue_topics, schemas.VENUE_TOPICS),
        None if registry is None else tables.read_table(registry, schemas.TOPIC_REGISTRY),
    )
    by_paper = make_document_info(
        papers, tables.read_table(clusters, schemas.CLUSTERS), topic_table
    )
    ledger = tables.read_table(rejected, schemas.REJECTED)
    csv_files.write_csv(by_topic, topic_info, schemas.TOPIC_INFO, schemas.VENUE_SHARE_PREFIX)
    csv_files.write_csv(by_paper, document_info, schemas.DOCUMENT_INFO)
    csv_files.write_csv(ledger, rejected_csv, tuple(schemas.REJECTED.columns))
    log.info(
        "wrote %s (%d topics), %s (%d papers), %s (%d records)",
        topic_info.name,
        len(by_topic),
        document_info.name,
        len(by_paper),
        rejected_csv.name,
        len(ledger),
    )

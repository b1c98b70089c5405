"""The tables the stages meet through: one fixed schema per table, checked on every read and
write by `pipeline.tables`. No column is optional and none is added per build."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

# The group of the papers no topic took (topic -1, theme -1), in every table and page.
UNASSIGNED = -1
UNASSIGNED_LABEL = "Unassigned"


@dataclass(frozen=True)
class Schema:
    name: str
    fields: tuple[pa.Field, ...]

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def arrow(self) -> pa.Schema:
        return pa.schema(list(self.fields))


def _f(name: str, type_: pa.DataType, nullable: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable=nullable)


# ingest: one row per paper kept. `venue` is what every comparison groups by: the canonical
# venue (`conference`) for main-conference papers, venue + track (`ICLR Workshop`) for papers of
# other tracks. `track` is what followed venue and year (`Workshop`, `Oral`); "" for none, not
# null: the main conference is a known value, and "" stays in groupby and value_counts.
DOCUMENTS = Schema(
    "documents",
    (
        _f("doc_id", pa.string()),
        _f("venue", pa.string()),
        _f("conference", pa.string()),  # ICML, NeurIPS, ... (TMLR too: it names the series)
        _f("track", pa.string()),
        _f("year", pa.int32(), nullable=True),
        _f("title", pa.string(), nullable=True),
        _f("abstract", pa.string()),
        _f("source", pa.string()),  # "<file>:<record>"
        _f("source_id", pa.string(), nullable=True),
        _f("url", pa.string(), nullable=True),
    ),
)
# ingest: the ledger, one row per record not kept
REJECTED = Schema(
    "rejected",
    (
        _f("source", pa.string()),
        _f("file", pa.string()),
        _f("record", pa.string()),
        _f("reason", pa.string()),
        _f("text", pa.string(), nullable=True),
        _f("duplicate_of", pa.string(), nullable=True),
    ),
)
# How a paper got its topic: in the fit; assigned to the model when it was fitted (corpora
# above cluster.fit_max_papers are fitted on a sample); added to the model after the fit.
PLACED = ("fit", "assigned", "added")
# cluster: one row per paper
CLUSTERS = Schema(
    "clusters",
    (
        _f("doc_id", pa.string()),
        _f("topic", pa.int32()),  # -1: unassigned
        _f("x", pa.float32()),
        _f("y", pa.float32()),
        _f("raw_outlier", pa.bool_()),  # HDBSCAN left it out (before reassignment); fit only
        _f("placed", pa.string()),  # one of PLACED
        _f("similarity", pa.float32()),  # cosine to its topic's centre (-1: to the nearest)
    ),
)
# the saved model's fitted papers (model/papers.parquet)
MODEL_PAPERS = Schema(
    "model papers",
    (
        _f("doc_id", pa.string()),
        _f("topic", pa.int32()),
        _f("x", pa.float32()),
        _f("y", pa.float32()),
        _f("weight", pa.float32()),  # in its topic's centre: how firmly it sits in the topic
    ),
)
# How a topic came to be: in the first fit, in a refit (matching no old topic), among papers
# added without a refit, as a part of a split old topic, as the merge of old topics.
TOPIC_MADE = ("fit", "new", "emerged", "split", "merged")
# What a topic is now: in the model, or gone (split, merged into another, retired).
TOPIC_STATUS = ("active", "split", "merged", "retired")
# the saved model's topic registry (model/registry.parquet): every topic ever made, its number
# never reused; notes: the fit_id of the model beside it and the registry's format
TOPIC_REGISTRY = Schema(
    "topic registry",
    (
        _f("topic", pa.int32()),
        _f("status", pa.string()),  # one of TOPIC_STATUS
        _f("made", pa.string()),  # one of TOPIC_MADE
        _f("made_in", pa.string()),  # the fit_id of the model that made it
        _f("change", pa.string()),  # its last transition: made, survived, split, merged, retired
        _f("changed_in", pa.string()),  # the fit_id of the model of that transition
        _f("parents", pa.list_(pa.int32())),  # the topics it came from
        _f("successors", pa.list_(pa.int32())),  # where its papers went (split/merged/retired)
        _f("size", pa.int32()),  # its papers in the model, at its last change
        _f("label", pa.string()),  # its label when the registry was saved ("" before labelling)
        _f("past_labels", pa.list_(pa.string())),  # the labels it had before, oldest first
        _f("theme", pa.int32()),  # its theme when the registry was saved (-1 before)
        _f("centre", pa.list_(pa.float32())),  # its unit centre in the model (empty once gone)
    ),
)
# the topics' papers at two earlier moments (model/snapshots.parquet), for the report's "What
# changed": when the saved model was fitted ("fit") and in the previous build whose topics
# differed from this one's ("build")
TOPIC_SNAPSHOTS = Schema(
    "topic snapshots",
    (
        _f("snapshot", pa.string()),  # "fit" or "build"
        _f("fit_id", pa.string()),  # the fit_id of the model whose topics they were
        _f("topic", pa.int32()),  # -1: the papers no topic took
        _f("papers", pa.int32()),  # the topic's papers then
    ),
)
# label: one row per topic (-1 included when papers are unassigned)
TOPICS = Schema(
    "topics",
    (
        _f("topic", pa.int32()),
        _f("label", pa.string()),
        _f("terms", pa.list_(pa.string())),  # best first
        _f("term_weights", pa.list_(pa.float64())),  # each term's c-TF-IDF weight in the topic
        _f("size", pa.int32()),
        _f("theme", pa.int32()),  # -1 for the unassigned papers
        _f("representative_docs", pa.list_(pa.string())),  # doc_ids, most central first
    ),
)
# label: one row per theme, a group of topics (-1 included when papers are unassigned)
THEMES = Schema(
    "themes",
    (
        _f("theme", pa.int32()),
        _f("label", pa.string()),
        _f("terms", pa.list_(pa.string())),
        _f("size", pa.int32()),
        _f("topics", pa.list_(pa.int32())),  # its topics, largest first
        _f("area", pa.int32()),  # its area, the level above themes in a large corpus; else -1
        _f("area_label", pa.string()),  # that area's label ("" without areas)
    ),
)
# compare: one row per (topic or theme, venue). z is null with a single venue.
VENUE_TOPICS = Schema(
    "venue_topics",
    (
        _f("level", pa.string()),  # "topic" or "theme"
        _f("id", pa.int32()),
        _f("label", pa.string()),
        _f("venue", pa.string()),
        _f("count", pa.int32()),
        _f("share", pa.float64()),  # of the venue's papers
        _f("z", pa.float64(), nullable=True),  # weighted log-odds, informative Dirichlet prior
        _f("flag", pa.string()),  # "over", "under" or "none"
        _f("venue_papers", pa.int32()),  # the venue's papers, unassigned included
        _f("z_threshold", pa.float64()),  # the |z| that flags a cell
    ),
)
# compare: venue_topics' rows for each year's papers alone, one row per (topic or theme, venue,
# year); a venue's share, z and flag are against that year's other venues. Papers without a year
# are left out; a venue without papers in a year has no rows for it.
VENUE_YEARS = Schema(
    "venue_years",
    (
        _f("level", pa.string()),
        _f("id", pa.int32()),
        _f("label", pa.string()),
        _f("venue", pa.string()),
        _f("year", pa.int32()),
        _f("count", pa.int32()),
        _f("share", pa.float64()),  # of the venue's papers that year
        _f("z", pa.float64(), nullable=True),  # null where the year has one venue
        _f("flag", pa.string()),
        _f("venue_year_papers", pa.int32()),  # the venue's papers that year
        _f("z_threshold", pa.float64()),
    ),
)


# BERTopic 0.17.4's get_topic_info() and get_document_info(docs) columns, for a model with
# custom labels and representative documents and without probabilities: topic_info.csv and
# document_info.csv (the csv stage) start with them, so code written against BERTopic reads them.
BERTOPIC_TOPIC_INFO = (
    "Topic",
    "Count",
    "Name",
    "CustomName",
    "Representation",
    "Representative_Docs",
)
BERTOPIC_DOCUMENT_INFO = (
    "Document",
    "Topic",
    "Name",
    "CustomName",
    "Representation",
    "Representative_Docs",
    "Top_n_words",
    "Representative_document",
)
# ours after them; topic_info.csv then has one `share_<venue>` column per venue (compare's share)
# (status and fit: the topic registry's status and the fit that made the topic; "" for -1)
TOPIC_INFO = BERTOPIC_TOPIC_INFO + ("theme", "theme_label", "status", "fit")
DOCUMENT_INFO = BERTOPIC_DOCUMENT_INFO + ("doc_id", "title", "venue", "year", "url")
VENUE_SHARE_PREFIX = "share_"

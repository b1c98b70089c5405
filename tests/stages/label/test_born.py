"""Topics born beside unchanged ones are labelled alone, among their nearest topics' papers:
the earlier rows stay whole, the new topic's label names its own papers and takes no kept head,
and any earlier topic whose papers changed sends the stage down the full path."""

from __future__ import annotations

import logging
from contextlib import nullcontext

import numpy as np
import pytest

from pipeline import schemas, tables
from pipeline.config import EmbedConfig, LabelConfig
from pipeline.phrases import head_phrase
from pipeline.stages.label import keep
from pipeline.stages.label.born import born_topics
from pipeline.stages.label.matching import reader_evidence
from pipeline.stages.label.names import Label, matched_topic_labels
from tests.stages.label.test_matching import ROWS, TEXTS
from tests.support import tables as make
from tests.support.build_folder import write_build
from tests.support.label_samples import GRAPHS, OUTLIER, TRANSPORT

MESHES = [
    "Triangle mesh simplification preserves surface curvature for real-time rendering of meshes",
    "Differentiable rendering of triangle meshes recovers surface geometry from images",
    "Mesh parameterization maps a triangle mesh surface onto the plane with low distortion",
]


def _earlier(papers: dict[int, str]) -> keep.Earlier:
    topics = make.topics(sorted(papers), labels=[f"label {t}" for t in sorted(papers)])
    return keep.Earlier(topics, make.themes_of(topics), papers)


def test_only_new_topics_beside_unchanged_ones_are_born():
    earlier = _earlier({0: "a", 1: "b"})
    assert born_topics(earlier, {0: "a", 1: "b", 2: "c", 3: "d"}) == [2, 3]
    assert born_topics(earlier, {0: "a", 1: "changed", 2: "c"}) == []  # a refit: all
    assert born_topics(earlier, {0: "a", 2: "c"}) == []  # topic 1 gone
    assert born_topics(earlier, {0: "a", 1: "b"}) == []  # nothing born
    assert born_topics(None, {0: "a", 2: "c"}) == []


def test_a_fixed_label_is_only_a_rival_when_labels_are_chosen_together():
    """Topic 1's label is held fixed: unchanged, and topic 0 may not take its head."""
    scored = {
        0: [("policy gradients", 2.0), ("value functions", 1.5)],
        1: [("graph kernels", 2.0), ("policy gradients", 1.0)],
    }
    labels = {0: Label("value functions", "value functions")}
    fixed = {1: Label("policy gradients, molecule", "policy gradients")}
    found = matched_topic_labels(labels, scored, reader_evidence(TEXTS), ROWS, 5, fixed=fixed)
    assert found[1] is fixed[1]
    assert head_phrase(found[0].head) != head_phrase("policy gradients")


@pytest.fixture()
def corpus(tmp_path, hashing_encoder, monkeypatch):
    from pipeline import encoder as encoders

    monkeypatch.setattr(encoders, "load_encoder", lambda c: hashing_encoder)
    monkeypatch.setattr(encoders, "precision_context", lambda p: nullcontext())
    documents = make.documents(TRANSPORT + GRAPHS + MESHES + OUTLIER)
    before = [0, 0, 0, 1, 1, 1, -1, -1, -1, -1]
    vectors = hashing_encoder.embed(documents["abstract"].tolist())
    return tmp_path, documents, vectors, before


def _label(folder, documents, vectors, topics):
    from pipeline.stages import label

    paths = write_build(
        folder,
        documents=documents.astype({"year": "Int32"}),
        embeddings=(documents["doc_id"].tolist(), vectors),
        clusters=make.clusters(documents["doc_id"].tolist(), topics),
    )
    args = (paths["documents"], paths["clusters"], folder / "embeddings.parquet")
    label.run(
        LabelConfig(), EmbedConfig(), *args, folder / "topics.parquet", folder / "themes.parquet"
    )
    return (
        tables.read_table(folder / "topics.parquet", schemas.TOPICS),
        tables.read_table(folder / "themes.parquet", schemas.THEMES),
    )


def test_a_born_topic_is_labelled_alone_and_the_earlier_rows_stay(corpus, caplog):
    folder, documents, vectors, before = corpus
    topics0, themes0 = _label(folder, documents, vectors, before)
    with caplog.at_level(logging.INFO, logger="pipeline.label"):
        topics1, themes1 = _label(folder, documents, vectors, [0, 0, 0, 1, 1, 1, 2, 2, 2, -1])
    assert "labelling the 1 new topics among 3 topics' 10 papers" in caplog.text

    def rows(table):
        return table[table["topic"].isin([0, 1])].drop(columns="size").reset_index(drop=True)

    assert rows(topics1).equals(rows(topics0))
    new = topics1.set_index("topic").loc[2]
    assert {"mesh", "meshes", "triangle"} & set(new["label"].lower().replace(",", " ").split())
    assert set(new["representative_docs"]) <= set(documents["doc_id"][6:9])
    heads = {head_phrase(text.split(",")[0]) for text in topics0["label"]}
    assert head_phrase(new["label"].split(",")[0]) not in heads
    assert set(themes0["theme"]) <= set(themes1["theme"])  # the earlier themes stay


def test_an_earlier_topic_with_other_papers_labels_every_topic(corpus, caplog):
    folder, documents, vectors, before = corpus
    _label(folder, documents, vectors, before)
    with caplog.at_level(logging.INFO, logger="pipeline.label"):
        _label(folder, documents, vectors, [0, 0, 1, 1, 1, 1, 2, 2, 2, -1])
    assert "labelling the" not in caplog.text
    assert "labels carried over" in caplog.text


def test_only_the_given_groups_terms_are_reranked(hashing_encoder):
    from pipeline.config import EngineConfig
    from pipeline.stages.label.counts import count_terms
    from pipeline.stages.label.terms import group_terms
    from pipeline.text import clean_for_terms

    texts = [clean_for_terms(t) for t in TRANSPORT + GRAPHS + MESHES]
    groups = np.repeat([0, 1, 2], 3)
    vectors = hashing_encoder.embed(texts)
    config = LabelConfig()
    counts = count_terms(texts, groups, config.max_ngram, EngineConfig())

    def terms(encoder, only=None):
        return group_terms(texts, groups, vectors, config, counts, encoder, only=only)

    plain, reranked = terms(None), terms(hashing_encoder)
    some = terms(hashing_encoder, only={2})
    assert some[2] == reranked[2] and some[0] == plain[0] and some[1] == plain[1]
    assert reranked[0] != plain[0]  # the reranking changes them


def test_changed_label_settings_label_every_topic_afresh(corpus, caplog):
    """Earlier labels carry over only from tables made the same way: a setting the user
    changed (here the words a label may have: a head and a second phrase, two at most) applies
    to every topic at once."""
    from pipeline.stages import label

    folder, documents, vectors, before = corpus
    first, _ = _label(folder, documents, vectors, before)
    assert any("," in text for text in first["label"])  # a head and a second phrase
    paths = (folder / "documents.parquet", folder / "clusters.parquet")
    rest = (folder / "embeddings.parquet", folder / "topics.parquet", folder / "themes.parquet")
    with caplog.at_level(logging.INFO, logger="pipeline.label"):
        label.run(LabelConfig(label_words=2), EmbedConfig(), *paths, *rest)
    assert "labels made afresh" in caplog.text and "labels carried over" not in caplog.text
    topics = tables.read_table(folder / "topics.parquet", schemas.TOPICS)
    labels = topics["label"].tolist()
    assert labels != first["label"].tolist()
    assert all(len(t.replace(",", " ").split()) <= 2 for t in labels if "," in t)

"""Label stage: terms per topic, labels, themes, representative papers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas
from pipeline.config import LabelConfig
from pipeline.errors import PipelineError
from pipeline.schemas import UNASSIGNED_LABEL
from pipeline.stages.label import (
    distinct_terms,
    make_topics,
    representative_docs,
)
from pipeline.text import banned_words
from tests.support import tables as make
from tests.support.label_samples import GRAPHS, OUTLIER, TRANSPORT
from tests.support.label_samples import unit_vectors as _vectors
from tests.support.wordlists import NOT_IN_LABELS, faults


def _label_both(documents, clusters, config=None, vectors=None, encoder=None):
    """(topics, themes) tables, both checked against their schemas."""
    vectors = _vectors(len(documents)) if vectors is None else vectors
    topics, themes = make_topics(documents, clusters, vectors, config or LabelConfig(), encoder)
    assert list(topics.columns) == schemas.TOPICS.columns
    assert list(themes.columns) == schemas.THEMES.columns
    return topics, themes


def _label(documents, clusters, config=None, vectors=None, encoder=None) -> pd.DataFrame:
    return _label_both(documents, clusters, config, vectors, encoder)[0]


def _row(topics: pd.DataFrame, topic: int) -> dict:
    rows = topics[topics["topic"] == topic].to_dict("records")
    assert len(rows) == 1
    return rows[0]


def test_one_row_per_topic_with_unassigned_label(labelled):
    _, _, topics = labelled
    assert topics["topic"].tolist() == [-1, 0, 1]
    assert _row(topics, -1)["label"] == UNASSIGNED_LABEL
    assert topics["label"].is_unique
    assert all(label and label != UNASSIGNED_LABEL for label in topics["label"][1:])


def test_terms_are_common_phrases_and_the_phrase_wins_the_label(labelled):
    _, _, topics = labelled
    transport, graphs = _row(topics, 0), _row(topics, 1)
    assert {"optimal transport", "wasserstein", "sinkhorn"} <= set(transport["terms"])
    assert {"graph neural networks", "message passing"} <= set(graphs["terms"])
    # words every paper of the topic uses come first; one paper's phrases are not terms
    assert transport["terms"][:2] == ["optimal transport", "wasserstein"]
    assert "approximate optimal transport" not in transport["terms"]
    # a phrase absorbs its words and its shorter phrases
    assert not {"optimal", "transport", "graph", "graph neural", "neural networks"} & set(
        transport["terms"] + graphs["terms"]
    )
    assert transport["label"] == "optimal transport, wasserstein"
    assert "graph neural networks" in graphs["label"].split(", ")  # the phrase, not its words
    for label in topics["label"][1:]:
        assert 2 <= len(label.replace(",", " ").split()) <= LabelConfig().label_words
    assert len(transport["terms"]) <= LabelConfig().n_terms


def test_term_weights_are_each_terms_ctfidf_weight_in_its_topic(labelled):
    """term_weights hold BERTopic's c-TF-IDF (ClassTfidfTransformer over each topic's term
    counts, its papers' counts summed: no term across two papers) of each term, in order."""
    from bertopic.vectorizers import ClassTfidfTransformer
    from scipy.sparse import csr_matrix
    from sklearn.feature_extraction.text import CountVectorizer

    from pipeline import tables
    from pipeline.text import term_analyzer, term_texts

    documents, clusters, topics = labelled
    merged = tables.join_papers(documents, clusters)
    counter = CountVectorizer(analyzer=term_analyzer(LabelConfig().max_ngram))
    per_paper = counter.fit_transform(term_texts(merged)).toarray()
    groups = sorted(set(merged["topic"].tolist()))
    topic = merged["topic"].to_numpy()
    counts = csr_matrix(np.stack([per_paper[topic == g].sum(axis=0) for g in groups]))
    ctfidf = ClassTfidfTransformer(reduce_frequent_words=True).fit_transform(counts).toarray()
    for row in topics.itertuples():
        assert len(row.term_weights) == len(row.terms) > 0
        expected = [ctfidf[groups.index(row.topic), counter.vocabulary_[t]] for t in row.terms]
        assert list(row.term_weights) == pytest.approx(expected, rel=1e-6), row.topic
        assert all(w > 0 for w in row.term_weights)


def test_themes_and_representative_papers(labelled):
    documents, clusters, topics = labelled
    # two topics: too few to group, so each is its own theme (one level)
    assert _row(topics, 0)["theme"] != _row(topics, 1)["theme"]
    _, themes = _label_both(documents, clusters)
    by_theme = themes.set_index("theme")
    assert by_theme.loc[_row(topics, 0)["theme"], "label"] == _row(topics, 0)["label"]
    assert list(by_theme.loc[_row(topics, 0)["theme"], "terms"]) == list(_row(topics, 0)["terms"])
    assert _row(topics, -1)["theme"] == -1 and by_theme.loc[-1, "label"] == UNASSIGNED_LABEL
    assert sorted(_row(topics, 0)["representative_docs"]) == ["p0", "p1", "p2"]
    assert list(_row(topics, -1)["representative_docs"]) == []


def test_representative_papers_are_nearest_the_topic_mean():
    # topic 0 fans out over angles -1.0 .. 1.0 (its mean points at about 0.02), topic 1 is
    # elsewhere; ties go to the lower doc_id
    angles = np.array([1.0, -0.2, 0.0, 0.3, -1.0, 2.5, 2.6, 2.9])
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    chosen = representative_docs(np.array(list("abcdefgh")), vectors, np.repeat([0, 1], [5, 3]), 3)
    assert chosen == {0: ["c", "b", "d"], 1: ["g", "f", "h"]}  # nearest first
    twins = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert representative_docs(np.array(["z", "y", "x"]), twins, np.zeros(3), 2)[0] == ["y", "z"]


def test_label_stage_writes_the_papers_nearest_each_topic_mean(labelled):
    documents, clusters, _ = labelled
    vectors = _vectors(len(documents), [0, 0, 0, 1, 1, 1, 1], seed=3)
    topics = _label(documents, clusters, LabelConfig(n_representative=2), vectors=vectors)
    topic_of = documents["doc_id"].map(clusters.set_index("doc_id")["topic"]).to_numpy()
    for row in topics[topics["topic"] >= 0].itertuples():
        similarity = vectors @ vectors[topic_of == row.topic].mean(axis=0)
        nearest = [i for i in np.argsort(-similarity) if topic_of[i] == row.topic][:2]
        assert list(row.representative_docs) == [documents["doc_id"][i] for i in nearest]


def test_theme_rows_hold_their_topics_and_papers(labelled):
    documents, clusters, topics = labelled
    _, themes = _label_both(documents, clusters)
    assert themes["theme"].tolist() == [0, 1, -1]  # assigned themes first, by number
    assert themes["size"].sum() == len(documents)
    for row in themes.itertuples():
        members = topics[topics["theme"] == row.theme]
        assert sorted(row.topics) == sorted(members["topic"])
        assert row.size == members["size"].sum()


def test_terms_hold_no_stop_words_filler_latex_or_urls(labelled):
    documents, clusters, _ = labelled
    config = LabelConfig(n_terms=50, min_term_share=0.0)  # every term, not the top 10
    topics = _label(documents, clusters, config)
    banned = banned_words() | NOT_IN_LABELS  # the pipeline's own list, and the tests' own
    words = {w for terms in topics["terms"] for term in terms for w in term.split()}
    assert words, "expected some terms"
    assert not words & banned
    for leaked in ("alpha", "textit", "https", "github", "someone", "otcode", "graphsite", "www"):
        assert leaked not in words, f"{leaked!r} leaked into the terms"
    assert not any(faults(label) for label in topics["label"])


def test_filler_shared_by_every_paper_never_names_a_topic():
    """Each topic's papers all report "numerical results" of their "proposed method": the
    most typical words of the topic, yet rhetoric, never a label or a term."""
    sinkhorn = "Our proposed method gives numerical results for {} with sinkhorn barycenters."
    graphs = "Our proposed method gives numerical results for {} with graph message passing."
    subjects = ["images", "speech", "proteins", "molecules"]
    documents = make.documents([t.format(w) for t in (sinkhorn, graphs) for w in subjects])
    config = LabelConfig(n_terms=50, min_term_share=0.0)
    topics = _label(documents, make.clusters(documents["doc_id"], [0] * 4 + [1] * 4), config)
    for row in topics.itertuples():
        assert not faults(row.label), row.label
        assert not [term for term in row.terms if faults(term)], row.terms


def test_identical_vocabularies_still_get_unique_labels():
    abstracts = ["kernel ridge regression spline smoothing"] * 4
    documents = make.documents(abstracts)
    topics = _label(documents, make.clusters(documents["doc_id"], [0, 0, 1, 1]))
    assert topics["topic"].tolist() == [0, 1]
    assert topics["label"].is_unique
    assert topics["label"].str.len().min() > 0


def test_clusters_naming_unknown_papers_are_refused():
    documents = make.documents(GRAPHS)
    clusters = make.clusters(["p0", "p1", "stranger"], [0, 0, 0])
    with pytest.raises(PipelineError, match="do not match"):
        _label(documents, clusters)


def test_hyphenated_filler_is_not_a_term():
    abstracts = [
        "State-of-the-art wasserstein barycenters with sinkhorn",
        "A state-of-the-art sinkhorn solver for wasserstein transport",
        "Graph message passing over nodes",
        "Graph message passing for node labels",
    ]
    documents = make.documents(abstracts)
    topics = _label(documents, make.clusters(documents["doc_id"], [0, 0, 1, 1]))
    terms = [term for row in topics["terms"] for term in row]
    assert "state-of-the-art" not in terms


# --- terms and labels ----------------------------------------------------------------------


def test_distinct_terms_drop_words_and_plurals_a_better_term_says():
    assert distinct_terms(["optimal transport", "optimal", "transport", "sinkhorn"]) == [
        "optimal transport",
        "sinkhorn",
    ]
    # words first: the phrase takes the first word's place and absorbs the others
    assert distinct_terms(["optimal", "sinkhorn", "transport", "optimal transport"]) == [
        "optimal transport",
        "sinkhorn",
    ]
    assert distinct_terms(["diffusion models", "diffusion model", "bandits", "bandit"]) == [
        "diffusion models",
        "bandits",
    ]
    assert distinct_terms(["optimal transport", "transport plan"]) == [
        "optimal transport",
        "transport plan",
    ]


# --- the KeyBERTInspired + MMR path, with a stand-in embedding model -----------------------


def test_keybert_and_mmr_rerank_the_common_terms(labelled, hashing_encoder):
    documents, clusters, plain = labelled
    vectors = hashing_encoder.embed(documents["abstract"].tolist())
    topics = _label(documents, clusters, vectors=vectors, encoder=hashing_encoder)
    for topic in (0, 1):
        reranked, original = _row(topics, topic)["terms"], _row(plain, topic)["terms"]
        assert reranked and set(reranked) <= set(original)  # reordered, never invented
    assert topics["label"].is_unique
    assert not any(faults(label) for label in topics["label"])


def test_mmr_diversity_changes_which_terms_are_kept(labelled, hashing_encoder):
    documents, clusters, _ = labelled
    vectors = hashing_encoder.embed(documents["abstract"].tolist())

    def terms(diversity: float) -> list[list[str]]:
        config = LabelConfig(n_terms=3, mmr_diversity=diversity)
        topics = _label(documents, clusters, config, vectors, hashing_encoder)
        return [list(_row(topics, t)["terms"]) for t in (0, 1)]

    similar, varied = terms(0.0), terms(1.0)
    assert all(len(t) == 3 for t in similar + varied)
    assert similar != varied  # MMR picks among more candidates than it keeps


def test_ctfidf_representation_leaves_the_encoder_unused(labelled, hashing_encoder):
    documents, clusters, plain = labelled
    config = LabelConfig(representation="ctfidf")
    topics = _label(documents, clusters, config, encoder=hashing_encoder)
    pd.testing.assert_frame_equal(topics, plain)


def test_ten_papers_still_complete():
    """Ten papers, four venues' worth of spread: one level, labels, no crash."""
    abstracts = (TRANSPORT + GRAPHS + OUTLIER + TRANSPORT)[:10]
    documents = make.documents(abstracts, venues=["ICML", "ICLR"] * 5)
    topics = _label(documents, make.clusters(documents["doc_id"], [0] * 10))
    assert topics["topic"].tolist() == [0]
    assert topics["theme"].tolist() == [0]
    assert topics["label"].iloc[0] and not faults(topics["label"].iloc[0])
    assert len(topics["representative_docs"].iloc[0]) == LabelConfig().n_representative

"""Label stage: the same papers and topics give the same terms, labels, themes and
representative papers whatever the order of the documents and clusters rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline import tables
from pipeline.config import EmbedConfig, LabelConfig
from pipeline.stages.label import basis, make_topics
from pipeline.text import embedding_texts
from tests.support.synthetic_corpus import corpus


def _tables(documents, clusters, vectors, encoder):
    config = LabelConfig(n_themes=4)
    return make_topics(documents, clusters, vectors, config, encoder)


def test_shuffled_rows_give_the_same_topics_and_themes(hashing_encoder):
    built = corpus(n=300, n_topics=8, seed=4, n_themes=3)
    documents, clusters = built.documents, built.clusters
    vectors = hashing_encoder.embed(embedding_texts(documents))  # the encoder's own space
    first = _tables(documents, clusters, vectors, hashing_encoder)
    rng = np.random.default_rng(1)
    rows, placed = rng.permutation(len(documents)), rng.permutation(len(clusters))
    again = _tables(
        documents.iloc[rows].reset_index(drop=True),
        clusters.iloc[placed].reset_index(drop=True),
        vectors[rows],
        hashing_encoder,
    )
    for before, after in zip(first, again, strict=True):
        pd.testing.assert_frame_equal(before, after)
    assert first[0]["label"].nunique() == len(first[0])


def test_the_labels_basis_does_not_depend_on_row_order():
    built = corpus(n=120, n_topics=4, seed=2, n_themes=2)
    documents, clusters, vectors = built.documents, built.clusters, built.embeddings[1]
    rows = np.random.default_rng(0).permutation(len(documents))
    config, embed = LabelConfig(), EmbedConfig(precision="fp32")
    one = basis(*tables.join_fitted(documents, clusters, vectors), config, embed)
    shuffled = tables.join_fitted(documents.iloc[rows], clusters.iloc[rows[::-1]], vectors[rows])
    assert shuffled[0]["doc_id"].is_monotonic_increasing
    assert basis(*shuffled, config, embed) == one

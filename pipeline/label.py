"""Stage label: documents + clusters + embeddings -> topics.parquet and themes.parquet.

Terms: BERTopic's class-based TF-IDF over each topic's papers counts the terms of
`pipeline.text` (phrases of up to `max_ngram` words that never cross punctuation, stop words
or ML filler). BERTopic's KeyBERTInspired (closeness to the topic's papers) and
MaximalMarginalRelevance (variety) then rerank the candidates. A label is the best terms, 2 to
`label_words` words, unique across topics.

Themes: the topics' mean embeddings are grouped (Ward) into 8-20 themes, labelled the same way
from their papers; with too few topics there are fewer themes, or one level (a logged note).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import encoder as encoders
from pipeline import schemas, tables
from pipeline.centroids import topic_centroids, ward_groups
from pipeline.config import EmbedConfig, LabelConfig
from pipeline.schemas import UNASSIGNED_LABEL
from pipeline.text import term_analyzer, term_texts, term_words

log = logging.getLogger("pipeline.label")

MIN_THEMES, MAX_THEMES = 8, 20


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


def common_terms(terms: list[str], texts: list[str], analyzer, min_share: float) -> list[str]:
    """The terms used by at least `min_share` of the texts (and by two, where there are two),
    in order; topped up from the rest to three terms when fewer are that common."""
    doc_terms = [set(analyzer(text)) for text in texts]
    needed = max(min_share * len(texts), min(2, len(texts)))
    common = [t for t in terms if sum(t in d for d in doc_terms) >= needed]
    return common + [t for t in terms if t not in common][: max(0, 3 - len(common))]


class CommonTerms:
    """A BERTopic representation step: keeps the candidate terms that at least `min_share` of
    the topic's papers use, so its terms describe the topic rather than a few of its papers
    (and co-occur in its papers: NPMI coherence)."""

    def __init__(self, min_share: float):
        self.min_share = min_share

    def extract_topics(self, topic_model, documents, c_tf_idf, topics):
        analyzer = topic_model.vectorizer_model.build_analyzer()
        texts = documents.groupby("Topic")["Document"].agg(list)
        result = {}
        for topic, pairs in topics.items():
            score = {w: s for w, s in pairs if w}
            kept = distinct_terms(common_terms(list(score), texts[topic], analyzer, self.min_share))
            result[topic] = [(w, score[w]) for w in kept]
        return result


def _refiners(config: LabelConfig, wanted: int, vectors: np.ndarray) -> list:
    """KeyBERTInspired, then MaximalMarginalRelevance, adapted to follow CommonTerms."""
    from bertopic.representation import KeyBERTInspired, MaximalMarginalRelevance

    class KeyBERTOnCandidates(KeyBERTInspired):
        """Reranks the candidates it is given (the common terms) instead of drawing its own
        from the c-TF-IDF matrix, with the papers' own embeddings (`vectors`) rather than
        encoding the representative papers again."""

        def extract_topics(self, topic_model, documents, c_tf_idf, topics):
            _, docs, positions, doc_ids = topic_model._extract_representative_docs(
                c_tf_idf, documents, topics, self.nr_samples, self.nr_repr_docs
            )
            candidates = {topic: [w for w, _ in pairs if w] for topic, pairs in topics.items()}
            doc_vectors = vectors[np.concatenate(doc_ids).astype(int)]
            similarity, words = self._extract_embeddings(
                topic_model, candidates, docs, positions, doc_vectors
            )
            return self._extract_top_words(words, candidates, similarity)

    class BoundedMMR(MaximalMarginalRelevance):
        """Asks for no more terms than a topic has (BERTopic's MMR fails on such topics)."""

        def extract_topics(self, topic_model, documents, c_tf_idf, topics):
            result = {}
            for topic, pairs in topics.items():
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
    encoder=None,
) -> dict[int, list[str]]:
    """Best terms per group (a topic or theme id in `groups`), best first: the c-TF-IDF
    candidates that `min_term_share` of the group's papers use, then, given the embedding model
    (`encoder`), reranked by KeyBERTInspired and picked for variety by MaximalMarginalRelevance.
    `vectors` are the texts' embeddings."""
    from bertopic import BERTopic
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction
    from bertopic.vectorizers import ClassTfidfTransformer
    from sklearn.feature_extraction.text import CountVectorizer

    steps = [CommonTerms(config.min_term_share)]
    wanted = config.n_terms
    if encoder is not None and config.representation == "keybert_mmr":
        steps += _refiners(config, wanted, vectors)
    else:
        encoder = None
    model = BERTopic(
        language=None,  # keep punctuation: terms never cross it
        embedding_model=encoder,
        umap_model=BaseDimensionalityReduction(),
        hdbscan_model=BaseCluster(),  # the groups are given
        vectorizer_model=CountVectorizer(analyzer=term_analyzer(config.max_ngram)),
        ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
        representation_model=steps,
        top_n_words=max(3 * wanted, 50),
        calculate_probabilities=False,
    )
    ids = sorted(set(groups.tolist()))
    try:
        model.fit(texts, embeddings=np.zeros((len(texts), 1)), y=groups)
    except ValueError as exc:  # no term at all (e.g. papers of one filler word each)
        if "empty vocabulary" not in str(exc):
            raise
        return {group: [] for group in ids}
    current = model.topic_mapper_.get_mappings(original_topics=True)
    words = model.get_topics()
    return {
        group: distinct_terms([w for w, _ in words.get(current[group], []) if w])[: config.n_terms]
        for group in ids
    }


def _roots(term: str) -> set[str]:
    """Crude word roots (first five letters of each hyphen part): 'robot' ~ 'robotic'."""
    return {part[:5] for word in term_words(term) for part in word.split("-") if part}


def make_label(terms: list[str], max_words: int) -> str:
    """The best terms that fit, joined: 2 to `max_words` words, at most two terms once three
    words are reached, no root said twice; '' when the terms hold fewer than two words."""
    picked, n_words, roots = [], 0, set()
    for term in terms:
        size = len(term_words(term))
        if n_words + size > max_words or _roots(term) & roots:
            continue
        picked.append(term)
        n_words += size
        roots |= _roots(term)
        if n_words >= 3 or (n_words >= 2 and len(picked) >= 2):
            break
    return ", ".join(picked) if n_words >= 2 else ""


def unique_labels(terms: dict[int, list[str]], max_words: int, name: str) -> dict[int, str]:
    """A label per id (ids in order: the largest topic first gets its best label). Where the
    best label repeats an earlier one's words or one of its terms, the next terms are tried,
    then '<name> <id>'."""
    labels, taken, used_terms = {}, set(), set()
    for key in sorted(terms):
        candidates = [t for t in terms[key] if t not in used_terms]
        options = [make_label(candidates[i:], max_words) for i in range(len(candidates))]
        label = next((o for o in options if o and _words(o) not in taken), f"{name} {key}")
        taken.add(_words(label))
        used_terms |= set(label.split(", "))
        labels[key] = label
    return labels


def _words(label: str) -> frozenset[str]:
    return frozenset(w for term in label.lower().split(",") for w in term_words(term))


def theme_count(n_topics: int, setting: int | str) -> int:
    """Themes to form over `n_topics`: 8-20 (auto: about a quarter of the topics) or as set,
    but never more than half the topics; with fewer than 4 topics, one level (a theme each)."""
    wanted = min(MAX_THEMES, max(MIN_THEMES, round(n_topics / 4)))
    wanted = wanted if setting == "auto" else int(setting)
    if n_topics < 4:
        return n_topics
    return min(wanted, n_topics // 2)


def assign_themes(vectors: np.ndarray, topics: np.ndarray, config: LabelConfig) -> dict[int, int]:
    """topic -> theme: Ward groups of the topics' mean embeddings, numbered by papers, largest
    first. Logs a note where there are too few topics for the themes asked for."""
    ids, centroids = topic_centroids(vectors, topics)
    n_themes = theme_count(len(ids), config.n_themes)
    if n_themes == len(ids):
        log.info("note: only %d topics, too few to group: one level (each its own theme)", len(ids))
    elif n_themes < MIN_THEMES:
        log.info("note: only %d topics: %d themes (8-20 need at least 16)", len(ids), n_themes)
    groups = ward_groups(centroids, n_themes)
    papers = pd.Series(topics[topics >= 0]).value_counts()
    size = {g: sum(papers[t] for t, h in zip(ids, groups, strict=True) if h == g) for g in groups}
    order = sorted(set(groups.tolist()), key=lambda g: (-size[g], min(ids[groups == g])))
    number = {g: i for i, g in enumerate(order)}
    return {int(t): number[g] for t, g in zip(ids, groups, strict=True)}


def representative_docs(
    doc_ids: np.ndarray, vectors: np.ndarray, topics: np.ndarray, n: int
) -> dict[int, list[str]]:
    """topic -> the doc_ids of its `n` papers nearest its mean embedding (ties: lower doc_id)."""
    ids, centroids = topic_centroids(vectors, topics)
    chosen = {}
    for topic, centre in zip(ids, centroids, strict=True):
        members = np.flatnonzero(topics == topic)
        similarity = vectors[members] @ centre
        order = np.lexsort((doc_ids[members], -similarity))[:n]
        chosen[int(topic)] = [str(d) for d in doc_ids[members[order]]]
    return chosen


def paper_vectors(documents: pd.DataFrame, merged: pd.DataFrame, vectors: np.ndarray) -> np.ndarray:
    """The rows of `vectors` (documents' order) in `merged`'s order."""
    row_of = {doc_id: i for i, doc_id in enumerate(documents["doc_id"])}
    return np.asarray(vectors, dtype=np.float32)[[row_of[d] for d in merged["doc_id"]]]


def theme_labels(
    texts: list[str],
    paper_themes: np.ndarray,
    topic_terms: dict[int, list[str]],
    topic_labels: dict[int, str],
    themes: dict[int, int],
    vectors: np.ndarray,
    config: LabelConfig,
    encoder=None,
) -> tuple[dict[int, str], dict[int, list[str]]]:
    """(theme -> label, theme -> terms). A real second level is labelled from its papers; with
    one level a theme is its topic, with the topic's label and terms."""
    if len(set(themes.values())) == len(themes):
        labels = {themes[t]: topic_labels[t] for t in themes}
        return labels, {themes.get(t, t): terms for t, terms in topic_terms.items()}
    theme_terms = group_terms(texts, paper_themes, vectors, config, encoder)
    assigned = {h: v for h, v in theme_terms.items() if h >= 0}
    return unique_labels(assigned, config.label_words, "Theme"), theme_terms


def theme_rows(
    themes: dict[int, int],
    labels: dict[int, str],
    terms: dict[int, list[str]],
    sizes: pd.Series,
) -> pd.DataFrame:
    """One row per theme (themes.parquet): label, terms, papers, its topics largest first; the
    unassigned papers as theme -1 when there are any."""
    members: dict[int, list[int]] = {}
    for topic in sorted(themes, key=lambda t: (-sizes[t], t)):
        members.setdefault(themes[topic], []).append(topic)
    if schemas.UNASSIGNED in sizes.index:
        members[schemas.UNASSIGNED] = [schemas.UNASSIGNED]
    rows = [
        {
            "theme": theme,
            "label": labels.get(theme, UNASSIGNED_LABEL),
            "terms": terms.get(theme, []),
            "size": int(sum(sizes[t] for t in topics)),
            "topics": topics,
        }
        for theme, topics in sorted(members.items(), key=lambda item: (item[0] < 0, item[0]))
    ]
    return pd.DataFrame(rows, columns=schemas.THEMES.columns)


def label_topics(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    vectors: np.ndarray,
    config: LabelConfig,
    encoder=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pure core: (topics, themes) tables. `vectors` are the embeddings of `documents`' rows;
    `encoder` (the embedding model) enables the KeyBERTInspired + MMR reranking."""
    merged = tables.join_papers(documents, clusters)
    topics = merged["topic"].to_numpy()
    texts = term_texts(merged)
    vectors = paper_vectors(documents, merged, vectors)
    encoder = encoder if config.representation == "keybert_mmr" else None

    terms = group_terms(texts, topics, vectors, config, encoder)
    labels = unique_labels({t: v for t, v in terms.items() if t >= 0}, config.label_words, "Topic")
    themes = assign_themes(vectors, topics, config)
    paper_themes = np.array([themes.get(int(t), -1) for t in topics])
    names, theme_terms = theme_labels(
        texts, paper_themes, terms, labels, themes, vectors, config, encoder
    )
    representatives = representative_docs(
        merged["doc_id"].to_numpy(), vectors, topics, config.n_representative
    )
    sizes = pd.Series(topics).value_counts()
    topic_table = pd.DataFrame(
        [
            {
                "topic": topic,
                "label": labels.get(topic, UNASSIGNED_LABEL),
                "terms": terms[topic],
                "size": int(sizes[topic]),
                "theme": themes.get(topic, schemas.UNASSIGNED),
                "representative_docs": representatives.get(topic, []),
            }
            for topic in sorted(terms)
        ],
        columns=schemas.TOPICS.columns,
    )
    return topic_table, theme_rows(themes, names, theme_terms, sizes)


def run(
    config: LabelConfig,
    embed_config: EmbedConfig,
    documents: Path,
    clusters: Path,
    embeddings: Path,
    topics: Path,
    themes: Path,
) -> None:
    """`embed_config` loads the encoder (with its precision) that KeyBERTInspired embeds the
    candidate terms with."""
    lineage = tables.stage_lineage(
        config, documents=documents, clusters=clusters, embeddings=embeddings
    )
    papers = tables.read_table(documents, schemas.DOCUMENTS)
    assigned = tables.read_table(clusters, schemas.CLUSTERS)
    _, vectors = tables.read_embeddings(embeddings, documents=papers)
    encoder = None
    if config.representation == "keybert_mmr":
        encoder = encoders.load_encoder(embed_config)
    # the candidate terms are embedded as the papers were: the embed section's precision
    with encoders.precision_context(encoders.resolve_precision(embed_config)):
        topic_table, theme_table = label_topics(papers, assigned, vectors, config, encoder)
    for row in topic_table.itertuples():
        log.info("topic %3d  %4d papers  theme %2d  %s", row.topic, row.size, row.theme, row.label)
    tables.write_table(theme_table, themes, schemas.THEMES, lineage)
    tables.write_table(topic_table, topics, schemas.TOPICS, lineage)

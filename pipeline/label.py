"""Stage 4, label: documents + clusters + embeddings -> topics.parquet (one row per topic).

Terms: BERTopic's class-based TF-IDF over each topic's papers counts words and phrases of up to
`max_ngram` words that never cross punctuation, an English stop word or a filler word of ML
abstracts ("propose", "method", "results", ...), and that are not made of generic words alone
("learning" and "models" only inside phrases such as "reinforcement learning"); maths, LaTeX,
URLs and markup go first. BERTopic's KeyBERTInspired (closeness to the topic's papers) and
MaximalMarginalRelevance (variety) then rerank the candidates. A label is the best terms, 2 to
`label_words` words, unique across topics.

Themes: the topics' mean embeddings are grouped (Ward) into 8-20 themes, labelled the same way
from their papers; with too few topics there are fewer themes, or one level (a logged note).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import tables
from pipeline.cluster import group_topics, topic_centroids
from pipeline.config import LabelConfig
from pipeline.embed import embedding_texts
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.label")

UNASSIGNED_LABEL = "Unassigned"
MIN_THEMES, MAX_THEMES = 8, 20

# The rhetoric of ML abstracts: never part of a term or a label.
ML_FILLER = frozenset(
    """
    propose proposed proposes proposing method methods approach approaches result results show
    shows shown showing paper papers novel new existing work works study studies demonstrate
    demonstrates demonstrated use used using uses based achieve achieves achieved
    improve improves improved improvement improvements significantly significant experiments
    experimental empirical empirically extensive extensively various effective effectively
    efficiently introduce introduces introduced present presents address addresses provide
    provides leverage leverages leveraging furthermore moreover additionally however including
    include includes outperform outperforms outperforming baseline baselines benchmark
    benchmarks code available github com https http www org et al le ge wide range key
    challenge challenges challenging recent recently previous previously different well simple
    state-of-the-art so-called well-known enable enables allow allows able paradigm aim aims
    """.split()
)
# Too general to name a topic alone, yet part of phrases that do ("reinforcement learning").
GENERIC = frozenset(
    """
    learning learn learned model models modeling data task tasks problem problems framework
    performance efficient large small high low state art prior network networks neural deep
    training train trained algorithm algorithms optimal feature features estimating generating
    generate dataset datasets machine
    """.split()
)
_LATEX_MATH = re.compile(r"\$[^$]*\$")
_LATEX_COMMAND = re.compile(r"\\[a-zA-Z]+")
_URL = re.compile(r"https?://\S+|www\.\S+")
_MARKUP = re.compile(r"<[^>]{0,200}>")
TOKEN_PATTERN = r"(?u)\b[a-zA-Z][a-zA-Z\-]*[a-zA-Z]\b"
_WORD = re.compile(TOKEN_PATTERN)
_PHRASE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"'/|\u2018\u2019\u201c\u201d]+|\s-+\s|--+")


def clean_for_terms(text: str) -> str:
    """Drop maths, LaTeX commands, URLs and markup before counting terms."""
    for pattern in (_LATEX_MATH, _URL, _MARKUP, _LATEX_COMMAND):
        text = pattern.sub(" ", text)
    return text


def banned_words() -> set[str]:
    """English stop words and ML filler: no term or label contains one."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return set(ENGLISH_STOP_WORDS | ML_FILLER)


def stop_words() -> list[str]:
    return sorted(banned_words())


def phrase_terms(text: str, max_ngram: int, banned: set[str]) -> list[str]:
    """The terms of a text: runs of words between punctuation and banned words, cut into every
    n-gram up to `max_ngram` words, less those made only of GENERIC words."""
    terms = []
    for segment in _PHRASE_BREAK.split(clean_for_terms(text).lower()):
        run: list[str] = []
        for word in [*_WORD.findall(segment), ""]:  # "" ends the last run
            if word and word not in banned:
                run.append(word)
                continue
            for n in range(1, max_ngram + 1):
                for i in range(len(run) - n + 1):
                    if not GENERIC.issuperset(run[i : i + n]):
                        terms.append(" ".join(run[i : i + n]))
            run = []
    return terms


def term_analyzer(config: LabelConfig):
    """The tokeniser of the topic terms (also the one NPMI coherence counts with)."""
    banned = banned_words()
    return lambda text: phrase_terms(text, config.max_ngram, banned)


def term_texts(documents: pd.DataFrame) -> list[str]:
    """The text terms are counted in per paper: 'Title. Abstract' without maths and markup."""
    return [clean_for_terms(text) for text in embedding_texts(documents)]


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _folded(term: str) -> set[str]:
    return {_singular(w) for w in term.split()}


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
        vectorizer_model=CountVectorizer(analyzer=term_analyzer(config)),
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
    return {part[:5] for word in term.split() for part in word.split("-") if part}


def make_label(terms: list[str], max_words: int) -> str:
    """The best terms that fit, joined: 2 to `max_words` words, at most two terms once three
    words are reached, no root said twice; '' when the terms hold fewer than two words."""
    picked, n_words, roots = [], 0, set()
    for term in terms:
        size = len(term.split())
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
    return frozenset(label.replace(",", " ").lower().split())


def label_faults(label: str) -> list[str]:
    """The stop and filler words a label holds (none for a good label)."""
    return sorted(_words(label) & banned_words())


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
    groups = group_topics(centroids, n_themes)
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


def label_topics(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    config: LabelConfig,
    vectors: np.ndarray | None = None,
    encoder=None,
) -> pd.DataFrame:
    """Pure core: one row per topic with label, terms, size, a count per venue, theme and
    theme label, and representative papers. `vectors` are the embeddings of `documents`' rows
    (without them: one level and no representative papers); `encoder` (the embedding model)
    enables the KeyBERTInspired + MMR reranking."""
    merged = clusters.merge(documents, on="doc_id", how="left", validate="one_to_one")
    if merged["abstract"].isna().any() or len(merged) != len(documents):
        raise PipelineError("clusters do not match documents (different papers): rerun cluster")
    topics = merged["topic"].to_numpy()
    texts = term_texts(merged)
    if vectors is None:
        log.info("note: no embeddings: one level and no representative papers")
        encoder = None
    else:
        row_of = {doc_id: i for i, doc_id in enumerate(documents["doc_id"])}
        vectors = np.asarray(vectors, dtype=np.float32)[[row_of[d] for d in merged["doc_id"]]]

    terms = group_terms(texts, topics, vectors, config, encoder)
    labels = unique_labels({t: v for t, v in terms.items() if t >= 0}, config.label_words, "Topic")
    if vectors is None:
        themes = {t: i for i, t in enumerate(sorted(labels))}
    else:
        themes = assign_themes(vectors, topics, config)
    paper_themes = np.array([themes.get(int(t), -1) for t in topics])
    if len(set(themes.values())) < len(themes):  # a real second level: label it from its papers
        theme_terms = group_terms(texts, paper_themes, vectors, config, encoder)
        theme_terms = {h: v for h, v in theme_terms.items() if h >= 0}
        theme_labels = unique_labels(theme_terms, config.label_words, "Theme")
    else:  # one level: a theme is its topic
        theme_labels = {themes[t]: labels[t] for t in themes}
    representatives = (
        {}
        if vectors is None
        else representative_docs(
            merged["doc_id"].to_numpy(), vectors, topics, config.n_representative
        )
    )

    venues = sorted(merged["venue"].unique())
    counts = pd.crosstab(merged["topic"], merged["venue"]).reindex(columns=venues, fill_value=0)
    rows = []
    for topic in sorted(terms):
        theme = themes.get(topic, -1)
        rows.append(
            {
                "topic": topic,
                "label": labels.get(topic, UNASSIGNED_LABEL),
                "terms": terms[topic],
                "size": int((topics == topic).sum()),
                **{f"count_{venue}": int(counts.loc[topic, venue]) for venue in venues},
                "theme": theme,
                "theme_label": theme_labels.get(theme, UNASSIGNED_LABEL),
                "representative_docs": representatives.get(topic, []),
            }
        )
    return pd.DataFrame(rows)


def run(
    config: LabelConfig,
    documents_path: Path,
    clusters_path: Path,
    out_path: Path,
    embeddings_path: Path,
) -> None:
    documents = tables.read_table(documents_path, tables.DOCUMENTS)
    clusters = tables.read_table(clusters_path, tables.CLUSTERS)
    lineage = tables.stage_lineage(
        config, documents=documents_path, clusters=clusters_path, embeddings=embeddings_path
    )
    doc_ids, vectors = tables.read_embeddings(embeddings_path)
    if doc_ids != documents["doc_id"].tolist():
        raise PipelineError("embeddings do not match documents: rerun the embed stage")
    encoder = None
    if config.representation == "keybert_mmr":
        from pipeline.config import EmbedConfig
        from pipeline.embed import load_encoder

        encoder = load_encoder(EmbedConfig())
    topics = label_topics(documents, clusters, config, vectors, encoder)
    for row in topics.itertuples():
        log.info("topic %3d  %4d papers  theme %2d  %s", row.topic, row.size, row.theme, row.label)
    tables.write_table(topics, out_path, tables.TOPICS, lineage)

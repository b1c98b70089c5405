"""Stage label: documents + clusters + embeddings -> topics.parquet and themes.parquet.

Terms: the terms of `pipeline.text` (phrases of up to `max_ngram` words that never cross
punctuation, stop words or ML filler) are counted once per paper and summed by topic
(counts.py; on the configured engine, here or on Ray); BERTopic's class-based TF-IDF weighs
those counts. BERTopic's KeyBERTInspired (closeness to the topic's papers) and
MaximalMarginalRelevance (variety) then rerank the candidates.

Labels (names.py) are noun phrases chosen apart from the terms: the candidates of a topic's
titles and abstracts that tell its papers from its nearest topics' (contrast.py), read as noun
phrases (phrases.py), the label being the head phrase, alone or with a second, whose words its
papers use and its neighbours' do not. Labels are only made here: a later step may keep a
surviving topic's previous label.

Themes (grouping.py): the topics' mean embeddings beside their word profiles are grouped (Ward)
into 8-20 themes, and a theme whose terms rarely share a paper gives up a topic to a theme it
lies about as near; each has the terms that tell its papers from the rest (themes.py) and a
label of its topics' heads, after a phrase they share or alone, chosen with its siblings' so
that each paper's words pick its own theme's (matching.py); with too few topics there are fewer
themes, or one level (a logged note).
Areas (areas.py) group the themes in a large corpus.

Across builds (keep.py): a topic whose papers are unchanged keeps its row; where the only change
is new topics born beside unchanged ones, those alone are labelled, among their nearest topics'
papers (born.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import centroids, phrases, schemas, scores, tables, text
from pipeline import encoder as encoders
from pipeline.centroids import topic_centroids
from pipeline.config import EmbedConfig, EngineConfig, LabelConfig
from pipeline.errors import PipelineError
from pipeline.schemas import UNASSIGNED_LABEL
from pipeline.stages.label import keep
from pipeline.stages.label.areas import area_count, area_labels, assign_areas
from pipeline.stages.label.born import born_table, born_topics
from pipeline.stages.label.contrast import WordEvidence, contrast_terms, nearest_groups
from pipeline.stages.label.counts import TermCounts, count_terms
from pipeline.stages.label.grouping import assign_themes, make_themes, theme_count
from pipeline.stages.label.matching import reader_evidence
from pipeline.stages.label.names import Label, matched_topic_labels, topic_labels
from pipeline.stages.label.papers import representative_docs, title_texts, topic_rows
from pipeline.stages.label.terms import distinct_terms, group_terms
from pipeline.stages.label.themes import CANDIDATE_SHARE, theme_labels, theme_rows
from pipeline.text import term_analyzer, term_texts

log = logging.getLogger("pipeline.label")

# the code a label depends on, part of its basis: this package, the word rules (phrases), the
# grouping's Ward and NPMI (centroids, scores) and the word lists (text, last)
LABEL_CODE = sorted(Path(__file__).parent.glob("*.py")) + [
    Path(module.__file__) for module in (phrases, centroids, scores, text)
]

NEAREST_TOPICS = 10  # a topic's label is told from this many nearest topics' papers

__all__ = [
    "assign_themes",
    "distinct_terms",
    "make_topics",
    "run",
    "theme_count",
    "topic_labels",
]


def _with_unassigned(table: pd.DataFrame, key: str, row: dict) -> pd.DataFrame:
    if schemas.UNASSIGNED in set(table[key]):
        return table
    return pd.concat([table, pd.DataFrame([row], columns=table.columns)], ignore_index=True)


def sized(
    topic_table: pd.DataFrame, theme_table: pd.DataFrame, topics: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The topic and theme tables with the papers of every topic in `topics` (each paper's):
    sizes, a theme's topics largest first, and rows for unassigned papers the fit had none of."""
    sizes = pd.Series(topics).value_counts()
    if schemas.UNASSIGNED in sizes.index:
        nothing = {"label": UNASSIGNED_LABEL, "terms": [], "size": 0}
        unassigned = {"topic": -1, **nothing, "term_weights": [], "theme": -1}
        topic_table = _with_unassigned(
            topic_table, "topic", {**unassigned, "representative_docs": []}
        )
        theme_table = _with_unassigned(
            theme_table,
            "theme",
            {"theme": -1, **nothing, "topics": [-1], "area": -1, "area_label": ""},
        )
    topic_table = topic_table.sort_values("topic", ignore_index=True)
    topic_table["size"] = [int(sizes.get(t, 0)) for t in topic_table["topic"]]
    last = np.iinfo(np.int32).max  # the unassigned theme comes last
    theme_table = theme_table.sort_values(
        "theme", key=lambda c: c.where(c >= 0, last), ignore_index=True
    )
    theme_table["topics"] = [
        sorted(members, key=lambda t: (-sizes.get(t, 0), t)) for members in theme_table["topics"]
    ]
    theme_table["size"] = [int(sum(sizes.get(t, 0) for t in m)) for m in theme_table["topics"]]
    return topic_table, theme_table


def settings_key(config: LabelConfig, embed_config: EmbedConfig) -> str:
    """A fingerprint of how labels are made, whatever the papers: the label settings, the
    encoder (model, precision) and the code of `LABEL_CODE`. Earlier labels carry over only
    from tables made the same way: changed settings or a new release label every topic."""
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in LABEL_CODE))
    digest.update(
        json.dumps(
            [config.model_dump(), embed_config.model, encoders.resolve_precision(embed_config)]
        ).encode()
    )
    return digest.hexdigest()[:32]


def basis(
    merged: pd.DataFrame, vectors: np.ndarray, config: LabelConfig, embed_config: EmbedConfig
) -> str:
    """A fingerprint of everything the terms, labels and themes are computed from: the fitted
    papers (their ids, texts, topics and vectors), the settings and the code that makes terms
    and labels (LABEL_CODE: a new release relabels). Papers added to a saved model later
    change none of it, so their labels stay."""
    fitted = merged["placed"].to_numpy() == "fit"
    digest = hashlib.sha256(settings_key(config, embed_config).encode())
    papers = merged.loc[fitted, ["doc_id", "title", "abstract"]].astype(str).values.tolist()
    digest.update(json.dumps(papers).encode())
    digest.update(merged["topic"].to_numpy(np.int32)[fitted].tobytes())
    digest.update(np.ascontiguousarray(vectors[fitted], dtype=np.float32).tobytes())
    return digest.hexdigest()[:32]


def topic_label_choice(
    merged: pd.DataFrame,
    vectors: np.ndarray,
    counts: TermCounts,
    title_counts: TermCounts,
    config: LabelConfig,
    reader: WordEvidence,
) -> tuple[dict[int, Label], tuple[WordEvidence, dict[int, np.ndarray]]]:
    """Each topic's Label (names.py): its candidates told from its NEAREST_TOPICS nearest
    topics (by their mean embeddings), judged by the words of its papers' titles and
    abstracts, then chosen again together so that each paper's words (`reader`: a reader's
    words of the papers) pick its own topic's label (`matched_topic_labels`); and that
    evidence (the words, each topic's papers) for the themes'."""
    topics = merged["topic"].to_numpy()
    ids, centroids = topic_centroids(vectors, topics)
    near = nearest_groups(centroids, NEAREST_TOPICS)
    neighbours = {int(t): [int(ids[j]) for j in near[i]] for i, t in enumerate(ids)}
    scored = contrast_terms(counts, title_counts, neighbours, CANDIDATE_SHARE)
    evidence = WordEvidence(term_texts(merged), term_analyzer(config.max_ngram))
    papers_of = {int(t): np.flatnonzero(topics == t) for t in ids}
    size = {t: len(rows) for t, rows in papers_of.items()}
    order = sorted(size, key=lambda t: (-size[t], t))
    labels = topic_labels(scored, evidence, papers_of, neighbours, order, config.label_words)
    named = {t: label for t, label in labels.items() if label.head}
    labels |= matched_topic_labels(named, scored, reader, papers_of, config.label_words)
    return labels, (evidence, papers_of)


def make_topics(
    documents: pd.DataFrame,
    clusters: pd.DataFrame,
    vectors: np.ndarray,
    config: LabelConfig,
    encoder=None,
    engine: EngineConfig | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pure core: (topics, themes) tables. Terms, labels, themes, areas and representative
    papers come from the papers the topic model was fitted on (clusters' `placed` == "fit");
    sizes count every paper. `vectors` are the embeddings of `documents`' rows (every paper,
    or the fitted ones alone); `encoder` (the embedding model) enables the KeyBERTInspired +
    MMR reranking of the terms. The papers' terms are counted by topic on `engine` (default:
    here)."""
    merged, vectors = tables.join_fitted(documents, clusters, vectors)
    topics = merged["topic"].to_numpy()
    texts = term_texts(merged)
    encoder = encoder if config.representation == "keybert_mmr" else None
    engine = engine or EngineConfig()

    counts = count_terms(texts, topics, config.max_ngram, engine)
    title_counts = count_terms(title_texts(merged), topics, config.max_ngram, engine)
    weighted = group_terms(texts, topics, vectors, config, counts, encoder)
    terms = {t: [term for term, _ in pairs] for t, pairs in weighted.items()}
    reader = reader_evidence(texts)  # every word of the papers, as a reader matches labels
    labels, evidence = topic_label_choice(merged, vectors, counts, title_counts, config, reader)
    themes = make_themes(vectors, topics, texts, counts, config)
    reading = (reader, evidence[1])  # every word, each topic's papers
    theme_names, theme_terms = theme_labels(
        counts, title_counts, terms, labels, themes, reading, config
    )
    n_areas = area_count(len(merged), len(set(themes.values())), len(themes), config)
    areas = assign_areas(vectors, topics, themes, n_areas)
    area_names = area_labels(counts, title_counts, themes, areas, theme_names, reading, config)
    representatives = representative_docs(
        merged["doc_id"].to_numpy(), vectors, topics, config.n_representative
    )
    topic_table = topic_rows(sorted(terms), labels, weighted, representatives, themes)
    theme_table = theme_rows(
        themes,
        {h: label.text for h, label in theme_names.items()},
        theme_terms,
        areas,
        {a: label.text for a, label in area_names.items()},
    )
    return sized(topic_table, theme_table, clusters["topic"].to_numpy())


def previous_tables(topics: Path, themes: Path, fingerprint: str):
    """The tables a previous run wrote from the same basis, or None."""
    try:
        if all(tables.read_notes(p).get("basis") == fingerprint for p in (topics, themes)):
            return tables.read_table(topics, schemas.TOPICS), tables.read_table(
                themes, schemas.THEMES
            )
    except PipelineError:  # missing or unreadable: compute them
        pass
    return None


def earlier_tables(topics: Path, themes: Path, settings: str) -> keep.Earlier | None:
    """The tables a previous run wrote the same way (`settings`: settings_key), with its
    topics' paper digests, or None."""
    try:
        notes = tables.read_notes(topics)
        papers = json.loads(notes.get("topic_papers", "null"))
        if not isinstance(papers, dict):
            return None
        if notes.get("settings") != settings:
            log.info("labels made afresh: the label settings, encoder or code changed")
            return None
        return keep.Earlier(
            tables.read_table(topics, schemas.TOPICS),
            tables.read_table(themes, schemas.THEMES),
            {int(k): str(v) for k, v in papers.items()},
        )
    except (PipelineError, ValueError):  # missing or unreadable: nothing carries over
        return None


def carried_over(topic_table, theme_table, earlier, merged, vectors):
    """keep.carried_over on the fitted papers `merged` (join_fitted) and their `vectors`."""
    fitted = merged["topic"].to_numpy()
    ids, centres = topic_centroids(vectors, fitted)
    return keep.carried_over(
        topic_table,
        theme_table,
        earlier,
        keep.paper_digests(merged["doc_id"].to_numpy(), fitted),
        dict(zip(ids.tolist(), centres, strict=True)),
    )


def run(
    config: LabelConfig,
    embed_config: EmbedConfig,
    documents: Path,
    clusters: Path,
    embeddings: Path,
    topics: Path,
    themes: Path,
    engine: EngineConfig | None = None,
) -> None:
    """The papers' terms are counted on the configured `engine`. `embed_config` loads the
    encoder (with its precision) that KeyBERTInspired embeds the
    candidate terms with. Where the previous tables were computed from the same basis (only
    papers added to the saved model since), their labels, terms and themes are kept; where
    only new topics were born beside the earlier ones, those alone are labelled (born.py)."""
    lineage = tables.stage_lineage(
        config, documents=documents, clusters=clusters, embeddings=embeddings
    )
    placed = tables.read_table(clusters, schemas.CLUSTERS)
    papers, vectors = tables.read_fitted(documents, embeddings, placed)  # the terms' papers
    merged, fitted_vectors = tables.join_fitted(papers, placed, vectors)
    fingerprint = basis(merged, fitted_vectors, config, embed_config)
    digests = keep.paper_digests(merged["doc_id"].to_numpy(), merged["topic"].to_numpy())
    how = settings_key(config, embed_config)
    kept = previous_tables(topics, themes, fingerprint)
    if kept is not None:
        log.info("labels kept: the papers they were computed from are unchanged")
        topic_table, theme_table = sized(*kept, placed["topic"].to_numpy())
    else:
        earlier = earlier_tables(topics, themes, how)
        born = born_topics(earlier, digests)
        encoder = None
        if config.representation == "keybert_mmr":
            encoder = encoders.load_encoder(embed_config)
        # the candidate terms are embedded as the papers were: the embed section's precision
        with encoders.precision_context(encoders.resolve_precision(embed_config)):
            if born:  # only new topics beside unchanged ones: label those alone
                topic_table = born_table(
                    merged, fitted_vectors, earlier, born, config, encoder, engine, NEAREST_TOPICS
                )
                theme_table = earlier.themes
            else:
                topic_table, theme_table = make_topics(
                    papers, placed, vectors, config, encoder, engine
                )
        topic_table, theme_table = sized(
            *carried_over(topic_table, theme_table, earlier, merged, fitted_vectors),
            placed["topic"].to_numpy(),
        )
    for row in topic_table.itertuples():
        log.info("topic %3d  %4d papers  theme %2d  %s", row.topic, row.size, row.theme, row.label)
    papers = json.dumps(digests, sort_keys=True)
    notes = {"basis": fingerprint, "settings": how, "topic_papers": papers}
    tables.write_table(theme_table, themes, schemas.THEMES, lineage, notes)
    tables.write_table(topic_table, topics, schemas.TOPICS, lineage, notes)

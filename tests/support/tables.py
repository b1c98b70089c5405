"""The stage tables for unit tests, one builder per table: every column of its schema in
pipeline.schemas, with the types the stage writes, and defaults for what a test leaves out.
Each builder checks its frame against the schema, so a test's input is a table a stage could
have written (a test of a bad table breaks a good one on purpose)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from pipeline import schemas
from pipeline.schemas import UNASSIGNED, UNASSIGNED_LABEL, Schema


def _column(value, n: int) -> list:
    """`value` for each of n rows: a sequence as it is (n long), anything else repeated."""
    if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray | pd.Series):
        return [value] * n
    values = list(value)
    assert len(values) == n, f"{len(values)} values for {n} rows"
    return values


def _checked(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    assert list(frame.columns) == schema.columns, (list(frame.columns), schema.columns)
    pa.Table.from_pandas(frame, schema=schema.arrow, preserve_index=False)  # raises if not
    return frame


def _strings(values: list) -> pd.Series:
    """A nullable string column as tables.read_table gives it: object, None for missing."""
    return pd.Series(values, dtype=object)


def documents(
    abstracts: Sequence[str] | None = None,
    *,
    n: int | None = None,
    doc_ids: Sequence[str] | None = None,
    venues="ICML",
    conferences=None,
    tracks="",
    years=2025,
    titles=None,
    sources="a.txt",
    source_ids=None,
    urls=None,
) -> pd.DataFrame:
    """The documents table (ingest): papers p0, p1, ... of one venue's main conference in 2025
    unless told otherwise; `conferences` default to the venues; `years` may hold None."""
    sized = [v for v in (abstracts, doc_ids, venues, titles) if _is_list(v)]
    n = len(sized[0]) if sized else n
    assert n is not None, "give the abstracts, the doc_ids, the venues, the titles or n"
    if abstracts is None:
        abstracts = [f"Abstract number {i} with a few words in it." for i in range(n)]
    venues = _column(venues, n)
    frame = pd.DataFrame(
        {
            "doc_id": _column(doc_ids, n) if doc_ids is not None else [f"p{i}" for i in range(n)],
            "venue": venues,
            "conference": venues if conferences is None else _column(conferences, n),
            "track": _column(tracks, n),
            "year": pd.array(_column(years, n), dtype="Int32"),
            "title": _strings(_column(titles, n)),
            "abstract": _column(abstracts, n),
            "source": _column(sources, n),
            "source_id": _strings(_column(source_ids, n)),
            "url": _strings(_column(urls, n)),
        }
    )
    return _checked(frame, schemas.DOCUMENTS)


def _is_list(value) -> bool:
    return isinstance(value, Sequence | np.ndarray | pd.Series) and not isinstance(value, str)


def clusters(
    doc_ids: Sequence[str],
    topics: Sequence[int],
    *,
    x=0.0,
    y=0.0,
    raw_outlier=None,
    placed="fit",
    similarity=1.0,
) -> pd.DataFrame:
    """The clusters table (cluster): each paper's topic, map position (0, 0 unless given) and
    similarity; `raw_outlier` defaults to the unassigned papers."""
    n = len(doc_ids)
    topics = np.asarray(topics, dtype=np.int32)
    frame = pd.DataFrame(
        {
            "doc_id": list(doc_ids),
            "topic": topics,
            "x": np.asarray(_column(x, n), dtype=np.float32),
            "y": np.asarray(_column(y, n), dtype=np.float32),
            "raw_outlier": topics < 0 if raw_outlier is None else _column(raw_outlier, n),
            "placed": _column(placed, n),
            "similarity": np.asarray(_column(similarity, n), dtype=np.float32),
        }
    )
    return _checked(frame, schemas.CLUSTERS)


def topics(
    ids: Sequence[int],
    *,
    labels=None,
    terms=None,
    term_weights=None,
    sizes=1,
    themes=None,
    representative_docs=None,
) -> pd.DataFrame:
    """The topics table (label), one row per topic id in the order given. Defaults: labels
    `topic <id>` (Unassigned for -1), no terms, each topic its own theme (-1 for -1), no
    representative papers; `term_weights` default to 0.1 per term."""
    n = len(ids)
    labels = [_label(t, "topic") for t in ids] if labels is None else list(labels)
    terms = [[] for _ in ids] if terms is None else [list(t) for t in terms]
    if term_weights is None:
        term_weights = [[0.1] * len(t) for t in terms]
    frame = pd.DataFrame(
        {
            "topic": np.asarray(ids, dtype=np.int32),
            "label": labels,
            "terms": terms,
            "term_weights": [list(w) for w in term_weights],
            "size": np.asarray(_column(sizes, n), dtype=np.int32),
            "theme": np.asarray(ids if themes is None else _column(themes, n), dtype=np.int32),
            "representative_docs": (
                [[] for _ in ids] if representative_docs is None else list(representative_docs)
            ),
        }
    )
    return _checked(frame, schemas.TOPICS)


def themes(
    ids: Sequence[int],
    *,
    labels=None,
    terms=None,
    sizes=1,
    topics=None,
    areas=None,
    area_labels=None,
) -> pd.DataFrame:
    """The themes table (label), one row per theme id in the order given. Defaults: labels
    `theme <id>` (Unassigned for -1), no terms, each theme the topic of its own id, no areas
    (-1, "")."""
    n = len(ids)
    frame = pd.DataFrame(
        {
            "theme": np.asarray(ids, dtype=np.int32),
            "label": [_label(h, "theme") for h in ids] if labels is None else list(labels),
            "terms": [[] for _ in ids] if terms is None else [list(t) for t in terms],
            "size": np.asarray(_column(sizes, n), dtype=np.int32),
            "topics": [[h] for h in ids] if topics is None else [list(t) for t in topics],
            "area": np.asarray(_column(-1 if areas is None else areas, n), dtype=np.int32),
            "area_label": [""] * n if area_labels is None else list(area_labels),
        }
    )
    return _checked(frame, schemas.THEMES)


def themes_of(topics: pd.DataFrame, labels: dict[int, str] | None = None, terms=None):
    """The themes table that `topics` groups its topics into: each theme's size is its topics'
    papers, its topics largest first, unassigned last; `labels` by theme id (default
    `theme <id>`), `terms` by theme id (default none)."""
    ids = sorted(set(topics["theme"].tolist()), key=lambda h: (h == UNASSIGNED, h))
    members = [
        topics[topics["theme"] == h].sort_values("size", ascending=False, kind="stable")
        for h in ids
    ]
    labels = labels or {}
    return themes(
        ids,
        labels=[labels.get(h, _label(h, "theme")) for h in ids],
        terms=[(terms or {}).get(h, []) for h in ids],
        sizes=[int(m["size"].sum()) for m in members],
        topics=[m["topic"].tolist() for m in members],
    )


def _label(group: int, kind: str) -> str:
    return UNASSIGNED_LABEL if group == UNASSIGNED else f"{kind} {group}"


def embeddings(
    doc_ids: Sequence[str], width: int = 8, seed: int = 0
) -> tuple[list[str], np.ndarray]:
    """The embeddings table (embed) as tables.read_embeddings returns it: (doc_ids, unit
    float32 rows), seeded."""
    vectors = np.random.default_rng(seed).normal(size=(len(doc_ids), width)).astype(np.float32)
    return list(doc_ids), vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def registry(rows: Sequence[dict], fit_id: str = "fit-a") -> pd.DataFrame:
    """The topic registry (cluster, model/registry.parquet): one row per dict, which names at
    least `topic`; the rest default to an active topic made in the fit `fit_id`, of one paper,
    labelled `topic <n>`, no parents, successors or centre."""
    defaults = {
        "status": "active",
        "made": "fit",
        "made_in": fit_id,
        "change": "fit",
        "changed_in": fit_id,
        "parents": [],
        "successors": [],
        "size": 1,
        "past_labels": [],
        "theme": UNASSIGNED,
        "centre": [],
    }
    filled = [{**defaults, "label": f"topic {r['topic']}", **r} for r in rows]
    frame = pd.DataFrame(filled, columns=schemas.TOPIC_REGISTRY.columns)
    frame = frame.astype({"topic": np.int32, "size": np.int32, "theme": np.int32})
    return _checked(frame, schemas.TOPIC_REGISTRY)


def snapshots(kind: str, papers: dict[int, int], fit_id: str = "fit-a") -> pd.DataFrame:
    """One snapshot of the topics' papers (cluster, model/snapshots.parquet): topic -> papers."""
    frame = pd.DataFrame(
        {
            "snapshot": kind,
            "fit_id": fit_id,
            "topic": np.asarray(list(papers), dtype=np.int32),
            "papers": np.asarray(list(papers.values()), dtype=np.int32),
        }
    )
    return _checked(frame, schemas.TOPIC_SNAPSHOTS)

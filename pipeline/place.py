"""`topicmap place FILE [--model DIR] [--out PATH]`: the papers of any input file placed into an
existing build's topic model, as a table, without touching the build.

The file is read and cleaned as ingest reads inputs, embedded as the embed stage embeds (with
its cache), and placed as the cluster stage places papers added to the saved model; the labels
come from the build the model belongs to (topics.parquet and themes.parquet beside model/).
Writes doc_id, title, topic, topic_label, theme, theme_label, similarity, x, y (CSV, or
Parquet for a .parquet path); records not kept are listed in the log, as the ledger would
hold them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import encoder as encoders
from pipeline import schemas, tables
from pipeline.config import Config
from pipeline.errors import PipelineError
from pipeline.labels import with_labels
from pipeline.stages.cluster import model as models
from pipeline.stages.cluster.place import place
from pipeline.stages.embed import make_embeddings
from pipeline.stages.ingest import make_documents, read_file
from pipeline.text import embedding_texts

log = logging.getLogger("pipeline.place")

COLUMNS = [
    "doc_id",
    "title",
    "topic",
    "topic_label",
    "theme",
    "theme_label",
    "similarity",
    "x",
    "y",
]


def read_papers(path: Path, config: Config) -> pd.DataFrame:
    """The file's papers as documents (records not kept are logged, one line each)."""
    if not path.is_file():
        raise PipelineError(f"{path}: input file not found")
    records, unreadable = read_file(path, config.ingest)
    documents, rejected = make_documents(records, config.ingest)
    for row in [*unreadable, *rejected.to_dict("records")]:
        log.info("not placed: %s: %s", row["source"], row["reason"])
    if documents.empty:
        raise PipelineError(f"{path}: no usable abstracts to place")
    return documents


def build_labels(model_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The labels of the build the model belongs to (its topics and themes), if beside it."""
    folder = model_dir.parent
    if not (folder / "topics.parquet").exists():
        return None
    topics = tables.read_table(folder / "topics.parquet", schemas.TOPICS)
    return topics, tables.read_table(folder / "themes.parquet", schemas.THEMES)


@dataclass(frozen=True)
class SavedModel:
    """A build's saved topic model, checked against the config, with the build's labels."""

    model: models.TopicModel
    folder: Path
    labels: tuple[pd.DataFrame, pd.DataFrame] | None


def load_model(model_dir: Path, config: Config) -> SavedModel:
    """The model in `model_dir`, refused (one line) when fitted on another encoder, other
    package versions or other cluster settings than `config`'s."""
    model = models.load(model_dir)
    models.check_compatible(model, model_dir, encoders.encoder_identity(config.embed))
    models.check_settings(model, model_dir, config.cluster)
    return SavedModel(model, model_dir, build_labels(model_dir))


def placed_table(documents: pd.DataFrame, placement, labels) -> pd.DataFrame:
    table = pd.DataFrame(
        {
            "doc_id": documents["doc_id"],
            "title": documents["title"],
            "topic": placement.topics,
            "similarity": placement.similarity,
            "x": placement.coords[:, 0],
            "y": placement.coords[:, 1],
        }
    )
    if labels is None:
        table["topic_label"], table["theme"], table["theme_label"] = None, None, None
        return table[COLUMNS]
    return with_labels(table, *labels)[COLUMNS]


def place_documents(
    documents: pd.DataFrame, saved: SavedModel, embed: Callable[[list[str]], np.ndarray]
) -> tuple[pd.DataFrame, np.ndarray]:
    """The one core of `topicmap place` and `topicmap serve`'s /api/place: `documents` (as
    ingest makes them) embedded by `embed` (texts -> unit vectors) from the text the build
    embeds, and placed as the cluster stage places a paper added to the model; (the placed
    table, the vectors)."""
    vectors = embed(embedding_texts(documents))
    return placed_table(documents, place(saved.model, vectors), saved.labels), vectors


def cached_embedder(config: Config) -> Callable[[list[str]], np.ndarray]:
    """Texts -> vectors through the embed stage's cache (the model loaded only if needed)."""
    cache_dir = Path(config.embed.cache_dir) if config.embed.cache_dir else None
    precision = encoders.resolve_precision(config.embed)

    def embed(texts: list[str]) -> np.ndarray:
        factory = lambda: encoders.load_encoder(config.embed)  # noqa: E731
        return make_embeddings(texts, factory, config.embed, precision, cache_dir)[0]

    return embed


def place_file(path: Path, model_dir: Path, config: Config) -> pd.DataFrame:
    """Pure of the build: the table of the file's papers placed into the model."""
    saved = load_model(model_dir, config)
    documents = read_papers(path, config)
    return place_documents(documents, saved, cached_embedder(config))[0]


def run(path: Path, config: Config, model_dir: Path | None, out: Path | None) -> Path:
    """Write the table to `out` (default: <file's stem>.topics.csv in the working folder)."""
    model_dir = model_dir or Path(config.output_dir) / "model"
    out = out or Path(f"{path.stem}.topics.csv")
    table = place_file(path, model_dir, config)
    if out.suffix.lower() in {".parquet", ".pq"}:
        tables.atomic_write(out, lambda tmp: table.to_parquet(tmp, index=False))
    else:
        tables.write_text(out, table.to_csv(index=False))
    placed = int((table["topic"] >= 0).sum())
    log.info("%d papers placed into %s (%d in a topic): %s", len(table), model_dir, placed, out)
    return out

"""What `topicmap serve` loads once at start from a finished build: its papers (titles, topics,
labels, map positions) beside their unit embeddings, the saved topic model with its labels, and
the encoder, warmed by one embedding. Nothing here writes to the output folder or the
embeddings cache: the server embeds in memory only.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import encoder as encoders
from pipeline import schemas, tables
from pipeline.commands import FILES
from pipeline.config import Config, parse_config
from pipeline.errors import PipelineError
from pipeline.labels import with_labels
from pipeline.neighbours import unit_rows
from pipeline.place import SavedModel, load_model

log = logging.getLogger("pipeline.serve")

# what a finished build holds that the server reads (the pages are the render stage's)
NEEDED = (
    "documents",
    "embeddings",
    "clusters",
    "topics",
    "themes",
    "model",
)
PAGES = ("map.html", "index.html")
PAPER_COLUMNS = ["doc_id", "title", "venue", "year", "topic", "topic_label", "theme"]
PAPER_COLUMNS += ["theme_label", "x", "y"]


def check_finished(folder: Path) -> None:
    """Refuse, in one line, a folder that is not a finished build."""
    if not folder.is_dir():
        raise PipelineError(f"{folder}: no such output folder")
    missing = [FILES[name] for name in NEEDED if not (folder / FILES[name]).is_file()]
    missing += [page for page in PAGES if not (folder / page).is_file()]
    missing += [] if (folder / "model" / "fit.json").is_file() else ["model/fit.json"]
    if missing:
        raise PipelineError(
            f"{folder}: not a finished build (missing {', '.join(missing)}): run `make all` first"
        )


def config_of_build(folder: Path) -> Config:
    """The settings a build was made with, from its parameter stamps (.params/): its ingest,
    embed and cluster sections, the embedding precision the build resolved on its machine."""
    sections: dict = {"inputs": ["(served build)"], "output_dir": str(folder)}
    for name in ("ingest", "embed", "cluster"):
        path = folder / ".params" / f"{name}.json"
        if not path.is_file():
            raise PipelineError(
                f"{folder}: not a finished build of make (missing .params/{name}.json): "
                "pass its config with --config"
            )
        stamp = tables.read_json(path, "parameter stamp")
        sections[name] = stamp.get(name)
        precision = stamp.get("machine", {}).get("embed_precision")
        if name == "embed" and isinstance(sections[name], dict) and precision:
            sections[name] = {**sections[name], "precision": precision}
    return parse_config(sections, str(folder / ".params"))


def read_papers(
    folder: Path, labels: tuple[pd.DataFrame, pd.DataFrame]
) -> tuple[pd.DataFrame, np.ndarray]:
    """(one row per paper: PAPER_COLUMNS, its unit embeddings in the same order); `labels`: the
    build's topics and themes, as the saved model's loading read them."""
    documents = tables.read_table(folder / FILES["documents"], schemas.DOCUMENTS)
    clusters = tables.read_table(folder / FILES["clusters"], schemas.CLUSTERS)
    topics, themes = labels
    doc_ids, vectors = tables.read_embeddings(folder / FILES["embeddings"])
    papers = with_labels(tables.join_papers(documents, clusters), topics, themes)
    papers = papers.set_index("doc_id").reindex(doc_ids)
    if papers["topic"].isna().any():
        raise PipelineError(f"{folder}: embeddings do not match clusters: rebuild with make all")
    papers = papers.reset_index()[PAPER_COLUMNS]
    return papers, unit_rows(vectors)


class ModelUnavailable(PipelineError):
    """The model could not be loaded: the server answers on, but cannot embed."""


class QueryEncoder:
    """The build's encoder, loaded once (`load`), embedding texts in memory (no cache written)
    with the build's precision; one call at a time (the server's threads share one model). A
    call made while the model loads waits for it."""

    def __init__(self, config: Config):
        self.embed_config = config.embed
        self.config = config.embed.model_copy(update={"progress_bar": False})
        self.precision = encoders.resolve_precision(config.embed)
        self.model = None
        self.failure = ""
        self.lock = threading.Lock()
        self.ready = threading.Event()

    def load(self) -> None:
        """Load the model and embed one text (the first call pays for lazy set-up, not the
        first query); a failure is kept as one line for the requests that need the model."""
        try:
            model = encoders.load_encoder(self.embed_config)
            with encoders.precision_context(self.precision):
                encoders.embed_texts(["warming the model up"], model, self.config)
            self.model = model
        except Exception as exc:  # any failure to load becomes the one line requests answer
            self.failure = f"the embedding model could not be loaded ({type(exc).__name__}: {exc})"
            log.error("%s", " ".join(self.failure.split()))
        finally:
            self.ready.set()

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.ready.wait()
        if self.model is None:
            raise ModelUnavailable(" ".join(self.failure.split()))
        with self.lock, encoders.precision_context(self.precision):
            return encoders.embed_texts(texts, self.model, self.config)


@dataclass(frozen=True)
class ServedBuild:
    """A finished build as the server holds it."""

    folder: Path
    config: Config
    papers: pd.DataFrame
    vectors: np.ndarray
    saved: SavedModel
    embed: QueryEncoder


def load_build(folder: Path, config: Config | None = None, background: bool = False) -> ServedBuild:
    """Load the build in `folder` (its own settings from its stamps unless `config` is given);
    the model too, or, `background`, in a thread of its own while the pages are already served
    (the API's requests wait for it)."""
    started = time.perf_counter()
    folder = Path(folder).resolve()
    check_finished(folder)
    config = config or config_of_build(folder)
    saved = load_model(folder / "model", config)
    papers, vectors = read_papers(folder, saved.labels)
    embed = QueryEncoder(config)

    def load() -> None:
        embed.load()
        seconds = time.perf_counter() - started
        what = f"{folder}: {len(papers)} papers, {embed.precision} precision"
        log.info("%s, the model loaded in %.1f s", what, seconds)

    if background:
        threading.Thread(target=load, name="model loading", daemon=True).start()
    else:
        load()
        if embed.model is None and embed.failure:
            raise ModelUnavailable(embed.failure)
    return ServedBuild(folder, config, papers, vectors, saved, embed)

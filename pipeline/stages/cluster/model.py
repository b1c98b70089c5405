"""The saved topic model (`<output_dir>/model/`): what places a new paper as the build placed
its own, without refitting.

    model/fit.json          the cluster settings and package versions it was fitted with, the
                            encoder whose vectors it holds, when, on how many papers
    model/papers.parquet    the fitted papers: doc_id, topic, x, y, weight (in its topic's centre)
    model/embeddings.parquet  their embeddings
    model/registry.parquet  every topic it ever had, by a number never reused (registry.py)

fit.json records each file's sha256: a folder edited by hand is refused.

Topic centres and the neighbours a new paper is placed among are derived from these. No pickle:
the model is plain tables and JSON, readable by any Parquet reader.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import schemas, tables
from pipeline.centroids import weighted_centroids
from pipeline.config import ClusterConfig
from pipeline.errors import PipelineError
from pipeline.stages.cluster import registry as registries

FORMAT = 2  # 2: the topic registry, and the files' digests in fit.json
FILES = ("papers.parquet", "embeddings.parquet", "registry.parquet")
# The packages whose versions decide what a fit gives: another version, another model.
PACKAGES = ("topicmap-pipeline", "umap-learn", "hdbscan", "bertopic", "scikit-learn", "numpy")
# Settings that decide when to refit, not what a fit gives: changing them keeps the model.
POLICY_KEYS = ("refit_share", "refit_unassigned_share")
REFIT = "run `make refit` (or `topicmap stage cluster --refit`) to fit a new one"


def package_versions() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def fit_settings(config: ClusterConfig) -> dict:
    """The cluster settings a fit depends on (the refit policy left out)."""
    return {k: v for k, v in config.model_dump().items() if k not in POLICY_KEYS}


@dataclass(frozen=True)
class TopicModel:
    """A fitted topic model: its papers' embeddings, topics, map positions and weights in their
    topics' centres, and where it came from."""

    settings: dict
    encoder: str
    versions: dict[str, str]
    fitted_at: str
    papers_at_fit: int
    doc_ids: list[str]
    topics: np.ndarray
    coords: np.ndarray
    weights: np.ndarray
    vectors: np.ndarray
    registry: pd.DataFrame | None = None  # None until set by with_registry

    @functools.cached_property
    def centroids(self) -> tuple[np.ndarray, np.ndarray]:
        """(topic ids, each topic's centre: the unit weighted mean embedding of its fitted
        papers). A paper is placed in the topic whose centre is most similar."""
        return weighted_centroids(self.vectors, self.topics, self.weights)

    @functools.cached_property
    def fit_id(self) -> str:
        """A fingerprint of the fit: its settings, encoder, papers and their topics."""
        digest = hashlib.sha256(
            json.dumps([self.settings, self.encoder, self.doc_ids], sort_keys=True).encode()
        )
        digest.update(np.ascontiguousarray(self.topics, dtype=np.int32).tobytes())
        return digest.hexdigest()[:16]

    @property
    def outlier_threshold(self) -> float:
        return float(self.settings["outlier_threshold"])

    def summary(self) -> dict:
        """What the pages and logs say about the fit."""
        return {
            "fit_id": self.fit_id,
            "fitted_at": self.fitted_at,
            "papers_at_fit": self.papers_at_fit,
            "fitted": len(self.doc_ids),
        }


def new_model(
    config: ClusterConfig,
    encoder: str,
    papers_at_fit: int,
    fitted: pd.DataFrame,
    vectors: np.ndarray,
) -> TopicModel:
    """A model of `fitted` (doc_id, topic, x, y, weight) and their `vectors`, fitted now."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return TopicModel(
        settings=fit_settings(config),
        encoder=encoder,
        versions=package_versions(),
        fitted_at=now.isoformat().replace("+00:00", "Z"),
        papers_at_fit=papers_at_fit,
        doc_ids=fitted["doc_id"].tolist(),
        topics=fitted["topic"].to_numpy(np.int32),
        coords=fitted[["x", "y"]].to_numpy(np.float32),
        weights=fitted["weight"].to_numpy(np.float32),
        vectors=np.asarray(vectors, dtype=np.float32),
    )


def with_registry(model: TopicModel, registry: pd.DataFrame) -> TopicModel:
    return dataclasses.replace(model, registry=registry)


def save(model: TopicModel, folder: Path) -> None:
    """Write the model into `folder`, replacing what was there only once it is complete."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        papers = pd.DataFrame(
            {
                "doc_id": model.doc_ids,
                "topic": model.topics,
                "x": model.coords[:, 0],
                "y": model.coords[:, 1],
                "weight": model.weights,
            }
        )
        tables.write_table(papers, work / "papers.parquet", schemas.MODEL_PAPERS)
        tables.write_embeddings(model.doc_ids, model.vectors, work / "embeddings.parquet")
        registry = registries.of(model)
        tables.write_table(
            registry,
            work / "registry.parquet",
            schemas.TOPIC_REGISTRY,
            notes=registries.notes(model),
        )
        manifest = {
            "format": FORMAT,
            "fit_id": model.fit_id,
            "fitted_at": model.fitted_at,
            "papers_at_fit": model.papers_at_fit,
            "encoder": model.encoder,
            "versions": model.versions,
            "cluster": model.settings,
            "digests": {name: tables.file_digest(work / name) for name in FILES},
        }
        tables.write_json(manifest, work / "fit.json")  # last: a model without it is partial
        old = folder.with_name(f".{folder.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        if folder.exists():
            os.replace(folder, old)
        os.replace(work, folder)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def load(folder: Path) -> TopicModel:
    """Read a saved model; a missing, partial or unreadable one is a one-line error."""
    folder = Path(folder)
    manifest_path = folder / "fit.json"
    for path in (manifest_path, *(folder / name for name in FILES)):
        if not path.exists():
            raise PipelineError(f"{path}: missing, the model in {folder} is partial: {REFIT}")
    manifest = tables.read_json(manifest_path, "model manifest")
    if manifest.get("format") != FORMAT or not isinstance(manifest.get("cluster"), dict):
        raise PipelineError(f"{manifest_path}: not a topic model of this pipeline: {REFIT}")
    try:
        papers = tables.read_table(folder / "papers.parquet", schemas.MODEL_PAPERS)
        doc_ids, vectors = tables.read_embeddings(folder / "embeddings.parquet", documents=papers)
        registry = tables.read_table(folder / "registry.parquet", schemas.TOPIC_REGISTRY)
        registry_notes = tables.read_notes(folder / "registry.parquet", "topic registry")
    except PipelineError as exc:
        raise PipelineError(f"{exc}: {REFIT}") from None
    model = _from_manifest(manifest, manifest_path, papers, doc_ids, vectors)
    registries.check(registry, registry_notes, model, folder / "registry.parquet")
    _check_digests(manifest, folder)
    return with_registry(model, registry)


def _check_digests(manifest: dict, folder: Path) -> None:
    """Refuse a model folder whose files are not those its fit.json was written with."""
    digests = manifest.get("digests")
    for name in FILES:
        if not isinstance(digests, dict) or digests.get(name) != tables.file_digest(folder / name):
            raise PipelineError(
                f"{folder / name}: changed since the model was saved (edited by hand?): {REFIT}"
            )


def _from_manifest(manifest, manifest_path, papers, doc_ids, vectors) -> TopicModel:
    try:
        return TopicModel(
            settings=manifest["cluster"],
            encoder=str(manifest["encoder"]),
            versions=dict(manifest["versions"]),
            fitted_at=str(manifest["fitted_at"]),
            papers_at_fit=int(manifest["papers_at_fit"]),
            doc_ids=doc_ids,
            topics=papers["topic"].to_numpy(np.int32),
            coords=papers[["x", "y"]].to_numpy(np.float32),
            weights=papers["weight"].to_numpy(np.float32),
            vectors=vectors,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise PipelineError(f"{manifest_path}: incomplete manifest ({exc}): {REFIT}") from None


def check_compatible(model: TopicModel, folder: Path, encoder: str) -> None:
    """Refuse a model from other package versions or fitted on another encoder's vectors."""
    where = Path(folder) / "fit.json"
    current = package_versions()
    changed = [
        f"{k} {v} -> {current.get(k)}" for k, v in model.versions.items() if current.get(k) != v
    ]
    if changed:
        raise PipelineError(
            f"{where}: fitted with other package versions ({', '.join(changed)}): {REFIT}"
        )
    if model.encoder != encoder:
        raise PipelineError(
            f"{where}: fitted on vectors of {model.encoder}, the papers' are of {encoder}: {REFIT}"
        )


def check_settings(model: TopicModel, folder: Path, config: ClusterConfig) -> None:
    """Refuse a model fitted with other cluster settings than `config`'s."""
    current = fit_settings(config)
    changed = sorted(k for k in current if model.settings.get(k) != current[k])
    if changed:
        keys = ", ".join(f"cluster.{k}" for k in changed)
        raise PipelineError(
            f"{Path(folder) / 'fit.json'}: fitted with other settings ({keys}): {REFIT}"
        )

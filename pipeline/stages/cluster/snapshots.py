"""The topics' papers at two earlier moments, `model/snapshots.parquet`, from which the report
says what changed: each topic's papers (and the unassigned, -1) when the saved model was fitted
(`fit`, written by the build that fits it and kept while papers are added to it) and in the
previous build whose topics differed from this one's (`build`: a build that changes nothing
keeps the one before). A model saved before snapshots were kept takes its fit's from the
papers the fit placed in the clusters table it left. The file is rewritten only when its rows
change, and written again after the model folder is saved anew (models.save replaces the
folder)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from pipeline import schemas, tables
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.cluster")

FILE = "snapshots.parquet"  # in the model folder
KINDS = ("fit", "build")


def topic_papers(clusters: pd.DataFrame) -> pd.Series:
    """topic -> its papers (-1: unassigned), by topic."""
    return clusters["topic"].astype(int).value_counts().sort_index()


def rows(kind: str, fit_id: str, clusters: pd.DataFrame) -> pd.DataFrame:
    """The snapshot `kind` of a clusters table placed by the model `fit_id`."""
    papers = topic_papers(clusters)
    return pd.DataFrame(
        {
            "snapshot": kind,
            "fit_id": fit_id,
            "topic": papers.index.astype("int32"),
            "papers": papers.to_numpy().astype("int32"),
        }
    )


def _of(history: pd.DataFrame, kind: str) -> pd.DataFrame:
    return history[history["snapshot"] == kind]


def updated(
    history: pd.DataFrame | None,
    previous: pd.DataFrame | None,
    previous_fit: str,
    clusters: pd.DataFrame,
    fit_id: str,
    refitted: bool,
) -> pd.DataFrame:
    """Pure core: the snapshots after a build whose clusters table is `clusters` (placed by the
    model `fit_id`, fitted by this build when `refitted`); `previous`: the clusters table the
    build replaced (placed by `previous_fit`), or None; `history`: the snapshots before."""
    history = empty() if history is None else history
    # the fit's: kept while papers are added (new topics among them change the model's fit_id)
    fit = rows("fit", fit_id, clusters) if refitted else _of(history, "fit")
    if fit.empty and previous is not None:  # a model saved before snapshots were kept
        fit = rows("fit", previous_fit, fitted_part(previous))
    build = _of(history, "build")
    if previous is not None and not topic_papers(previous).equals(topic_papers(clusters)):
        build = rows("build", previous_fit, previous)
    return pd.concat([fit, build], ignore_index=True)[schemas.TOPIC_SNAPSHOTS.columns]


def fitted_part(clusters: pd.DataFrame) -> pd.DataFrame:
    """The papers the fit itself placed (not added later): what a model saved without snapshots
    tells of its fit, since a paper placed by the fit keeps its topic while papers are added."""
    return clusters[clusters["placed"] != "added"]


def empty() -> pd.DataFrame:
    return rows("fit", "", pd.DataFrame({"topic": pd.Series(dtype="int32")}))


def read(model_dir: Path) -> pd.DataFrame | None:
    """The snapshots beside the model, or None (none kept yet, or unreadable: the log says so)."""
    path = Path(model_dir) / FILE
    if not path.exists():
        return None
    try:
        return tables.read_table(path, schemas.TOPIC_SNAPSHOTS)
    except PipelineError as exc:
        log.info("the earlier topic snapshots are not readable, kept afresh: %s", exc)
        return None


def keep(model_dir: Path, snapshots: pd.DataFrame) -> None:
    """Write the snapshots beside the model unless the file holds them already."""
    before = read(model_dir)
    same = before is not None and _sorted(before).equals(_sorted(snapshots))
    if not same:
        tables.write_table(snapshots, Path(model_dir) / FILE, schemas.TOPIC_SNAPSHOTS)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.astype({"snapshot": str, "fit_id": str, "topic": int, "papers": int})
    return out.sort_values(["snapshot", "topic"], ignore_index=True)

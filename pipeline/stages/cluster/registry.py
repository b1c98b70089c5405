"""The topic registry (`model/registry.parquet`): every topic the saved model ever had, by a
number never reused, with its status (active, split, merged, retired), how and in which fit it
was made, the topics it came from and where its papers went, its centre, and its label and theme
as the label stage last wrote them (with the labels it had before). It is saved with the model
and belongs to it: its notes name the model's fit_id and the registry's format.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import schemas
from pipeline.errors import PipelineError
from pipeline.stages.cluster.identity import Transitions

FORMAT = "1"
REFIT = "run `make refit` (or `topicmap stage cluster --refit`) to fit a new one"


def _model_topics(model) -> dict[int, tuple[int, list[float]]]:
    """topic -> (its papers in the model, its unit centre)."""
    ids, centres = model.centroids
    sizes = pd.Series(model.topics[model.topics >= 0]).value_counts()
    return {
        int(t): (int(sizes.get(t, 0)), c.astype(np.float32).tolist())
        for t, c in zip(ids, centres, strict=True)
    }


def _row(topic: int, made: str, fit_id: str, parents, size: int, centre) -> dict:
    return {
        "topic": int(topic),
        "status": "active",
        "made": made,
        "made_in": fit_id,
        "change": made,
        "changed_in": fit_id,
        "parents": [int(p) for p in parents],
        "successors": [],
        "size": int(size),
        "label": "",
        "past_labels": [],
        "theme": schemas.UNASSIGNED,
        "centre": centre,
    }


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=schemas.TOPIC_REGISTRY.columns)
    return frame.sort_values("topic", ignore_index=True)


def first(model) -> pd.DataFrame:
    """The registry of a first fit: each of its topics, made in it."""
    return _frame(
        [_row(t, "fit", model.fit_id, [], s, c) for t, (s, c) in _model_topics(model).items()]
    )


def of(model) -> pd.DataFrame:
    """The model's registry (that of its first fit when it has none yet)."""
    return model.registry if model.registry is not None else first(model)


def next_number(registry: pd.DataFrame | None) -> int:
    """The number the next new topic gets: above every number ever used."""
    if registry is None or not len(registry):
        return 0
    return int(registry["topic"].max()) + 1


def refitted(registry: pd.DataFrame, transitions: Transitions, model) -> pd.DataFrame:
    """The registry after a refit whose clusters were numbered by `transitions` (the model's
    topics already carry those numbers)."""
    now = _model_topics(model)
    rows = {int(r["topic"]): dict(r) for r in registry.to_dict("records")}
    for old, kind in transitions.kind.items():
        row = rows.get(old)
        if row is None:
            continue
        if old not in now:  # its number went to no cluster
            row.update(status="retired" if kind == "survived" else kind, centre=[])
            row.update(change=row["status"], changed_in=model.fit_id)
        row["successors"] = transitions.successors.get(old, [])
    for cluster, number in transitions.numbers.items():
        if number not in now:
            continue
        size, centre = now[number]
        made = transitions.made.get(cluster, "new")
        parents = transitions.parents.get(cluster, [])
        if number in rows:
            rows[number].update(status="active", size=size, centre=centre, parents=parents)
            rows[number].update(change=made, changed_in=model.fit_id)
            if made == "survived" and transitions.kind.get(number) == "survived":
                rows[number]["successors"] = []
        else:
            rows[number] = _row(number, made, model.fit_id, parents, size, centre)
    return _frame(list(rows.values()))


def emerged(registry: pd.DataFrame, numbers: list[int], model) -> pd.DataFrame:
    """The registry with the topics `numbers` made among new papers (no refit), and the model's
    other topics as they were."""
    now = _model_topics(model)
    rows = registry.to_dict("records")
    for number in numbers:
        size, centre = now[number]
        rows.append(_row(number, "emerged", model.fit_id, [], size, centre))
    return _frame(rows)


def with_labels(registry: pd.DataFrame, topics: pd.DataFrame | None) -> pd.DataFrame:
    """The registry with each topic's label and theme from the label stage's last topics table
    (a label that changed joins its past labels)."""
    if topics is None:
        return registry
    registry = registry.copy()
    label_of = dict(zip(topics["topic"].astype(int), topics["label"], strict=True))
    theme_of = dict(zip(topics["topic"].astype(int), topics["theme"].astype(int), strict=True))
    for i, topic in enumerate(registry["topic"].astype(int)):
        label = label_of.get(topic)
        if label is None:
            continue
        before = registry.at[i, "label"]
        if before and before != label:
            registry.at[i, "past_labels"] = [*registry.at[i, "past_labels"], before]
        registry.at[i, "label"] = label
        registry.at[i, "theme"] = theme_of[topic]
    return registry


def check(registry: pd.DataFrame, notes: dict, model, path: Path) -> None:
    """Refuse a registry that is not this model's: another fit's, another format's, or one
    whose active topics are not the model's."""
    if notes.get("format") != FORMAT:
        raise PipelineError(f"{path}: a topic registry of another version of the project: {REFIT}")
    if notes.get("fit_id") != model.fit_id:
        raise PipelineError(f"{path}: the topic registry of another model: {REFIT}")
    active = set(registry.loc[registry["status"] == "active", "topic"].astype(int))
    if registry["topic"].duplicated().any() or active != set(_model_topics(model)):
        raise PipelineError(f"{path}: the topic registry does not match the model: {REFIT}")
    bad = set(registry["status"]) - set(schemas.TOPIC_STATUS)
    if bad or set(registry["made"]) - set(schemas.TOPIC_MADE):
        raise PipelineError(f"{path}: unknown topic status or origin in the registry: {REFIT}")


def notes(model) -> dict[str, str]:
    return {"format": FORMAT, "fit_id": model.fit_id}

"""Topics that live across builds, through Make on the real stack: computer-graphics papers added
to the built bundled corpus become a topic of their own without a refit (every earlier paper
keeps its topic, label and position), topic_info.csv says which topic is new, and a registry that
is not the model's stops the build with one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipeline import schemas, tables
from tests.support.paths import ROOT
from tests.support.runs import run_main, run_make, write_config

pytestmark = pytest.mark.slow

FOREIGN = ROOT.parent / "shared" / "foreign" / "siggraphasia2023.parquet"
N_FOREIGN = 15  # under cluster.refit_share (20%) of the 91 papers: no refit


@pytest.fixture
def graphics(bundled_build: Path, tmp_path: Path):
    """A copy of the bundled build and a config whose inputs gained 15 SIGGRAPH Asia papers."""
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)  # keeps the modification times Make compares
    extra = tmp_path / "siggraph.parquet"
    pd.read_parquet(FOREIGN).sort_values("id").head(N_FOREIGN).to_parquet(extra)
    config = write_config(tmp_path / "c.yaml", [str(ROOT / "data/raw/*.txt"), str(extra)], out)
    return out, config


def _files(folder: Path) -> dict[Path, bytes]:
    """Every file of an output folder but the stages' timing records (rewritten by any run)."""
    return {
        p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and ".timings" not in p.parts
    }


def _read(folder: Path, name: str, schema) -> pd.DataFrame:
    return tables.read_table(folder / name, schema)


def test_a_new_field_becomes_a_topic_and_nothing_earlier_changes(bundled_build, graphics):
    out, config = graphics
    result = run_make(str(out / "topic_info.csv"), f"CONFIG={config}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "fitting a topic model" not in result.stderr
    assert "new or unassigned papers" in result.stderr  # what was tried is logged
    registry = _read(out, "model/registry.parquet", schemas.TOPIC_REGISTRY)
    born = set(registry.loc[registry["made"] == "emerged", "topic"])
    assert (
        born and min(born) > _read(bundled_build, "topics.parquet", schemas.TOPICS)["topic"].max()
    )
    before = _read(bundled_build, "clusters.parquet", schemas.CLUSTERS)
    after = _read(out, "clusters.parquet", schemas.CLUSTERS)
    documents = _read(out, "documents.parquet", schemas.DOCUMENTS)
    graphics_ids = documents.loc[documents["venue"].str.startswith("SIGGRAPH"), "doc_id"]
    landed = after.set_index("doc_id")["topic"].reindex(graphics_ids).isin(born)
    assert landed.mean() >= 0.5, landed.mean()
    joined = before.merge(after, on="doc_id", suffixes=("", "_after"))
    had = joined["topic"] >= 0
    assert (joined["topic"] == joined["topic_after"])[had].all()
    assert (joined[["x", "y"]].to_numpy() == joined[["x_after", "y_after"]].to_numpy()).all()
    labels_before = _read(bundled_build, "topics.parquet", schemas.TOPICS).set_index("topic")
    labels_after = _read(out, "topics.parquet", schemas.TOPICS).set_index("topic")
    earlier = labels_before.index[labels_before.index >= 0]
    assert (labels_after.loc[earlier, "label"] == labels_before.loc[earlier, "label"]).all()
    info = pd.read_csv(out / "topic_info.csv").set_index("Topic")
    fit_id = tables.read_notes(out / "clusters.parquet")["fit_id"]
    assert (info.loc[sorted(born), "status"] == "active").all()
    assert (info.loc[sorted(born), "fit"] == fit_id).all()
    assert (info.loc[earlier, "fit"] != fit_id).all()


@pytest.mark.parametrize("fault", ["another model", "another version", "edited by hand"])
def test_a_registry_not_the_models_stops_the_build_with_one_line(bundled_build, tmp_path, fault):
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)
    path = out / "model/registry.parquet"
    registry = _read(out, "model/registry.parquet", schemas.TOPIC_REGISTRY)
    notes = tables.read_notes(path)
    if fault == "another model":
        notes["fit_id"] = "0123456789abcdef"
    elif fault == "another version":
        notes["format"] = "0"
    else:
        registry.loc[0, "label"] = "my own label"
    tables.write_table(registry, path, schemas.TOPIC_REGISTRY, notes=notes)
    listing = _files(out)
    result = run_main(
        "cluster",
        f"--config={bundled_build.parent / 'bundled.yaml'}",
        *(f"--{name}={out / name}.parquet" for name in ("documents", "embeddings", "clusters")),
    )
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("error: ") and "Traceback" not in result.stderr
    assert "registry.parquet" in lines[-1] and "make refit" in lines[-1], lines[-1]
    assert _files(out) == listing

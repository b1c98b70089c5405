"""`engine: ray` through the CLI, stage after stage, on a real local Ray instance with the real
model: 2,000 real papers give the same embeddings, topics, coordinates, labels and themes on
both engines. (Each stage's own Ray tests sit beside it: tests/engines/test_chunks.py, the seam;
tests/stages/embed/test_ray_embed.py; the placing and counting tests of cluster and label.)"""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from tests.support.paths import CORPORA, ROOT
from tests.support.runs import run_main, write_config

VENUES = ("iclr", "icml")


@pytest.fixture(autouse=True)
def _workers_import_this_checkout(monkeypatch):
    """Ray's workers are new processes: they import the pipeline of this checkout."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


def _vectors(path: Path) -> np.ndarray:
    return tables.read_embeddings(path)[1]


def _real_slice(folder: Path, per_venue: int = 1000) -> Path:
    """2,000 real papers: the first 1,000 of ICLR 2023 and of ICML 2023 (read from
    ../shared/corpora by path, written to a temporary file)."""
    parts = [pd.read_parquet(CORPORA / f"{v}2023.parquet").head(per_venue) for v in VENUES]
    path = folder / "slice2000.parquet"
    pd.concat(parts, ignore_index=True).to_parquet(path, index=False)
    return path


def _build(config: Path, stages: tuple[str, ...]) -> None:
    for stage in stages:
        result = run_main(stage, "--config", str(config))
        assert result.returncode == 0, f"{stage}: {result.stderr[-2000:]}"


def _digest(frame: pd.DataFrame) -> str:
    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).values).hexdigest()


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.skipif(not CORPORA.exists(), reason="../shared/corpora is not present")
def test_2000_real_papers_same_results_on_ray_and_local_through_the_cli(tmp_path, caplog):
    """ingest, shards (on Ray), embed, cluster (fitted on a 1,000-paper sample on the driver,
    the other 1,000 placed on Ray) and label (the terms counted on Ray) through the CLI: every
    table the same on both engines."""
    inputs = [str(_real_slice(tmp_path))]
    settings = (
        "embed:\n  cache_dir: null\n  progress_bar: false\n"
        "cluster:\n  fit_max_papers: 1000\n  n_epochs: 200\nlabel:\n  representation: ctfidf\n"
    )
    outs, printed = {}, {}
    caplog.set_level(logging.INFO, logger="pipeline")
    for kind in ("local", "ray"):
        outs[kind] = tmp_path / kind
        engine = f"engine:\n  kind: {kind}\n  concurrency: 2\n  shard_papers: 256\n"
        config = write_config(tmp_path / f"{kind}.yaml", inputs, outs[kind], settings + engine)
        shards = ("shards",) if kind == "ray" else ()  # as make all and topicmap build run
        _build(config, ("ingest", *shards, "embed", "cluster", "label"))
        printed[kind] = caplog.text
        caplog.clear()
    assert "counted the terms of 1000 papers in 4 chunks on the ray engine" in printed["ray"]
    assert "placed 1000 papers in 4 chunks on the ray engine" in printed["ray"]
    assert "placed 1000 papers in 4 chunks on the local engine" in printed["local"]
    # the shards command wrote the documents shards the embed stage's actors read
    assert "the documents as 13 shards of at most 256 papers" in printed["ray"]
    assert "ray: embedded 2000 papers in 13 shards on 2 actors" in printed["ray"]
    assert "ray:" not in printed["local"] and "shards" not in printed["local"]
    local_line = re.search(
        r"embedding 2000 papers took ([\d.]+) s once the model was loaded", printed["local"]
    )
    assert float(local_line[1]) > 0
    local, ray = outs["local"], outs["ray"]
    np.testing.assert_array_equal(*[_vectors(o / "embeddings.parquet") for o in (ray, local)])
    clusters = [tables.read_table(o / "clusters.parquet", schemas.CLUSTERS) for o in (local, ray)]
    assert (clusters[0]["placed"] == "assigned").sum() == 1000
    pd.testing.assert_frame_equal(clusters[0], clusters[1])
    topics = [tables.read_table(o / "topics.parquet", schemas.TOPICS) for o in (local, ray)]
    columns = ["topic", "label", "size"]
    assert _digest(topics[0][columns]) == _digest(topics[1][columns])
    for column in ("terms", "term_weights"):
        assert [list(t) for t in topics[0][column]] == [list(t) for t in topics[1][column]]
    themes = [tables.read_table(o / "themes.parquet", schemas.THEMES) for o in (local, ray)]
    pd.testing.assert_frame_equal(themes[0], themes[1])

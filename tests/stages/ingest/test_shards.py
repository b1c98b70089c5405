"""The `shards` command (pipeline/stages/ingest/shards.py), the documents shards' one writer:
the table's rows in shards and their manifest, kept while current, written again when the
table or the cut changed; a folder holding other files is refused."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.cli import make_vars
from pipeline.commands import build_steps
from pipeline.config import EngineConfig, parse_config
from pipeline.document_shards import current, manifest_of
from pipeline.errors import PipelineError
from pipeline.stages.ingest import shards
from tests.support import tables as make
from tests.support.build_folder import write_build
from tests.support.paths import ROOT
from tests.support.runs import run_main, write_config


def test_the_documents_as_shards_kept_while_current_and_cut_again_when_not(tmp_path, caplog):
    papers = make.documents([f"abstract {i}" for i in range(7)])
    documents = write_build(tmp_path, documents=papers)["documents"]
    fingerprint = tables.read_lineage(documents).fingerprint
    target = manifest_of(documents)
    (tmp_path / ".documents.shards.x1.tmp").mkdir()  # what a killed run leaves
    caplog.set_level(logging.INFO, logger="pipeline")
    shards.run(EngineConfig(shard_papers=3), documents, target)
    written = current(target, 7, 3, fingerprint)
    assert [p.name for p in written] == [f"part-0000{i}.parquet" for i in range(3)]
    back = pd.concat([tables.read_table(p, schemas.DOCUMENTS) for p in written])
    assert back["doc_id"].tolist() == papers["doc_id"].tolist()
    assert json.loads(target.read_text(encoding="utf-8"))["documents"] == fingerprint
    assert "the documents as 3 shards of at most 3 papers" in caplog.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["documents.parquet", "documents.shards"]

    before = written[0].stat().st_mtime_ns
    shards.run(EngineConfig(shard_papers=3, concurrency=8), documents, target)  # still current
    assert written[0].stat().st_mtime_ns == before and "are current" in caplog.text
    shards.run(EngineConfig(shard_papers=2), documents, target)
    assert (
        len(current(target, 7, 2, fingerprint)) == 4 and current(target, 7, 3, fingerprint) is None
    )


def test_a_folder_holding_other_files_or_a_wrong_manifest_name_is_refused(tmp_path):
    documents = write_build(tmp_path, documents=make.documents(n=3))["documents"]
    with pytest.raises(PipelineError, match="must be named manifest.json"):
        shards.run(EngineConfig(), documents, tmp_path / "documents.shards" / "list.json")
    folder = manifest_of(documents).parent
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(PipelineError, match="holds files that are not document shards"):
        shards.run(EngineConfig(), documents, manifest_of(documents))
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_the_shards_command_writes_them_where_the_makefile_says(tmp_path):
    out = tmp_path / "out"
    inputs = [str(ROOT / "data/raw/*.txt")]
    config = write_config(tmp_path / "c.yaml", inputs, out, "engine:\n  shard_papers: 20")
    assert run_main("ingest", "--config", str(config)).returncode == 0
    assert not (out / "documents.shards").exists()  # ingest writes none
    result = run_main("shards", "--config", str(config))
    assert result.returncode == 0, result.stderr
    fingerprint = tables.read_lineage(out / "documents.parquet").fingerprint
    assert len(current(out / "documents.shards/manifest.json", 76, 20, fingerprint)) == 4


def test_make_all_and_topicmap_build_run_the_shards_command_on_ray_only():
    local = parse_config({"inputs": ["x.txt"]}, "test")
    ray = parse_config({"inputs": ["x.txt"], "engine": "ray"}, "test")
    assert "shards" not in build_steps(local)
    assert build_steps(ray) == ("ingest", "shards", *build_steps(local)[1:])
    assert "ENGINE := ray" in make_vars(ray).splitlines()

"""`topicmap place`'s own parts, without a model: reading the file, the labels beside the model,
the table without them, and the output format by the path's suffix (the whole command on the
bundled build: tests/end_to_end/test_saved_model.py)."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from pipeline import place
from pipeline.config import parse_config
from pipeline.errors import PipelineError
from tests.support import tables as make
from tests.support.ingest_samples import A1

CONFIG = parse_config({"inputs": ["x.json"]})


def _file(tmp_path, records):
    path = tmp_path / "new.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_read_papers_logs_each_record_it_leaves_out(tmp_path, caplog):
    path = _file(tmp_path, [{"abstract": A1, "venue": "ICML 2025"}, {"abstract": "too short"}])
    with caplog.at_level(logging.INFO, logger="pipeline.place"):
        documents = place.read_papers(path, CONFIG)
    assert documents["abstract"].tolist() == [A1]
    assert "not placed: " in caplog.text and "new.json:record 2" in caplog.text


def test_read_papers_refuses_a_missing_file_and_one_without_usable_abstracts(tmp_path):
    with pytest.raises(PipelineError, match=r"missing\.json: input file not found"):
        place.read_papers(tmp_path / "missing.json", CONFIG)
    path = _file(tmp_path, [{"abstract": "too short"}])
    with pytest.raises(PipelineError, match=r"new\.json: no usable abstracts to place"):
        place.read_papers(path, CONFIG)


def _placed(tmp_path, labels):
    documents = make.documents(doc_ids=["a", "b"], titles=["T", None])
    placement = SimpleNamespace(
        topics=np.array([0, -1]), similarity=np.array([0.9, 0.1]), coords=np.ones((2, 2))
    )
    return place.placed_table(documents, placement, labels)


def test_without_the_builds_labels_the_table_has_empty_label_columns(tmp_path):
    assert place.build_labels(tmp_path / "model") is None  # no topics.parquet beside it
    table = _placed(tmp_path, None)
    assert table.columns.tolist() == place.COLUMNS
    assert table["topic"].tolist() == [0, -1] and table["topic_label"].isna().all()
    topics = make.topics([0, -1], labels=["graphs", "Unassigned"])
    themes = make.themes([0, -1], labels=["networks", "Unassigned"])
    labelled = _placed(tmp_path, (topics, themes))
    assert labelled[["topic_label", "theme_label"]].values.tolist() == [
        ["graphs", "networks"],
        ["Unassigned", "Unassigned"],
    ]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_the_table_is_parquet_or_csv_by_the_paths_suffix(tmp_path, monkeypatch, suffix):
    table = _placed(tmp_path, None)
    monkeypatch.setattr(place, "place_file", lambda path, model_dir, config: table)
    out = place.run(tmp_path / "new.json", CONFIG, tmp_path / "model", tmp_path / f"t{suffix}")
    read = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out)
    assert read["doc_id"].tolist() == ["a", "b"] and read.columns.tolist() == place.COLUMNS
    assert (out.read_bytes()[:4] == b"PAR1") == (suffix == ".parquet")

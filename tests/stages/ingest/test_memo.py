"""Ingest's kept repairs (memo.py): a build that adds papers repairs only the new texts (and those
whose repair looks words up in the corpus vocabulary), and gives what a build from nothing gives."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import schemas, tables
from pipeline.config import IngestConfig
from pipeline.stages import ingest
from pipeline.stages.ingest import memo
from pipeline.stages.ingest.hyphens import JOINED

OLD = [
    {"abstract": "A hyper- network bound for graphs, which we study at length here.", "title": "B"},
    {"abstract": "caf\u00c3\u00a9 models: a cheap adapter study over many tasks.", "title": "C"},
    {"abstract": "Plain text about optimal transport between two measures.", "title": None},
    {"abstract": "  Spaces  around a text about kernels and their many uses.  ", "title": "D"},
]
NEW = [  # makes `hypernetwork` a word of the corpus: the first old paper's break is joined now
    {"abstract": "Hypernetwork inference for large models of many graphs.", "title": "E"},
    {"abstract": "Plain text about optimal transport between two measures.", "title": None},
]


def _write(path: Path, rows: list[dict]) -> str:
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return str(path)


def _run(out: Path, inputs: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    ingest.run(IngestConfig(), inputs, out / "documents.parquet", out / "rejected.parquet")
    return (
        tables.read_table(out / "documents.parquet", schemas.DOCUMENTS),
        tables.read_table(out / "rejected.parquet", schemas.REJECTED),
    )


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    return _write(tmp_path / "old.jsonl", OLD), _write(tmp_path / "new.jsonl", NEW)


def _counting_repairs(monkeypatch) -> list[str]:
    repaired: list[str] = []
    real = ingest.repair_text

    def counted(text, vocabulary=None, counts=None):
        repaired.append(text)
        return real(text, vocabulary, counts)

    monkeypatch.setattr(ingest, "repair_text", counted)
    return repaired


def test_adding_papers_repairs_only_new_texts_and_gives_a_cold_builds_tables(
    tmp_path, files, monkeypatch, caplog
):
    old, new = files
    out = tmp_path / "out"
    before, _ = _run(out, [old])
    assert before["abstract"][0].startswith("A hyper- network bound")  # no corpus word for it
    repaired = _counting_repairs(monkeypatch)
    with caplog.at_level(logging.INFO, "pipeline.ingest"):
        docs, ledger = _run(out, [old, new])
    warm_log = [r.getMessage() for r in caplog.records if r.getMessage().startswith("repairs")]
    # the new texts (a duplicate of an old one is known), and the old one whose repair looked a
    # word up in the vocabulary
    assert sorted(repaired) == sorted([NEW[0]["abstract"], NEW[0]["title"], OLD[0]["abstract"]])
    assert ledger["reason"].str.startswith("duplicate abstract").tolist() == [True]
    assert docs["abstract"][0] == "A hypernetwork bound for graphs, which we study at length here."
    caplog.clear()
    with caplog.at_level(logging.INFO, "pipeline.ingest"):
        cold, cold_ledger = _run(tmp_path / "cold", [old, new])
    cold_log = [r.getMessage() for r in caplog.records if r.getMessage().startswith("repairs")]
    pd.testing.assert_frame_equal(docs, cold)
    pd.testing.assert_frame_equal(ledger, cold_ledger)
    assert warm_log == cold_log and "mojibake 1" in warm_log[0] and f"{JOINED} 1" in warm_log[0]


def test_papers_removed_count_the_vocabulary_again(tmp_path, files):
    old, new = files
    out = tmp_path / "out"
    _run(out, [old, new])
    docs, _ = _run(out, [old])  # `hypernetwork` gone from the corpus: the break stays
    cold, _ = _run(tmp_path / "cold", [old])
    pd.testing.assert_frame_equal(docs, cold)
    assert docs["abstract"][0].startswith("A hyper- network bound")


def test_the_same_inputs_leave_the_kept_repairs_unwritten(tmp_path, files, monkeypatch):
    old, _ = files
    out = tmp_path / "out"
    _run(out, [old])
    kept = out / memo.FOLDER / memo.TEXTS
    os.utime(kept, ns=(1, 1))
    repaired = _counting_repairs(monkeypatch)
    _run(out, [old])
    assert kept.stat().st_mtime_ns == 1
    assert repaired == [OLD[0]["abstract"]]  # only the text whose repair reads the vocabulary


@pytest.mark.parametrize("spoil", ["garbage", "other columns", "other code"])
def test_kept_repairs_that_do_not_fit_are_worked_out_again(
    tmp_path, files, monkeypatch, caplog, spoil
):
    old, new = files
    out = tmp_path / "out"
    _run(out, [old])
    if spoil == "garbage":
        (out / memo.FOLDER / memo.TEXTS).write_bytes(b"not parquet")
        expected = "unreadable"
    elif spoil == "other columns":  # a readable file, stamped as current, that is not ours
        kept = out / memo.FOLDER / memo.TEXTS
        stamp = pq.read_table(kept).schema.metadata
        pq.write_table(pa.table({"key": ["x"]}).replace_schema_metadata(stamp), kept)
        expected = "unreadable"
    else:
        monkeypatch.setattr(memo, "repair_version", lambda: "another")
        expected = "the repair code changed"
    with caplog.at_level(logging.INFO, "pipeline.ingest"):
        docs, _ = _run(out, [old, new])
    assert "repairing every text" in caplog.text and expected in caplog.text
    cold, _ = _run(tmp_path / "cold", [old, new])
    pd.testing.assert_frame_equal(docs, cold)


def test_a_text_with_a_lone_surrogate_is_kept_and_repaired(tmp_path):
    raw = tmp_path / "s.jsonl"
    raw.write_text('{"abstract": "Diffusion models reverse a noising process \\ud800 here."}')
    for _ in range(2):  # repaired afresh, then as kept
        docs, _ = _run(tmp_path / "out", [str(raw)])
        assert docs["abstract"].tolist() == ["Diffusion models reverse a noising process here."]

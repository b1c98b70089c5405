"""Ingest stage: records -> documents and the ledger, and `run` over input files."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.config import IngestConfig, parse_config
from pipeline.errors import InputError
from pipeline.stages import ingest
from pipeline.stages.ingest import RawRecord, make_documents
from pipeline.stages.ingest.hyphens import HYPHENATED, JOINED, SUSPENDED
from tests.support.ingest_samples import A1, A2, A3, CFG

# ---------------------------------------------------------------- pure core: make_documents


def _rec(abstract, source="s", **fields) -> RawRecord:
    return RawRecord(source=source, abstract=abstract, **fields)


def test_build_documents_keeps_or_ledgers_every_record():
    records = [
        _rec(A1, "f:1"),
        _rec("  " + A1.upper().replace(" ", "\n  ") + "\t", "f:2"),  # duplicate of f:1
        _rec("too short", "f:3"),
        _rec("   \n ", "f:4"),
        _rec(None, "f:5"),
        _rec(float("nan"), "f:6"),
        _rec(42, "f:7"),
        _rec(A2, "f:8"),
    ]
    docs, rejected = make_documents(records, CFG)
    assert len(docs) + len(rejected) == len(records)
    assert list(docs["source"]) == ["f:1", "f:8"]
    assert list(docs["abstract"]) == [A1, A2]
    reasons = dict(zip(rejected["source"], rejected["reason"], strict=True))
    assert reasons["f:2"].startswith("duplicate abstract (kept f:1)")
    assert reasons["f:3"].startswith("abstract too short (2 words")
    assert reasons["f:4"] == "abstract is empty"
    assert reasons["f:5"] == reasons["f:6"] == "abstract is missing"
    assert reasons["f:7"] == "abstract is not text (int)"
    dup = rejected.set_index("source").loc["f:2", "duplicate_of"]
    assert dup == docs.loc[docs["source"] == "f:1", "doc_id"].item()
    assert rejected.set_index("source")["duplicate_of"].drop("f:2").isna().all()
    assert rejected.set_index("source").loc["f:7", "text"] == "42"


def test_min_abstract_words_is_configurable():
    records = [_rec("one two three", "a"), _rec("one two three four", "b")]
    docs, rejected = make_documents(records, IngestConfig(min_abstract_words=4))
    assert list(docs["source"]) == ["b"]
    assert "ingest.min_abstract_words=4" in rejected["reason"].item()


def test_doc_id_is_stable_across_order_and_calls():
    records = [_rec(A1, "a"), _rec(A2, "b"), _rec(A3, "c")]
    first, _ = make_documents(records, CFG)
    second, _ = make_documents(list(reversed(records)), CFG)
    ids = dict(zip(first["abstract"], first["doc_id"], strict=True))
    assert ids == dict(zip(second["abstract"], second["doc_id"], strict=True))
    assert len(set(ids.values())) == 3
    assert ids[A1] == ingest.doc_id_for(A1) == ingest.doc_id_for(A1.upper())


@pytest.mark.parametrize(
    ("venue", "year", "config_venue", "expected"),
    [
        pytest.param("ICLR 2023", None, None, ("ICLR", 2023), id="venue-string"),
        pytest.param("ICLR 2023", "2024", None, ("ICLR", 2024), id="year-column-wins"),
        pytest.param("ICML", 2022.0, "NeurIPS 2024", ("ICML", 2022), id="record-over-config"),
        pytest.param(None, None, "NeurIPS 2024", ("NeurIPS", 2024), id="config-venue"),
        pytest.param(float("nan"), None, "ICML", ("ICML", None), id="nan-venue"),
        pytest.param(None, None, None, ("Unknown", None), id="unknown"),
        pytest.param("ICLR 2023", "n/a", None, ("ICLR", 2023), id="bad-year-falls-back"),
    ],
)
def test_venue_and_year_resolution(venue, year, config_venue, expected):
    config = IngestConfig(venue=config_venue)
    docs, _ = make_documents([_rec(A1, venue=venue, year=year)], config)
    row = docs.iloc[0]
    got_year = None if pd.isna(row["year"]) else int(row["year"])
    assert (row["venue"], got_year) == expected


def test_repaired_abstract_is_stored_and_deduplicated():
    broken = "We propose condi-\ntional flows\nfor  \\emph{sparse} graphs of any size."
    clean = "We propose conditional flows for sparse graphs of any size."
    docs, rejected = make_documents([_rec(broken, "a:1"), _rec(clean.upper(), "b:row 1")], CFG)
    assert list(docs["abstract"]) == [clean]
    assert rejected["reason"].item() == "duplicate abstract (kept a:1)"
    assert rejected["text"].item() == clean.upper()  # the ledger keeps the raw text


def test_title_is_repaired_too():
    docs, _ = make_documents([_rec(A1, title="A \\textsc{Title}\nover two lines")], CFG)
    assert docs["title"].item() == "A Title over two lines"


def test_flattened_breaks_are_decided_by_the_whole_corpus_and_counted():
    """`varia- tional` is joined because another paper writes `variational`; the counts say
    what each repair did."""
    records = [
        _rec("A varia- tional bound for pre- and post-training, fast &amp; simple.", "a:1"),
        _rec("Variational inference for large models of many graphs.", "a:2"),
        _rec("caf\u00c3\u00a9 models: a cheap low- rank and low-rank adapter study.", "a:3"),
    ]
    counts = Counter()
    docs, _ = make_documents(records, CFG, counts)
    assert docs["abstract"].tolist() == [
        "A variational bound for pre- and post-training, fast & simple.",
        "Variational inference for large models of many graphs.",
        "café models: a cheap low-rank and low-rank adapter study.",
    ]
    assert counts[JOINED] == counts[HYPHENATED] == counts[SUSPENDED] == 1
    assert counts["mojibake"] == counts["HTML entities"] == 1
    line = ingest.repair_line(counts)
    assert line.startswith("repairs (texts changed, or words): ")
    assert f"{JOINED} 1" in line and "mojibake 1" in line
    assert ingest.repair_line(Counter()) == "repairs: none needed"


# ---------------------------------------------------------------- run


def _config(tmp_path: Path, inputs: list[str], **ingest_section):
    return parse_config({"inputs": inputs, "output_dir": str(tmp_path), "ingest": ingest_section})


def test_run_writes_documents_and_ledger(tmp_path, caplog):
    (tmp_path / "a.txt").write_text(f"ICML 2025 Papers\n\n{A1}\n\nshort one\n", encoding="utf-8")
    jsonl = [json.dumps({"abstract": A2, "venue": "ICLR 2023"}), "{broken", json.dumps({"x": 1})]
    (tmp_path / "b.jsonl").write_text("\n".join(jsonl), encoding="utf-8")
    (tmp_path / "c.csv").write_text(f'abstract\n"{A1.lower()}"\n"{A3}"\n', encoding="utf-8")
    config = _config(tmp_path, [str(tmp_path / "a.txt"), str(tmp_path / "b.jsonl")])
    config = _config(tmp_path, [*config.inputs, str(tmp_path / "c.csv")])
    out_docs, out_rej = (
        tmp_path / "out" / "documents.parquet",
        tmp_path / "out" / "rejected.parquet",
    )

    with caplog.at_level(logging.INFO, "pipeline.ingest"):
        returned = ingest.run(config.ingest, config.inputs, out_docs, out_rej)
    assert "repairs: none needed" in caplog.text  # clean input: every repair is counted

    docs = tables.read_table(out_docs, schemas.DOCUMENTS)
    rejected = tables.read_table(out_rej, schemas.REJECTED)
    records_read = 2 + 3 + 2  # a.txt: 2 blocks; b.jsonl: 3 lines; c.csv: 2 rows
    assert len(docs) + len(rejected) == records_read
    assert list(docs["abstract"]) == [A1, A2, A3]
    assert list(docs["venue"]) == ["ICML", "ICLR", "Unknown"]
    assert list(returned["doc_id"]) == list(docs["doc_id"])
    reasons = sorted(r.split(" (")[0] for r in rejected["reason"])
    assert reasons == [
        "abstract is missing",
        "abstract too short",
        "duplicate abstract",
        "invalid JSON",
    ]
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".tmp")]
    # both tables record what they were built from: the ingest config and the files' bytes
    lineage = tables.read_lineage(out_docs)
    assert lineage == tables.read_lineage(out_rej)
    assert lineage.inputs == {p: tables.file_digest(p) for p in config.inputs}
    changed = _config(tmp_path, config.inputs, min_abstract_words=2)
    ingest.run(changed.ingest, changed.inputs, out_docs, out_rej)
    assert tables.read_lineage(out_docs).fingerprint != lineage.fingerprint


def test_run_with_nothing_usable_raises_and_writes_nothing(tmp_path):
    (tmp_path / "a.csv").write_text("abstract\ntoo short\n\n", encoding="utf-8")
    config = _config(tmp_path, [str(tmp_path / "a.csv")])
    out = tmp_path / "out"
    with pytest.raises(InputError, match="no usable abstracts"):
        ingest.run(
            config.ingest, config.inputs, out / "documents.parquet", out / "rejected.parquet"
        )
    assert not (out / "documents.parquet").exists()
    assert not (out / "rejected.parquet").exists()

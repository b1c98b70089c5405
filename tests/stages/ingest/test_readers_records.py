"""Ingest's readers, record by record: JSONL line endings, numbering and the reasons of broken
lines, encodings, the ledger row's fields, CSV cells, and the messages naming a bad file."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest

from pipeline.config import IngestConfig
from pipeline.errors import InputError
from pipeline.stages.ingest import make_documents, readers
from pipeline.stages.ingest.readers import expand_inputs, read_file
from tests.support.ingest_samples import A1, A2, CFG


def test_jsonl_in_a_folder_with_spaces_crlf_and_renamed_columns(tmp_path):
    folder = tmp_path / "my papers"
    folder.mkdir()
    path = folder / "some papers.jsonl"
    lines = [json.dumps({"summary": A1}), "[1, 2]", "", json.dumps({"summary": A2})]
    path.write_bytes("\r\n".join(lines).encode("utf-8"))
    records, bad = read_file(path, IngestConfig(columns={"summary": "abstract"}))
    assert [(r.source, r.abstract) for r in records] == [
        (f"{path}:line 1", A1),
        (f"{path}:line 4", A2),
    ]
    assert bad == [
        {
            "source": f"{path}:line 2",
            "file": str(path),
            "record": "line 2",
            "reason": "line is not an object (list)",
            "text": "[1, 2]",
            "duplicate_of": None,
        }
    ]


def test_broken_jsonl_lines_say_why(tmp_path):
    path = tmp_path / "p.jsonl"
    too_long = "1" * 5000
    lines = [json.dumps({"abstract": A1}), '{"abstract": ', "[" * 100_000, too_long]
    path.write_text("\n".join(lines), encoding="utf-8")
    records, bad = read_file(path, CFG)
    assert len(records) == 1
    reasons = {row["record"]: row["reason"] for row in bad}
    assert reasons["line 2"] == "invalid JSON (Expecting value)"
    assert reasons["line 3"] == "invalid JSON (nested too deeply)"
    try:
        int(too_long)
    except ValueError as exc:
        assert reasons["line 4"] == f"invalid JSON ({str(exc)[:100]})"
    assert {row["record"]: row["text"] for row in bad}["line 2"] == '{"abstract": '


def test_ledger_rows_take_the_record_from_their_own_file_only():
    row = readers.ledger_row("a.txt:12", "b.txt", "r", "bell\x07 here")
    assert (row["file"], row["record"], row["text"]) == ("b.txt", "", "bell  here")
    row = readers.ledger_row("a.txt:12", "", "r", "x")
    assert (row["file"], row["record"]) == ("a.txt:12", "")


def test_non_text_abstracts_are_named_by_their_type():
    records = [readers.RawRecord(source=f"s:{i}", abstract=v) for i, v in enumerate([[1, 2], {1}])]
    _, rejected = make_documents(records, CFG)
    assert list(rejected["reason"]) == ["abstract is not text (list)", "abstract is not text (set)"]


def test_decoding_utf16_both_ways_and_noting_the_fallback(caplog):
    text = "ICML 2025 Papers\n\nCafé"
    assert readers.decode_bytes(text.encode("utf-16-be"), "x") != text  # no BOM: not UTF-16
    assert readers.decode_bytes(b"\xfe\xff" + text.encode("utf-16-be"), "x") == text
    assert readers.decode_bytes(b"\xff\xfe" + text.encode("utf-16-le"), "x") == text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pipeline.ingest"):
        assert readers.decode_bytes("Café au lait".encode("latin-1"), "x.txt") == "Café au lait"
    assert caplog.messages == [
        "x.txt: not UTF-8 (invalid continuation byte); decoded as Windows-1252/Latin-1"
    ]


def test_globs_reach_into_subfolders(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for path in (tmp_path / "top.txt", tmp_path / "a" / "b" / "deep.txt"):
        path.write_text("x", encoding="utf-8")
    assert expand_inputs([str(tmp_path / "**" / "*.txt")]) == [
        tmp_path / "a" / "b" / "deep.txt",
        tmp_path / "top.txt",
    ]


def test_csv_cells_stay_text_and_only_empty_cells_are_missing(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(f'abstract,title,id,year\n"{A1}",NA,007,2023\n"{A2}",,12,\n', encoding="utf-8")
    records, _ = read_file(path, CFG)
    assert [(r.title, r.source_id, r.year) for r in records][0] == ("NA", "007", "2023")
    assert readers.is_missing(records[1].title) and readers.is_missing(records[1].year)
    assert all(isinstance(r.abstract, str) for r in records)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "x.doc",
            "a",
            "x.doc: unknown file type '.doc' (known: .csv, .json, .jsonl, .ndjson, "
            ".parquet, .pq, .text, .txt)",
        ),
        (
            "x.csv",
            'abstract\n"never closed\n',
            "x.csv: cannot read as csv (Error tokenizing data. "
            "C error: EOF inside string starting at row 1)",
        ),
        ("x.json", "{}", "x.json: expected a JSON list of records"),
    ],
)
def test_a_bad_file_is_named_in_one_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_file(path, CFG)
    assert str(info.value) == f"{tmp_path}/{message}"


def test_pq_files_are_parquet_and_messages_list_the_columns(tmp_path):
    pd.DataFrame({"abstract": [A1]}).to_parquet(tmp_path / "p.pq")
    assert [r.abstract for r in read_file(tmp_path / "p.pq", CFG)[0]] == [A1]
    columns = {f"c{i}": ["x"] for i in range(14)}
    pd.DataFrame(columns).to_parquet(tmp_path / "wide.parquet")
    with pytest.raises(InputError) as info:
        read_file(tmp_path / "wide.parquet", CFG)
    shown = ", ".join(f"c{i}" for i in range(12))
    assert str(info.value) == (
        f"{tmp_path}/wide.parquet: no 'abstract' column (columns: {shown}); "
        "name another in ingest.columns, e.g. {summary: abstract}"
    )
    pd.DataFrame({"abstract": [b"x" * 60]}).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(InputError, match=r"only values like b'x{38}: is it the abstract column"):
        read_file(tmp_path / "b.parquet", CFG)


def test_bad_records_and_details_are_named_and_bounded(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"abstract": A1}, 5]), encoding="utf-8")
    records, bad = read_file(path, CFG)
    assert len(records) == 1 and (bad[0]["file"], bad[0]["record"]) == (str(path), "record 2")
    path.write_text("[{}]", encoding="utf-8")
    with pytest.raises(InputError, match=r"no 'abstract' column \(columns: none\)"):
        read_file(path, CFG)
    corrupt = tmp_path / f"{'x' * 150}.parquet"  # pyarrow's message names the file: long
    corrupt.write_bytes(b"PAR1" + bytes(range(64)))
    with pytest.raises(InputError) as info:
        read_file(corrupt, CFG)
    detail = str(info.value).split("cannot read as parquet (", 1)[1][:-1]
    assert len(detail) == 200 and "\n" not in detail

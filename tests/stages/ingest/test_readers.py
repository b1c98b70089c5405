"""Ingest's readers: the seed text format, CSV/JSON/JSONL/Parquet tables, encodings, the
ledger rows of records unreadable on their own, and input expansion."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from pipeline.config import IngestConfig
from pipeline.errors import InputError
from pipeline.stages.ingest import make_documents, readers
from pipeline.stages.ingest.readers import parse_seed_text, read_file
from pipeline.stages.ingest.venues import VenueNames
from tests.support.ingest_samples import A1, A2, A3, CFG


def _venue_of(record) -> tuple[str, int | None]:
    """(venue, year) that a record's venue string resolves to."""
    venue = VenueNames().resolve(record.venue)
    return venue.venue, venue.year


# ---------------------------------------------------------------- pure core: seed text


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_parse_seed_text_header_blocks_and_line_numbers(newline):
    lines = [
        "ICML 2025 Papers",  # 1
        "",  # 2
        A1,  # 3
        "",  # 4
        "",  # 5
        "First line of a wrapped",  # 6
        "abstract that continues here.",  # 7
        "",  # 8
        A3,  # 9
        "",
    ]
    records = parse_seed_text(newline.join(lines), "data/f.txt")
    assert [r.source for r in records] == ["data/f.txt:3", "data/f.txt:6", "data/f.txt:9"]
    # records keep the block's lines as read; make_documents repairs and unwraps them
    assert [r.abstract for r in records] == [
        A1,
        "First line of a wrapped\nabstract that continues here.",
        A3,
    ]
    assert {_venue_of(r) for r in records} == {("ICML", 2025)}
    assert all("\r" not in r.abstract for r in records)
    docs, _ = make_documents(records, CFG)
    assert docs["abstract"][1] == "First line of a wrapped abstract that continues here."


@pytest.mark.parametrize(
    ("text", "default_venue", "venue"),
    [
        pytest.param(f"ICLR 2023\n{A1}\n\n{A2}\n", None, ("ICLR", 2023), id="right-under-header"),
        pytest.param(f"\n{A1}\n\n{A2}\n", "NeurIPS 2024", ("NeurIPS", 2024), id="default-venue"),
        pytest.param(f"ICML 2025\n{A1}\n\n{A2}", "NeurIPS 2024", ("ICML", 2025), id="header-wins"),
    ],
)
def test_parse_seed_text_first_block(text, default_venue, venue):
    records = parse_seed_text(text, "f.txt", default_venue=default_venue)
    assert [(r.source, r.abstract) for r in records] == [("f.txt:2", A1), ("f.txt:4", A2)]
    assert {_venue_of(r) for r in records} == {venue}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(f"{A1}\n\n{A2}\n", "f.txt:1: no venue header", id="no-header"),
        pytest.param(f"\n\n{A1}\n", "f.txt:3: no venue header", id="no-header-after-blanks"),
        pytest.param("ICML 2025 Papers\n\n\n", "f.txt: has a header", id="header-only"),
        pytest.param("", "f.txt: file is empty", id="empty"),
        pytest.param(" \n\t\n\r\n", "f.txt: file is empty", id="whitespace-only"),
    ],
)
def test_parse_seed_text_rejects_file(text, expected):
    with pytest.raises(InputError) as info:
        parse_seed_text(text, "f.txt")
    assert str(info.value).startswith(expected)


def test_headerless_abstract_mentioning_a_year_is_not_a_header():
    text = "Since 2020 diffusion models have become the dominant\napproach to image generation.\n"
    with pytest.raises(InputError, match="no venue header"):
        parse_seed_text(text, "f.txt")


# ---------------------------------------------------------------- file readers

ROWS = [
    {"id": "p-1", "title": "Sparse Graphs", "abstract": A1, "venue": "ICLR 2023", "url": "u1"},
    {"id": "p-2", "title": "Noisy Images", "abstract": A2, "venue": "ICML", "year": "2024"},
]


def _write_csv(path: Path) -> None:
    pd.DataFrame(ROWS).to_csv(path, index=False)


def _write_json(path: Path) -> None:
    path.write_text(json.dumps(ROWS), encoding="utf-8")


def _write_json_wrapper(path: Path) -> None:
    path.write_text(json.dumps({"count": 2, "papers": ROWS}), encoding="utf-8")


def _write_jsonl(path: Path) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")


def _write_parquet(path: Path) -> None:
    pd.DataFrame(ROWS).to_parquet(path, index=False)


@pytest.mark.parametrize(
    ("name", "writer", "unit"),
    [
        ("papers.csv", _write_csv, "row"),
        ("papers.json", _write_json, "record"),
        ("wrapped.json", _write_json_wrapper, "record"),
        ("papers.jsonl", _write_jsonl, "line"),
        ("papers.parquet", _write_parquet, "row"),
    ],
)
def test_table_formats_map_columns(tmp_path, name, writer, unit):
    path = tmp_path / name
    writer(path)
    records, bad = read_file(path, CFG)
    assert bad == []
    docs, rejected = make_documents(records, CFG)
    assert rejected.empty
    columns = ["venue", "year", "title", "source_id", "url", "source"]
    got = [
        {k: None if pd.isna(v) else v for k, v in row.items()}
        for row in docs[columns].to_dict("records")
    ]
    assert got == [
        {
            "venue": "ICLR",
            "year": 2023,
            "title": "Sparse Graphs",
            "source_id": "p-1",
            "url": "u1",
            "source": f"{path}:{unit} 1",
        },
        {
            "venue": "ICML",
            "year": 2024,
            "title": "Noisy Images",
            "source_id": "p-2",
            "url": None,
            "source": f"{path}:{unit} 2",
        },
    ]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig"])
def test_csv_column_names_are_case_insensitive(tmp_path, encoding):
    path = tmp_path / "papers.csv"
    path.write_text(f'Abstract,TITLE, Venue \n"{A1}",Sparse,ICLR 2023\n', encoding=encoding)
    records, _ = read_file(path, CFG)
    assert [(r.abstract, r.title, r.venue) for r in records] == [(A1, "Sparse", "ICLR 2023")]


@pytest.mark.parametrize(
    ("name", "writer"),
    [
        ("x.csv", lambda p: p.write_text("title,summary\nT,S\n", encoding="utf-8")),
        ("x.json", lambda p: p.write_text('[{"title": "T", "summary": "S"}]', encoding="utf-8")),
        ("x.parquet", lambda p: pd.DataFrame({"title": ["T"], "summary": ["S"]}).to_parquet(p)),
    ],
)
def test_missing_abstract_column(tmp_path, name, writer):
    path = tmp_path / name
    writer(path)
    with pytest.raises(InputError) as info:
        read_file(path, CFG)
    message = str(info.value)
    assert message.startswith(f"{path}: no 'abstract' column")
    assert "title" in message and "summary" in message


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        pytest.param("x.xlsx", b"PK\x03\x04", "unknown file type '.xlsx'", id="unknown-ext"),
        pytest.param("README", b"hello", "unknown file type '(none)'", id="no-ext"),
        pytest.param("x.parquet", os.urandom(256), "cannot read as parquet", id="corrupt-pq"),
        pytest.param("x.json", b'[{"abstract": ', "cannot read as json", id="truncated-json"),
        pytest.param("x.json", b'"a string"', "expected a JSON list", id="json-not-list"),
        pytest.param("x.csv", b"", "file is empty", id="empty-csv"),
        pytest.param("x.csv", b'abstract\n"a,b\n', "cannot read as csv", id="broken-csv"),
    ],
)
def test_unreadable_files_raise_input_error_naming_file(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_file(path, CFG)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)
    assert info.value.__cause__ is None  # no raw pyarrow/pandas exception chained on


@pytest.mark.parametrize("name", ["x.csv", "x.json", "x.parquet"])
def test_column_mapping_names_other_columns(tmp_path, name):
    path = tmp_path / name
    frame = pd.DataFrame({"Summary": [A1, A2], "Paper Title": ["T1", "T2"], "abstract_id": [1, 2]})
    {
        "x.csv": lambda: frame.to_csv(path, index=False),
        "x.json": lambda: path.write_text(frame.to_json(orient="records"), encoding="utf-8"),
        "x.parquet": lambda: frame.to_parquet(path),
    }[name]()
    config = IngestConfig(columns={"summary": "abstract", "paper title": "title"})
    records, _ = read_file(path, config)
    assert [(r.abstract, r.title) for r in records] == [(A1, "T1"), (A2, "T2")]
    with pytest.raises(InputError, match="name another in ingest.columns"):
        read_file(path, CFG)


def test_two_columns_for_one_field_is_an_error(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text(f"abstract,summary\n{A1},{A2}\n", encoding="utf-8")
    with pytest.raises(InputError, match="columns 'abstract' and 'summary' both give the abstract"):
        read_file(path, IngestConfig(columns={"summary": "abstract"}))


def test_stray_non_text_abstract_is_ledgered_but_a_column_of_numbers_is_fatal(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps([{"abstract": A1}, {"abstract": 7}, {"abstract": [1]}]), "utf-8")
    docs, rejected = make_documents(read_file(path, CFG)[0], CFG)
    assert list(docs["abstract"]) == [A1]
    assert list(rejected["reason"]) == ["abstract is not text (int)", "abstract is not text (list)"]
    assert list(rejected["record"]) == ["record 2", "record 3"]
    path.write_text(json.dumps([{"abstract": 7}, {"abstract": 8.5}]), "utf-8")
    with pytest.raises(InputError, match=r"column 'abstract' holds no text, only values like 7"):
        read_file(path, CFG)


def test_ledger_rows_name_file_and_record():
    assert readers.ledger_row("d/a.txt:12", "d/a.txt", "why", "raw\ntext") == {
        "source": "d/a.txt:12",
        "file": "d/a.txt",
        "record": "line 12",
        "reason": "why",
        "text": "raw\ntext",
        "duplicate_of": None,
    }
    row = readers.ledger_row("b.jsonl:line 3", "b.jsonl", "bad", {"x": 1}, "p1")
    assert (row["record"], row["text"], row["duplicate_of"]) == ("line 3", "{'x': 1}", "p1")
    long = readers.ledger_row("c.csv:row 1", "c.csv", "r", "w" * 1000 + "\ud800")
    assert long["text"] == "w" * readers.LEDGER_TEXT_CHARS


def test_jsonl_broken_line_is_ledgered_and_the_rest_kept(tmp_path):
    path = tmp_path / "papers.jsonl"
    lines = [json.dumps({"abstract": A1}), '{"abstract": "unterminated', "", json.dumps([A2])]
    lines.append(json.dumps({"abstract": A3}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    records, bad = read_file(path, CFG)
    assert [(r.source, r.abstract) for r in records] == [
        (f"{path}:line 1", A1),
        (f"{path}:line 5", A3),
    ]
    by_source = {row["source"]: row["reason"] for row in bad}
    assert by_source.keys() == {f"{path}:line 2", f"{path}:line 4"}
    assert by_source[f"{path}:line 2"].startswith("invalid JSON")
    assert by_source[f"{path}:line 4"] == "line is not an object (list)"


def test_jsonl_line_separator_inside_string(tmp_path):
    path = tmp_path / "papers.jsonl"
    first = json.dumps({"abstract": A1.replace(" graphs", "\u2028graphs")}, ensure_ascii=False)
    path.write_text(first + "\n" + json.dumps({"abstract": A2}) + "\n", encoding="utf-8")
    records, bad = read_file(path, CFG)
    assert bad == []
    assert [r.source for r in records] == [f"{path}:line 1", f"{path}:line 2"]


def test_jsonl_with_only_broken_lines_is_ledgered(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"abstract": \n{oops\n', encoding="utf-8")
    records, bad = read_file(path, CFG)
    assert records == []
    assert [row["source"] for row in bad] == [f"{path}:line 1", f"{path}:line 2"]
    assert all(row["reason"].startswith("invalid JSON") for row in bad)


def test_integer_ids_with_gaps_keep_their_form(tmp_path):
    path = tmp_path / "papers.json"
    path.write_text(json.dumps([{"abstract": A1, "id": 7}, {"abstract": A2}]), encoding="utf-8")
    docs, _ = make_documents(read_file(path, CFG)[0], CFG)
    assert list(docs["source_id"]) == ["7", None]


@pytest.mark.parametrize(
    ("data", "abstract"),
    [
        pytest.param(
            f"ICML 2025 Papers\n\n{A1} caf\u00e9\n".encode("latin-1"), "caf\u00e9", id="latin1"
        ),
        pytest.param(
            f"ICML 2025 Papers\n\n{A1} it\u2019s\n".encode("cp1252"), "it\u2019s", id="cp1252"
        ),
        pytest.param(b"\xef\xbb\xbfICML 2025 Papers\n\n" + A1.encode(), A1, id="utf8-bom"),
        pytest.param(f"ICML 2025 Papers\n\n{A1}".encode("utf-16"), A1, id="utf16-bom"),
        pytest.param(b"ICML 2025 Papers\n\n" + A1.encode() + b" \x81\x8d", "\x81\x8d", id="junk"),
    ],
)
def test_text_file_encodings(tmp_path, data, abstract):
    path = tmp_path / "papers.txt"
    path.write_bytes(data)
    records, _ = read_file(path, CFG)
    assert len(records) == 1
    assert _venue_of(records[0]) == ("ICML", 2025)
    assert records[0].abstract.endswith(abstract)
    assert records[0].source == f"{path}:3"


def test_text_file_uses_config_venue(tmp_path):
    path = tmp_path / "papers.txt"
    path.write_text(f"{A1}\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{re.escape(str(path))}:1: no venue header"):
        read_file(path, CFG)
    records, _ = read_file(path, IngestConfig(venue="ICLR 2024"))
    assert _venue_of(records[0]) == ("ICLR", 2024)


# ---------------------------------------------------------------- expand_inputs


def test_expand_inputs_sorts_globs_and_keeps_config_order(tmp_path):
    texts = [f"{letter}.txt" for letter in "hbgadfce"]  # enough that directory order is unsorted
    for name in [*texts, "z.csv"]:
        (tmp_path / name).write_text("x", encoding="utf-8")
    (tmp_path / "dir.txt").mkdir()  # a directory matching the glob is skipped
    paths = readers.expand_inputs([str(tmp_path / "z.csv"), str(tmp_path / "*.txt")])
    assert paths == [tmp_path / "z.csv"] + [tmp_path / name for name in sorted(texts)]
    again = readers.expand_inputs([str(tmp_path / "h.txt"), str(tmp_path / "*.txt")])
    assert again == [tmp_path / "h.txt"] + [tmp_path / n for n in sorted(texts)[:-1]]  # no dups


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("missing.txt", "input file not found"),
        ("*.nothing", "no file matches this input pattern"),
        ("subdir", "input is not a file"),
    ],
)
def test_expand_inputs_errors_name_the_input(tmp_path, pattern, expected):
    (tmp_path / "subdir").mkdir()
    full = str(tmp_path / pattern)
    with pytest.raises(InputError) as info:
        readers.expand_inputs([full])
    assert str(info.value) == f"{full}: {expected}"


def test_every_optional_column_reaches_the_record():
    frame = pd.DataFrame(
        {
            "Abstract": [A1],
            "TITLE": ["T"],
            "venue": ["ICML 2023"],
            "year": [2023],
            "id": ["x1"],
            "url": ["https://e.org/1"],
            "track": ["Oral"],
            "date": ["2023-07-01"],
        }
    )
    (record,) = readers.records_from_frame(frame, "t.csv", "row")
    assert (record.source, record.abstract, record.title, record.venue, record.year) == (
        "t.csv:row 1",
        A1,
        "T",
        "ICML 2023",
        2023,
    )
    assert (record.source_id, record.url, record.track, record.date, record.file) == (
        "x1",
        "https://e.org/1",
        "Oral",
        "2023-07-01",
        "t.csv",
    )

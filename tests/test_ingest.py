"""Ingest: the pure parsing/cleaning core, the file readers, input expansion and `run`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from pipeline import ingest, tables
from pipeline.config import IngestConfig, parse_config
from pipeline.errors import InputError
from pipeline.ingest import RawRecord, build_documents, parse_seed_text, read_file

CFG = IngestConfig()
A1 = "We propose a simple method for learning sparse representations of graphs."
A2 = "Diffusion models are trained to reverse a gradual noising process on images."
A3 = "We study the sample complexity of offline reinforcement learning with function approximation."


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
    # records keep the block's lines as read; build_documents repairs and unwraps them
    assert [r.abstract for r in records] == [
        A1,
        "First line of a wrapped\nabstract that continues here.",
        A3,
    ]
    assert {(r.venue, r.year) for r in records} == {("ICML", 2025)}
    assert all("\r" not in r.abstract for r in records)
    docs, _ = build_documents(records, CFG)
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
    assert {(r.venue, r.year) for r in records} == {venue}


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


# ---------------------------------------------------------------- pure core: helpers


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ICLR 2023", ("ICLR", 2023)),
        ("  NeurIPS\t 2024 ", ("NeurIPS", 2024)),
        ("ICML, 2025", ("ICML", 2025)),
        ("ICML 2025 Papers", ("ICML", 2025)),
        ("ICML", ("ICML", None)),
    ],
)
def test_split_venue(value, expected):
    assert ingest.split_venue(value) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\tb\nc   d", "a b c d"),
        ("  lead and trail \r\n", "lead and trail"),
        ("non\u00a0breaking", "non breaking"),
        ("cafe\u0301", "caf\u00e9"),  # NFC
        (" \n\t", ""),
    ],
)
def test_normalise_space(text, expected):
    assert ingest.normalise_space(text) == expected


# ---------------------------------------------------------------- pure core: text repair


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # words hyphenated at a line break (PDF extraction)
        ("condi-\ntional", "conditional"),
        ("condi- \r\n  tional", "conditional"),
        ("re-\nsults and con-\nvex sets", "results and convex sets"),
        ("the token-\nization step", "the tokenization step"),  # a bare suffix
        ("a data-\nset, as any dataset", "a dataset, as any dataset"),  # joined form elsewhere
        # ... but not real compounds
        ("self-\nsupervised", "self-supervised"),
        ("Self-\nsupervised", "Self-supervised"),
        ("non-\nconvex and multi-\nagent", "non-convex and multi-agent"),
        ("state-of-the-\nart", "state-of-the-art"),
        ("GPU-\nfriendly and 3D-\naware", "GPU-friendly and 3D-aware"),
        ("pre-\nTraining", "pre-Training"),  # capital after the break
        ("co-\nattention, as co-attention", "co-attention, as co-attention"),  # hyphen elsewhere
        ("a dash -\nthen more", "a dash - then more"),
        ("x-\n2", "x-2"),
        # hard line breaks, Windows line endings, tabs, PDF debris
        ("one\ntwo\r\nthree\rfour\tfive", "one two three four five"),
        ("e\u00ad\nvery soft\u00adhyphen", "every softhyphen"),
        ("\ufb01ne \ufb02ow e\ufb00ect", "fine flow effect"),
        ("bell\x07 and nul\x00 and \ud800 surrogate", "bell and nul and surrogate"),
        # LaTeX: formatting dropped, notes and citations removed, maths kept
        (r"\textit{x} and \textbf{\emph{bold}} text", "x and bold text"),
        (r"as shown \cite{a, b}.\footnote{See the {appendix}.} Next", "as shown. Next"),
        (r"{\em old} style, 50\% \& more", "old style, 50% & more"),
        (r"keep $\mathcal{O}(\sqrt{n})$ and $\textbf{x}$ maths", None),
        # markup stays text
        ("<script>alert(1)</script> &amp; <b>b</b>", None),
    ],
)
def test_repair_text(text, expected):
    assert ingest.repair_text(text) == (text if expected is None else expected)


@pytest.mark.parametrize(
    ("broken", "corpus", "expected"),
    [
        ("finite-\nsample", "a finite set of one sample", "finite-sample"),  # two known words
        ("finite-\nsample", "", "finitesample"),  # no evidence: joined
        ("proper-\nties", "proper ties and properties", "properties"),  # joined form wins
        ("pre-\ntrained", "a pre-trained model", "pre-trained"),  # hyphenated form known
        ("condi-\ntional", "condi-\ntional again", "conditional"),  # fragments are not words
        ("in-\nformation", "in formation", "information"),  # short parts do not count
    ],
)
def test_hyphen_breaks_use_the_corpus_vocabulary(broken, corpus, expected):
    vocabulary = ingest.vocabulary_of([corpus, broken])
    assert ingest.repair_text(broken, vocabulary) == expected


def test_repaired_abstract_is_stored_and_deduplicated():
    broken = "We propose condi-\ntional flows\nfor  \\emph{sparse} graphs of any size."
    clean = "We propose conditional flows for sparse graphs of any size."
    docs, rejected = build_documents([_rec(broken, "a:1"), _rec(clean.upper(), "b:row 1")], CFG)
    assert list(docs["abstract"]) == [clean]
    assert rejected["reason"].item() == "duplicate abstract (kept a:1)"
    assert rejected["text"].item() == clean.upper()  # the ledger keeps the raw text


def test_title_is_repaired_too():
    docs, _ = build_documents([_rec(A1, title="A \\textsc{Title}\nover two lines")], CFG)
    assert docs["title"].item() == "A Title over two lines"


# ---------------------------------------------------------------- pure core: build_documents


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
    docs, rejected = build_documents(records, CFG)
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
    docs, rejected = build_documents(records, IngestConfig(min_abstract_words=4))
    assert list(docs["source"]) == ["b"]
    assert "ingest.min_abstract_words=4" in rejected["reason"].item()


def test_doc_id_is_stable_across_order_and_calls():
    records = [_rec(A1, "a"), _rec(A2, "b"), _rec(A3, "c")]
    first, _ = build_documents(records, CFG)
    second, _ = build_documents(list(reversed(records)), CFG)
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
    docs, _ = build_documents([_rec(A1, venue=venue, year=year)], config)
    row = docs.iloc[0]
    got_year = None if pd.isna(row["year"]) else int(row["year"])
    assert (row["venue"], got_year) == expected


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
    docs, rejected = build_documents(records, CFG)
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
    {"x.csv": lambda: frame.to_csv(path, index=False),
     "x.json": lambda: path.write_text(frame.to_json(orient="records"), encoding="utf-8"),
     "x.parquet": lambda: frame.to_parquet(path)}[name]()  # fmt: skip
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
    docs, rejected = build_documents(read_file(path, CFG)[0], CFG)
    assert list(docs["abstract"]) == [A1]
    assert list(rejected["reason"]) == ["abstract is not text (int)", "abstract is not text (list)"]
    assert list(rejected["record"]) == ["record 2", "record 3"]
    path.write_text(json.dumps([{"abstract": 7}, {"abstract": 8.5}]), "utf-8")
    with pytest.raises(InputError, match=r"column 'abstract' holds no text, only values like 7"):
        read_file(path, CFG)


def test_ledger_rows_name_file_and_record():
    assert ingest.ledger_row("d/a.txt:12", "d/a.txt", "why", "raw\ntext") == {
        "source": "d/a.txt:12",
        "file": "d/a.txt",
        "record": "line 12",
        "reason": "why",
        "text": "raw\ntext",
        "duplicate_of": None,
    }
    row = ingest.ledger_row("b.jsonl:line 3", "b.jsonl", "bad", {"x": 1}, "p1")
    assert (row["record"], row["text"], row["duplicate_of"]) == ("line 3", "{'x': 1}", "p1")
    long = ingest.ledger_row("c.csv:row 1", "c.csv", "r", "w" * 1000 + "\ud800")
    assert long["text"] == "w" * ingest.LEDGER_TEXT_CHARS


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
    docs, _ = build_documents(read_file(path, CFG)[0], CFG)
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
    assert (records[0].venue, records[0].year) == ("ICML", 2025)
    assert records[0].abstract.endswith(abstract)
    assert records[0].source == f"{path}:3"


def test_text_file_uses_config_venue(tmp_path):
    path = tmp_path / "papers.txt"
    path.write_text(f"{A1}\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{re.escape(str(path))}:1: no venue header"):
        read_file(path, CFG)
    records, _ = read_file(path, IngestConfig(venue="ICLR 2024"))
    assert (records[0].venue, records[0].year) == ("ICLR", 2024)


# ---------------------------------------------------------------- expand_inputs


def test_expand_inputs_sorts_globs_and_keeps_config_order(tmp_path):
    texts = [f"{letter}.txt" for letter in "hbgadfce"]  # enough that directory order is unsorted
    for name in [*texts, "z.csv"]:
        (tmp_path / name).write_text("x", encoding="utf-8")
    (tmp_path / "dir.txt").mkdir()  # a directory matching the glob is skipped
    paths = ingest.expand_inputs([str(tmp_path / "z.csv"), str(tmp_path / "*.txt")])
    assert paths == [tmp_path / "z.csv"] + [tmp_path / name for name in sorted(texts)]
    again = ingest.expand_inputs([str(tmp_path / "h.txt"), str(tmp_path / "*.txt")])
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
        ingest.expand_inputs([full])
    assert str(info.value) == f"{full}: {expected}"


# ---------------------------------------------------------------- run


def _config(tmp_path: Path, inputs: list[str], **ingest_section):
    return parse_config({"inputs": inputs, "output_dir": str(tmp_path), "ingest": ingest_section})


def test_run_writes_documents_and_ledger(tmp_path):
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

    returned = ingest.run(config, out_docs, out_rej)

    docs = tables.read_table(out_docs, tables.DOCUMENTS)
    rejected = tables.read_table(out_rej, tables.REJECTED)
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
    ingest.run(changed, out_docs, out_rej)
    assert tables.read_lineage(out_docs).fingerprint != lineage.fingerprint


def test_run_with_nothing_usable_raises_and_writes_nothing(tmp_path):
    (tmp_path / "a.csv").write_text("abstract\ntoo short\n\n", encoding="utf-8")
    config = _config(tmp_path, [str(tmp_path / "a.csv")])
    out = tmp_path / "out"
    with pytest.raises(InputError, match="no usable abstracts"):
        ingest.run(config, out / "documents.parquet", out / "rejected.parquet")
    assert not (out / "documents.parquet").exists()
    assert not (out / "rejected.parquet").exists()

"""Bad and messy input: one clear line for what stops a run, a ledger row for every record not
kept, hostile text kept as text, and parsers that never crash (hypothesis)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import schemas, tables
from pipeline.cli import main
from pipeline.config import IngestConfig, parse_config
from pipeline.errors import InputError
from pipeline.stages import ingest
from pipeline.stages.ingest import readers
from pipeline.stages.ingest.repair import repair_text
from tests.support.ingest_samples import A1, A2, A3, A4
from tests.support.inprocess import pages_for, unit_vectors
from tests.support.runs import write_config

# ---------------------------------------------------------------- fatal input: one clear line


def _parquet(frame: pd.DataFrame):
    return lambda path: frame.to_parquet(path, index=False)


def _text(content: str, encoding: str = "utf-8"):
    return lambda path: path.write_text(content, encoding=encoding)


FATAL_INPUTS = [
    # (id, file name or glob, how to create it, what the one line says)
    ("empty-txt", "a.txt", _text(""), "file is empty"),
    ("blank-txt", "a.txt", _text("\n \r\n\t\n"), "file is empty"),
    ("empty-csv", "a.csv", _text(""), "file is empty"),
    ("empty-jsonl", "a.jsonl", _text("\n\n"), "file is empty"),
    ("empty-parquet", "a.parquet", lambda p: p.write_bytes(b""), "file is empty"),
    ("header-only-txt", "a.txt", _text("ICML 2025 Papers\n\n"), "has a header"),
    ("header-only-csv", "a.csv", _text("abstract,title\n"), "but no records"),
    ("no-rows-parquet", "a.parquet", _parquet(pd.DataFrame({"abstract": []}, dtype=str)), "but no"),
    ("empty-json-list", "a.json", _text("[]"), "contains no records"),
    ("json-not-a-list", "a.json", _text('{"a": 1}'), "expected a JSON list"),
    ("no-venue-header", "a.txt", _text(f"{A1}\n\n{A2}\n"), "no venue header"),
    ("no-abstract-column", "a.csv", _text(f"title,summary\nT,{A1}\n"), "no 'abstract' column"),
    ("numbers-json", "a.json", _text('[{"abstract": 1}, {"abstract": 2}]'), "holds no text"),
    ("numbers-csv", "a.csv", _text("abstract\n1\n2.5\n"), "holds no text"),
    ("numbers-parquet", "a.parquet", _parquet(pd.DataFrame({"abstract": [1, 2]})), "holds no text"),
    ("corrupt-parquet", "a.parquet", lambda p: p.write_bytes(b"PAR1" + os.urandom(64)), "cannot"),
    ("broken-csv", "a.csv", _text('abstract\n"never closed\n'), "cannot read as csv"),
    ("unknown-type", "a.docx", _text("x"), "unknown file type '.docx'"),
    ("missing-path", "missing.txt", None, "input file not found"),
    ("empty-glob", "*.nothing", None, "no file matches"),
    ("glob-of-folders", "sub*", lambda p: (p.parent / "subdir").mkdir(), "no file matches"),
]


def _ingest(tmp_path: Path, inputs: list[str], extra: str = "", capsys=None) -> tuple[int, str]:
    config = write_config(tmp_path / "c.yaml", inputs, tmp_path / "out", extra)
    out = tmp_path / "out"
    code = main(
        [
            "ingest",
            "--config",
            str(config),
            "--documents",
            str(out / "documents.parquet"),
            "--rejected",
            str(out / "rejected.parquet"),
        ]
    )
    return code, capsys.readouterr().err if capsys else ""


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in FATAL_INPUTS],
)
def test_fatal_input_stops_with_one_line_naming_the_file(tmp_path, capsys, name, make, expected):
    path = tmp_path / name
    if make is not None:
        make(path)
    code, err = _ingest(tmp_path, [str(path)], capsys=capsys)
    assert code == 1
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert errors[0].startswith(f"error: {path}"), errors[0]
    assert expected in errors[0]
    assert not (tmp_path / "out" / "documents.parquet").exists()
    assert not (tmp_path / "out" / "rejected.parquet").exists()


def test_one_bad_file_among_good_ones_stops_the_run(tmp_path, capsys):
    (tmp_path / "good.txt").write_text(f"ICML 2025 Papers\n\n{A1}\n", encoding="utf-8")
    (tmp_path / "bad.csv").write_text("title\nT\n", encoding="utf-8")
    code, err = _ingest(
        tmp_path, [str(tmp_path / "good.txt"), str(tmp_path / "bad.csv")], capsys=capsys
    )
    assert code == 1
    assert f"error: {tmp_path / 'bad.csv'}: no 'abstract' column" in err


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        pytest.param("ingest:\n  min_abstract_wrds: 3", "ingest.min_abstract_wrds", id="unknown"),
        pytest.param("ingest:\n  min_abstract_words: many", "ingest.min_abstract_words", id="type"),
        pytest.param("ingest:\n  min_abstract_words: 0", "ingest.min_abstract_words", id="range"),
        pytest.param("ingest:\n  columns: {summary: abstrct}", "ingest.columns.summary", id="map"),
        pytest.param("cluster:\n  n_components: 500", "cluster.n_components", id="range-2"),
    ],
)
def test_config_errors_exit_2_naming_the_key(tmp_path, capsys, extra, key):
    code, err = _ingest(tmp_path, [str(tmp_path / "x.txt")], extra, capsys=capsys)
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and key in errors[0], err


# ---------------------------------------------------------------- a messy mixed corpus

BROKEN = (
    "Self-\nsupervised learning of condi-\ntional generative models needs careful regulari-\n"
    "zation of the latent space,\nas we show on \\textit{three} benchmarks.\\footnote{Code soon.}"
)
BROKEN_REPAIRED = (
    "Self-supervised learning of conditional generative models needs careful regularization "
    "of the latent space, as we show on three benchmarks."
)
LATIN1 = "Caf\u00e9 recommendations use contextual bandits with repre-\nsentation learning."
LATIN1_REPAIRED = "Caf\u00e9 recommendations use contextual bandits with representation learning."


def _write_messy_corpus(folder: Path) -> dict:
    """Five files in four formats, with good and bad records; returns what a reader expects."""
    crlf = "ICML 2025 Papers\n\n" + BROKEN + "\n\n" + "too short\n\n" + A1 + "\n"
    (folder / "a.txt").write_bytes(b"\xef\xbb\xbf" + crlf.replace("\n", "\r\n").encode("utf-8"))
    wrapped_a1 = A1.replace(" learning ", " learning\n").upper()  # a duplicate of a.txt's A1
    latin = f"ICLR 2024 Papers\n\n{LATIN1}\n\n{wrapped_a1}\n"
    (folder / "b.txt").write_bytes(latin.encode("latin-1"))
    csv = f'Summary,Title\n"{A2}",Noisy images\n"  \t ",Blank one\n"{A3}\t",Offline RL\n'
    (folder / "c.csv").write_text(csv, encoding="utf-8")
    jsonl = [
        json.dumps({"abstract": A4, "venue": "NeurIPS 2024"}),
        '{"abstract": "broken line',
        json.dumps(["not", "an", "object"]),
        json.dumps({"abstract": 12345}),  # one stray non-text record: ledgered
        json.dumps({"title": "no abstract here"}),
    ]
    (folder / "d.jsonl").write_text("\n".join(jsonl) + "\n", encoding="utf-8")
    frame = pd.DataFrame({"abstract": [A3.upper(), None, A4 + " Extended."], "venue": "ICML"})
    frame.to_parquet(folder / "e.parquet", index=False)
    return {
        "read": {"a.txt": 3, "b.txt": 2, "c.csv": 3, "d.jsonl": 5, "e.parquet": 3},
        "kept": [BROKEN_REPAIRED, A1, LATIN1_REPAIRED, A2, A3, A4, A4 + " Extended."],
        "rejected": {"a.txt": 1, "b.txt": 1, "c.csv": 1, "d.jsonl": 4, "e.parquet": 2},
    }


def test_messy_corpus_keeps_every_good_record_and_ledgers_the_rest(tmp_path, caplog):
    expected = _write_messy_corpus(tmp_path)
    config = parse_config(
        {
            "inputs": [str(tmp_path / "*.txt"), str(tmp_path / "c.csv"), str(tmp_path / "d.*")]
            + [str(tmp_path / "e.parquet")],
            "ingest": {"columns": {"summary": "abstract"}},
        }
    )
    out = tmp_path / "out"
    with caplog.at_level(logging.INFO, logger="pipeline.ingest"):
        ingest.run(
            config.ingest, config.inputs, out / "documents.parquet", out / "rejected.parquet"
        )
    docs = tables.read_table(out / "documents.parquet", schemas.DOCUMENTS)
    rejected = tables.read_table(out / "rejected.parquet", schemas.REJECTED)

    n_read = sum(expected["read"].values())
    assert len(docs) + len(rejected) == n_read
    assert list(docs["abstract"]) == expected["kept"]  # every good record, repaired, in order
    for abstract in docs["abstract"]:
        assert "\n" not in abstract and "\r" not in abstract and "\t" not in abstract
        assert not any(w in abstract for w in ("condi ", "regulari ", "repre ", "- ", "\\"))
    by_file = rejected.assign(name=rejected["file"].map(lambda f: Path(f).name))
    assert by_file["name"].value_counts().to_dict() == expected["rejected"]
    for source, file, record in rejected[["source", "file", "record"]].itertuples(index=False):
        assert source.startswith(f"{file}:") and source.endswith(record.split()[-1])

    duplicates = rejected[rejected["duplicate_of"].notna()]
    assert len(duplicates) == 2  # A1 again in b.txt, A3 again in e.parquet
    assert set(duplicates["duplicate_of"]) <= set(docs["doc_id"])
    reasons = " | ".join(rejected["reason"])
    for reason in (
        "too short",
        "is empty",
        "is missing",
        "invalid JSON",
        "not an object",
        "not text",
    ):
        assert reason in reasons
    assert set(rejected.loc[rejected["file"].str.endswith("d.jsonl"), "record"]) == {
        "line 2",
        "line 3",
        "line 4",
        "line 5",
    }

    log = caplog.text
    assert f"total: read {n_read} = kept {len(docs)} + rejected {len(rejected)}" in log
    assert f"{tmp_path / 'd.jsonl'}: read 5 = kept 1 + rejected 4" in log
    assert "b.txt: not UTF-8" in log  # the Latin-1 fallback is noted
    venues = dict(zip(docs["abstract"], docs["venue"], strict=True))
    assert venues[LATIN1_REPAIRED] == "ICLR" and venues[A4] == "NeurIPS"


# ---------------------------------------------------------------- hostile text stays text

HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1"> & "quotes" {{ template }}'
HOSTILE_ABSTRACT = (
    "We study robust parsing of untrusted text. </script><script>window.__pwned=1</script> "
    "<b>bold</b> &amp; &lt;escaped&gt; javascript:alert(1) ${injection} `backticks`."
    " &lt;script&gt;window.__pwned=2&lt;/script&gt;"
)
# ingest repairs HTML entities (ftfy), so the escaped script becomes text that looks like one
DECODED_ABSTRACT = HOSTILE_ABSTRACT.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")


def test_hostile_text_survives_ingest_as_text_and_renders_escaped(tmp_path):
    records = [{"title": HOSTILE_TITLE, "abstract": HOSTILE_ABSTRACT, "venue": "ICML 2025"}]
    records.append({"abstract": A1, "venue": "ICML 2025"})
    (tmp_path / "h.json").write_text(json.dumps(records), encoding="utf-8")
    config = parse_config({"inputs": [str(tmp_path / "h.json")]})
    out = tmp_path / "out"
    ingest.run(config.ingest, config.inputs, out / "documents.parquet", out / "rejected.parquet")
    docs = tables.read_table(out / "documents.parquet", schemas.DOCUMENTS)
    assert docs.loc[0, "title"] == HOSTILE_TITLE
    assert docs.loc[0, "abstract"] == DECODED_ABSTRACT
    pages = pages_for(docs, unit_vectors(len(docs)), [0] * len(docs), ctfidf=True)
    for page in pages.values():
        assert "<script>window.__pwned" not in page and "<img src=x" not in page


# ---------------------------------------------------------------- properties of the parsers

LINE = st.one_of(
    st.sampled_from(
        [
            "ICML 2025 Papers",
            "",
            "  \t",
            "condi-",
            "tional models for graphs and images",
            "self-",
            "supervised",
            "\\textit{x} and \\footnote{a {nested} note} $a_b$",
            "<b>bold</b> </script>",
            A1,
            "caf\u00e9 \ufb01ne \u00ad",
            "{",
            "}",
            "\\",
            "$",
            "2025",
        ]
    ),
    st.text(max_size=30),
)
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _storable(frame: pd.DataFrame, schema: schemas.Schema) -> None:
    pa.Table.from_pandas(frame[schema.columns], schema=schema.arrow, preserve_index=False)


def _check_accounting(records: list, bad: list, config: IngestConfig) -> None:
    docs, rejected = ingest.make_documents(records, config)
    assert len(docs) + len(rejected) == len(records)  # read = kept + rejected
    assert docs["doc_id"].is_unique
    assert not docs["abstract"].str.contains("[\n\r\t]").any()
    _storable(docs, schemas.DOCUMENTS)
    _storable(pd.concat([pd.DataFrame(bad, columns=rejected.columns), rejected]), schemas.REJECTED)


@SETTINGS
@given(lines=st.lists(LINE, max_size=25), newline=st.sampled_from(["\n", "\r\n", "\r"]))
def test_seed_text_parser_never_crashes_and_accounts_for_every_record(lines, newline):
    try:
        records = readers.parse_seed_text(newline.join(lines), "f.txt", default_venue=None)
    except InputError:
        return  # a whole-file problem, reported in one line
    _check_accounting(records, [], IngestConfig(min_abstract_words=2))


JSON_VALUE = st.one_of(
    st.text(max_size=60), st.integers(), st.none(), st.floats(), st.lists(st.integers(), max_size=2)
)
JSON_LINE = st.one_of(
    st.dictionaries(
        st.sampled_from(["abstract", "Title", "venue", "year", "id", "x"]), JSON_VALUE
    ).map(json.dumps),
    st.just('{"abstract": "' + A2 + ' \\ud800 lone surrogate"}'),
    st.text(max_size=40),
)


@SETTINGS
@given(lines=st.lists(JSON_LINE, max_size=12))
def test_jsonl_parser_never_crashes_and_accounts_for_every_line(lines):
    n_lines = sum(1 for line in "\n".join(lines).replace("\r\n", "\n").split("\n") if line.strip())
    try:
        records, bad = readers._read_jsonl("\n".join(lines), "f.jsonl")
    except InputError:
        return
    assert len(records) + len(bad) == n_lines
    _check_accounting(records, bad, IngestConfig(min_abstract_words=1))


@SETTINGS
@given(data=st.binary(max_size=200))
def test_decoding_never_fails(data):
    assert isinstance(readers.decode_bytes(data, "f.txt"), str)


@SETTINGS
@given(text=st.lists(LINE, max_size=10).map("\n".join))
def test_repair_gives_one_clean_line(text):
    repaired = repair_text(text)
    assert repaired == repaired.strip() and "  " not in repaired
    assert not any(c in repaired for c in "\n\r\t\x00\u00ad")

"""Stage tables, the details a crash or a later version depends on: where and with which
permissions files are written, fingerprints that stay the same across runs and versions, and
the layouts read_embeddings refuses."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import csv_files, schemas, tables
from pipeline.config import ClusterConfig
from pipeline.errors import PipelineError
from tests.support import tables as make


def test_atomic_write_goes_through_a_hidden_temporary_file_beside_the_target(tmp_path):
    target = tmp_path / "new" / "deeper" / "table.parquet"  # missing folders are made
    seen = []

    def write(tmp):
        seen.append(tmp)
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write("x")

    previous = os.umask(0o022)
    try:
        tables.atomic_write(target, write)
    finally:
        os.umask(previous)
    tmp = seen[0]
    assert os.path.dirname(tmp) == str(target.parent)
    assert os.path.basename(tmp).startswith(".table.parquet.") and tmp.endswith(".tmp")
    assert target.read_text(encoding="utf-8") == "x"
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)  # 0o666 less the umask
    assert sorted(p.name for p in target.parent.iterdir()) == ["table.parquet"]


def test_a_failed_write_raises_its_own_error_even_when_it_removed_the_file(tmp_path):
    def write(tmp):
        os.unlink(tmp)
        raise ValueError("the writer's own problem")

    with pytest.raises(ValueError, match="the writer's own problem"):
        tables.atomic_write(tmp_path / "t.parquet", write)
    assert list(tmp_path.iterdir()) == []


def test_text_and_json_are_utf8_and_json_is_indented(tmp_path):
    tables.write_text(tmp_path / "p.html", "Café ✓")
    assert (tmp_path / "p.html").read_bytes() == "Café ✓".encode()
    tables.write_json({"a": [1], "é": None}, tmp_path / "f.json")
    assert (tmp_path / "f.json").read_text(encoding="utf-8") == (
        '{\n  "a": [\n    1\n  ],\n  "\\u00e9": null\n}\n'
    )
    with pytest.raises(ValueError):
        tables.write_json({"npmi": float("nan")}, tmp_path / "nan.json")


def test_fingerprints_are_stable_across_runs_versions_and_input_order():
    lineage = tables.make_lineage("metrics", {"b": "2", "a": "1"})
    assert lineage == tables.make_lineage("metrics", {"a": "1", "b": "2"})
    text = json.dumps({"params": "metrics", "inputs": {"a": "1", "b": "2"}}, sort_keys=True)
    assert lineage.fingerprint == hashlib.sha256(text.encode()).hexdigest()
    section = tables.make_lineage(ClusterConfig(), {})
    params = f"ClusterConfig {ClusterConfig().model_dump_json()}"
    expected = json.dumps({"params": params, "inputs": {}}, sort_keys=True)
    assert section.fingerprint == hashlib.sha256(expected.encode()).hexdigest()


def test_stage_lineage_records_the_stages_own_parameters(tmp_path):
    path = tmp_path / "documents.parquet"
    path.write_bytes(b"not parquet at all")
    with pytest.raises(PipelineError, match="not a readable Parquet file"):
        tables.stage_lineage(ClusterConfig(), documents=path)
    frame = make.clusters(["p"], [0])
    tables.write_table(frame, path, schemas.CLUSTERS, tables.make_lineage("documents", {}))
    one = tables.stage_lineage(ClusterConfig(random_state=1), documents=path)
    two = tables.stage_lineage(ClusterConfig(random_state=2), documents=path)
    assert one.inputs == two.inputs and one.fingerprint != two.fingerprint
    with pytest.raises(PipelineError, match=r"missing\.parquet: input table not found"):
        tables.read_lineage(tmp_path / "missing.parquet")


def test_join_papers_refuses_a_paper_clustered_twice():
    documents = pd.DataFrame({"doc_id": ["p1", "p2"], "abstract": ["a", "b"]})
    clusters = pd.DataFrame({"doc_id": ["p1", "p1"], "topic": [0, 1]})
    with pytest.raises(Exception, match="not unique|one-to-one|different papers"):
        tables.join_papers(documents, clusters)
    with pytest.raises(PipelineError) as info:
        tables.join_papers(documents, clusters.assign(doc_id=["p1", "p3"]))
    assert str(info.value) == "clusters do not match documents (different papers): rerun cluster"


@pytest.mark.parametrize(
    "column",
    [
        pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(8, dtype=np.float64)), 4),
        pa.array([[0.0] * 4, [0.0] * 4], type=pa.list_(pa.float32())),
    ],
    ids=["float64", "not-fixed-width"],
)
def test_read_embeddings_refuses_other_layouts(tmp_path, column):
    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"doc_id": ["a", "b"], "embedding": column}), path)
    with pytest.raises(PipelineError, match="'embedding' must be a fixed-width float32 list"):
        tables.read_embeddings(path)


def test_embeddings_are_written_as_float32_with_string_ids(tmp_path):
    path = tmp_path / "e.parquet"
    with pytest.raises(PipelineError, match=r"e\.parquet: embeddings table not found"):
        tables.read_embeddings(path)
    tables.write_embeddings(["a", "b"], np.arange(6, dtype=np.float64).reshape(2, 3), path)
    schema = pq.read_schema(path)
    assert schema.field("doc_id").type == pa.string()
    assert schema.field("embedding").type == pa.list_(pa.float32(), 3)
    ids, vectors = tables.read_embeddings(path, width=3)
    assert ids == ["a", "b"] and vectors.tolist() == [[0, 1, 2], [3, 4, 5]]
    tables.write_embeddings([], np.zeros((0, 3), dtype=np.float32), path)  # no papers
    assert tables.read_embeddings(path)[0] == []


def test_a_stage_reads_only_the_columns_and_papers_it_asks_for(tmp_path):
    documents = make.documents(
        [f"abstract {i}" for i in range(5)], titles=[f"T{i}" for i in range(5)]
    )
    path = tmp_path / "documents.parquet"
    tables.write_table(documents, path, schemas.DOCUMENTS)
    wanted = {documents["doc_id"][3], documents["doc_id"][1]}
    some = tables.read_table(path, schemas.DOCUMENTS, ["doc_id", "venue"], doc_ids=wanted)
    assert list(some.columns) == ["doc_id", "venue"]
    assert some["doc_id"].tolist() == documents["doc_id"][[1, 3]].tolist()  # the file's order
    assert tables.read_table(path, schemas.DOCUMENTS, doc_ids=set()).empty
    pq.write_table(pa.Table.from_pandas(documents.drop(columns="url")), path)
    with pytest.raises(PipelineError, match=r"missing column\(s\) \['url'\]"):
        tables.read_table(path, schemas.DOCUMENTS, ["doc_id"])  # the whole file is checked

    vectors = np.arange(15, dtype=np.float32).reshape(5, 3)
    embeddings = tmp_path / "embeddings.parquet"
    pq.write_table(  # several record batches, as a large table has
        pa.Table.from_batches(
            [
                pa.record_batch(
                    {
                        "doc_id": documents["doc_id"][i : i + 2].tolist(),
                        "embedding": pa.FixedSizeListArray.from_arrays(
                            pa.array(vectors[i : i + 2].ravel()), 3
                        ),
                    }
                )
                for i in (0, 2, 4)
            ]
        ),
        embeddings,
        row_group_size=2,
    )
    ids, read = tables.read_embeddings(embeddings, width=3)
    assert ids == documents["doc_id"].tolist() and np.array_equal(read, vectors)
    ids, read = tables.read_embeddings(embeddings, doc_ids=wanted)
    assert ids == documents["doc_id"][[1, 3]].tolist() and np.array_equal(read, vectors[[1, 3]])


def test_join_papers_needs_no_text_column():
    documents = pd.DataFrame({"doc_id": ["p1", "p2"], "venue": ["ICML", None]})
    clusters = pd.DataFrame({"doc_id": ["p2", "p1"], "topic": [0, 1]})
    merged = tables.join_papers(documents, clusters)
    assert merged.columns.tolist() == ["doc_id", "topic", "venue"]
    assert merged["venue"].isna().tolist() == [True, False] and merged["venue"][1] == "ICML"
    with pytest.raises(PipelineError, match="different papers"):
        tables.join_papers(documents, clusters.assign(doc_id=["p2", "p9"]))


def test_written_tables_hold_no_pandas_index_and_errors_name_the_file(tmp_path):
    frame = make.clusters(["p"], [0]).set_axis([7])  # an index of its own
    path = tmp_path / "c.parquet"
    tables.write_table(frame, path, schemas.CLUSTERS)
    assert pq.read_schema(path).names == schemas.CLUSTERS.columns
    with pytest.raises(PipelineError, match=r"c\.parquet: cannot write clusters table \("):
        tables.write_table(frame.assign(topic=["not a number"]), path, schemas.CLUSTERS)


# ---------------------------------------------------------------- CSV tables and notes

DOCS = make.documents(["first abstract text", "second abstract"], titles=["A title", None])


def test_write_csv_writes_the_columns_then_the_prefixed_ones_as_utf8(tmp_path):
    frame = pd.DataFrame(
        {"Topic": [-1, 0], "Name": ["café", "b"], "Representation": [["x", "y"], []]}
    )
    frame["share_ICML"] = [0.5, 0.25]
    path = tmp_path / "deeper" / "t.csv"
    csv_files.write_csv(frame, path, ("Topic", "Name", "Representation"), more_prefix="share_")
    assert (
        path.read_bytes()
        == (
            "Topic,Name,Representation,share_ICML\n"
            '-1,"café","[\'x\', \'y\']",0.5\n0,"b","[]",0.25\n'
        ).encode()
    )
    back = pd.read_csv(path)  # text quoted, numbers not: pandas reads back what was written
    assert back["Name"].tolist() == ["café", "b"] and back["share_ICML"].tolist() == [0.5, 0.25]
    assert os.listdir(path.parent) == ["t.csv"]  # atomic: no temporary file left
    csv_files.write_csv(frame.iloc[:, :3], path, ("Topic", "Name", "Representation"))
    assert path.read_text(encoding="utf-8").splitlines()[0] == "Topic,Name,Representation"


@pytest.mark.parametrize(
    ("columns", "prefix"),
    [
        (["Name", "Topic"], None),  # the expected columns in another order
        (["Topic"], None),  # one missing
        (["Topic", "Name", "share_ICML"], None),  # more columns, but no prefix allowed
        (["Topic", "Name", "venue"], "share_"),  # more columns without the prefix
    ],
)
def test_write_csv_refuses_other_columns_naming_the_file_and_both_lists(tmp_path, columns, prefix):
    frame = pd.DataFrame({name: [1] for name in columns})
    path = tmp_path / "t.csv"
    path.write_text("previous", encoding="utf-8")
    expected = f"{path}: columns {columns}, expected ['Topic', 'Name']"
    with pytest.raises(PipelineError) as caught:
        csv_files.write_csv(frame, path, ("Topic", "Name"), more_prefix=prefix)
    assert str(caught.value) == expected
    assert path.read_text(encoding="utf-8") == "previous"


def test_notes_round_trip_as_sorted_json_beside_lineage_and_pandas_metadata(tmp_path):
    lineage = tables.make_lineage("params", {"b.txt": "2" * 64, "a.txt": "1" * 64})
    path = tmp_path / "d.parquet"
    notes = {"z_last": "1", "a_first": "two"}
    tables.write_table(DOCS, path, schemas.DOCUMENTS, lineage, notes=notes)
    assert tables.read_notes(path) == notes
    metadata = pq.read_schema(path).metadata
    assert metadata[tables.NOTES_KEY] == b'{"a_first": "two", "z_last": "1"}'
    assert metadata[tables.LINEAGE_KEY] == json.dumps(
        {"fingerprint": lineage.fingerprint, "inputs": lineage.inputs}, sort_keys=True
    ).encode("utf-8")
    assert b"pandas" in metadata  # what pyarrow records is kept
    tables.write_table(DOCS, path, schemas.DOCUMENTS, notes={})
    assert set(pq.read_schema(path).metadata) == {b"pandas"}  # no lineage, no empty notes
    assert tables.read_notes(path) == {}
    tables.write_embeddings(["p1"], np.ones((1, 2)), path, notes={"encoder": "e"})
    assert tables.read_notes(path) == {"encoder": "e"}


@pytest.mark.parametrize(
    ("stored", "expected"),
    [(b'["a list"]', {}), (b'{"k": "v"}', {"k": "v"}), (None, {})],
)
def test_read_notes_takes_only_a_json_object(tmp_path, stored, expected):
    path = tmp_path / "n.parquet"
    table = pa.table({"a": [1]})
    if stored is not None:
        table = table.replace_schema_metadata({tables.NOTES_KEY: stored})
    pq.write_table(table, path)
    assert tables.read_notes(path) == expected


def test_read_notes_errors_name_the_file_and_the_table(tmp_path):
    path = tmp_path / "n.parquet"
    with pytest.raises(PipelineError) as caught:
        tables.read_notes(path, "clusters")
    assert str(caught.value) == f"{path}: clusters table not found (run the earlier stage first)"
    with pytest.raises(PipelineError, match=r"n\.parquet: input table not found"):
        tables.read_notes(path)
    table = pa.table({"a": [1]}).replace_schema_metadata({tables.NOTES_KEY: b"{not json"})
    pq.write_table(table, path)
    with pytest.raises(PipelineError) as caught:
        tables.read_notes(path)
    assert str(caught.value) == f"{path}: unreadable notes in the file's metadata: rerun make"

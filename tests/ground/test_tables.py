"""Stage tables: schema checks on write and read, atomic writes, embeddings, JSON figures,
the documents/clusters join and lineage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import schemas, tables
from pipeline.config import ClusterConfig, LabelConfig
from pipeline.errors import PipelineError
from tests.support import tables as make


def _documents(**overrides) -> pd.DataFrame:
    """Two papers, the second a workshop's without a year or title; `overrides` replace columns
    after the table is built (a bad table on purpose)."""
    frame = make.documents(
        ["first abstract text", "second abstract text"],
        doc_ids=["p1", "p2"],
        venues=["ICML", "ICLR Workshop"],
        conferences=["ICML", "ICLR"],
        tracks=["Oral", "Workshop"],
        years=[2025, None],
        titles=["A title", None],
        sources=["a.txt:3", "b.csv:row 1"],
        source_ids=[None, "x-1"],
    )
    for key, value in overrides.items():
        frame[key] = value
    return frame


def _topics(**extra) -> pd.DataFrame:
    frame = make.topics(
        [-1, 0],
        labels=["Unassigned", "graphs / sparse"],
        terms=[["a", "b"], ["graphs", "sparse"]],
        term_weights=[[0.2, 0.1], [0.3, 0.05]],
        sizes=[3, 5],
        representative_docs=[[], ["p2", "p1"]],
    )
    for key, value in extra.items():
        frame[key] = value
    return frame


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        pytest.param(
            lambda f: f.drop(columns=["abstract"]), "missing column(s) ['abstract']", id="missing"
        ),
        pytest.param(lambda f: f.assign(score=1.0), "unexpected column(s) ['score']", id="extra"),
        pytest.param(
            lambda f: f.drop(columns=["url", "title"]).assign(count_ICML=1),
            "missing column(s) ['title', 'url'] and unexpected column(s) ['count_ICML']",
            id="both",
        ),
    ],
)
def test_write_table_checks_columns(tmp_path, mutate, expected):
    path = tmp_path / "documents.parquet"
    with pytest.raises(PipelineError) as info:
        tables.write_table(mutate(_documents()), path, schemas.DOCUMENTS)
    assert str(info.value) == f"{path}: documents table has {expected}"
    assert not path.exists()


def test_write_table_rejects_nulls_in_required_column(tmp_path):
    path = tmp_path / "documents.parquet"
    with pytest.raises(PipelineError, match="documents column 'venue' has missing values"):
        tables.write_table(_documents(venue=["ICML", None]), path, schemas.DOCUMENTS)
    assert not path.exists()


def test_documents_round_trip_keeps_nullable_text_as_none(tmp_path):
    path = tmp_path / "documents.parquet"
    frame = _documents()
    tables.write_table(frame[frame.columns[::-1]], path, schemas.DOCUMENTS)  # any column order
    back = tables.read_table(path, schemas.DOCUMENTS)
    assert list(back.columns) == schemas.DOCUMENTS.columns
    assert back["title"].tolist() == ["A title", None]
    assert back["source_id"].tolist() == [None, "x-1"]
    assert back["url"].tolist() == [None, None]
    assert back["abstract"].tolist() == frame["abstract"].tolist()
    assert back["year"].iloc[0] == 2025 and pd.isna(back["year"].iloc[1])


def _write_extra_column(path):
    _documents(score=[1.0, 2.0]).to_parquet(path)


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        pytest.param("missing.parquet", None, "documents table not found", id="missing"),
        pytest.param("sub/missing.parquet", None, "documents table not found", id="missing-dir"),
        pytest.param(
            "x.parquet", _write_extra_column, "unexpected column(s) ['score']", id="extra"
        ),
        pytest.param(
            "x.parquet", lambda p: p.write_bytes(b"junk"), "not a readable Parquet file", id="junk"
        ),
    ],
)
def test_read_table_errors_name_the_file(tmp_path, name, make, expected):
    path = tmp_path / name
    if make:
        make(path)
    with pytest.raises(PipelineError) as info:
        tables.read_table(path, schemas.DOCUMENTS)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_successful_write_leaves_no_temporary_files(tmp_path):
    tables.write_table(_documents(), tmp_path / "documents.parquet", schemas.DOCUMENTS)
    tables.write_embeddings(["p1"], np.ones((1, 2)), tmp_path / "embeddings.parquet")
    tables.write_text(tmp_path / "vars.mk", "OUT := x\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "documents.parquet",
        "embeddings.parquet",
        "vars.mk",
    ]


def test_failed_write_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "documents.parquet"
    tables.write_table(_documents(), path, schemas.DOCUMENTS)
    before = path.read_bytes()

    def crash(table, where, **options):
        with open(where, "wb") as handle:
            handle.write(b"PAR1 half written")
        raise OSError("disk full")

    monkeypatch.setattr(tables.pq, "write_table", crash)
    with pytest.raises(OSError, match="disk full"):
        tables.write_table(_documents(venue=["X", "Y"]), path, schemas.DOCUMENTS)
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []
    monkeypatch.undo()
    assert tables.read_table(path, schemas.DOCUMENTS)["venue"].tolist() == ["ICML", "ICLR Workshop"]


def test_embeddings_round_trip_exactly(tmp_path):
    path = tmp_path / "embeddings.parquet"
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((4, 3)).astype(np.float32)
    vectors[0, 0] = np.float32(0.1)  # not exactly representable: must survive bit-for-bit
    tables.write_embeddings(["a", "b", "c", "d"], vectors, path)
    ids, back = tables.read_embeddings(path, width=3)
    assert ids == ["a", "b", "c", "d"]
    assert back.dtype == np.float32
    assert back.shape == (4, 3)
    assert np.array_equal(back, vectors)


def test_read_embeddings_checks_width_and_layout(tmp_path):
    path = tmp_path / "embeddings.parquet"
    tables.write_embeddings(["a", "b"], np.zeros((2, 3), dtype=np.float32), path)
    with pytest.raises(PipelineError, match="embeddings are 3 wide, expected 384") as info:
        tables.read_embeddings(path, width=384)
    assert str(info.value).startswith(str(path))
    assert tables.read_embeddings(path)[1].shape == (2, 3)
    pd.DataFrame({"doc_id": ["a"], "embedding": [[1.0, 2.0]]}).to_parquet(path)  # variable list
    with pytest.raises(PipelineError, match="fixed-width float32 list"):
        tables.read_embeddings(path)
    tables.write_table(_documents(), path, schemas.DOCUMENTS)
    with pytest.raises(PipelineError, match=r"must have columns \['doc_id', 'embedding'\]"):
        tables.read_embeddings(path)


@pytest.mark.parametrize(
    ("ids", "shape"),
    [(["a", "b"], (3, 4)), (["a", "b"], (2,)), (["a"], (1, 2, 2))],
)
def test_write_embeddings_rejects_mismatched_shapes(tmp_path, ids, shape):
    path = tmp_path / "embeddings.parquet"
    with pytest.raises(PipelineError, match="doc_ids but embedding matrix of shape"):
        tables.write_embeddings(ids, np.zeros(shape), path)
    assert not path.exists()


@pytest.mark.parametrize("extra", ["count_ICML", "theme_label", "share_ICML"])
def test_topic_schema_is_fixed(tmp_path, extra):
    path = tmp_path / "topics.parquet"
    tables.write_table(_topics(), path, schemas.TOPICS)
    back = tables.read_table(path, schemas.TOPICS)
    assert [list(t) for t in back["terms"]] == [["a", "b"], ["graphs", "sparse"]]
    assert [list(d) for d in back["representative_docs"]] == [[], ["p2", "p1"]]
    with pytest.raises(PipelineError, match=rf"unexpected column\(s\) \['{extra}'\]"):
        tables.write_table(_topics(**{extra: [1, 2]}), path, schemas.TOPICS)
    with pytest.raises(PipelineError, match=r"missing column\(s\) \['theme'\]"):
        tables.write_table(_topics().drop(columns=["theme"]), path, schemas.TOPICS)


def _clusters(doc_ids=("p1", "p2")) -> pd.DataFrame:
    return make.clusters(doc_ids, [0] * len(doc_ids), y=1.0, raw_outlier=False, similarity=0.5)


def test_join_papers_keeps_clusters_order_and_refuses_other_papers():
    documents = _documents()
    joined = tables.join_papers(documents, _clusters(("p2", "p1")))
    assert joined["doc_id"].tolist() == ["p2", "p1"]
    assert joined["abstract"].tolist() == ["second abstract text", "first abstract text"]
    for doc_ids in (("p1",), ("p1", "p3"), ("p1", "p2", "p3")):
        with pytest.raises(PipelineError, match="clusters do not match documents"):
            tables.join_papers(documents, _clusters(doc_ids))


def test_read_embeddings_checks_they_are_the_documents_papers(tmp_path):
    path = tmp_path / "embeddings.parquet"
    tables.write_embeddings(["p2", "p1"], np.zeros((2, 3), dtype=np.float32), path)
    with pytest.raises(PipelineError, match="embeddings do not match documents") as info:
        tables.read_embeddings(path, documents=_documents())
    assert str(info.value).startswith(str(path))
    tables.write_embeddings(["p1", "p2"], np.zeros((2, 3), dtype=np.float32), path)
    assert tables.read_embeddings(path, documents=_documents())[0] == ["p1", "p2"]


def test_json_figures_round_trip_and_errors_name_the_file(tmp_path):
    path = tmp_path / "metrics.json"
    tables.write_json({"topics": 3, "npmi_mean": None}, path)
    assert tables.read_json(path, "metrics") == {"topics": 3, "npmi_mean": None}
    with pytest.raises(ValueError):
        tables.write_json({"npmi_mean": float("nan")}, path)
    assert tables.read_json(path, "metrics")["topics"] == 3
    for content, expected in (("{oops", "not readable JSON"), ("[1, 2]", "a JSON object")):
        path.write_text(content)
        with pytest.raises(PipelineError, match=expected) as info:
            tables.read_json(path, "metrics")
        assert str(info.value).startswith(f"{path}: ")
    with pytest.raises(PipelineError, match="metrics not found"):
        tables.read_json(tmp_path / "missing.json", "metrics")


def test_stale_temporary_files_of_a_killed_write_are_swept(tmp_path):
    path = tmp_path / "documents.parquet"
    (tmp_path / ".documents.parquet.abc123.tmp").write_bytes(b"PAR1 torn")  # a SIGKILLed write
    (tmp_path / ".topics.parquet.xyz.tmp").write_bytes(b"another target's")
    tables.write_table(_documents(), path, schemas.DOCUMENTS)
    assert _leftovers(tmp_path) == [".topics.parquet.xyz.tmp"]


# ---------------------------------------------------------------- lineage


def test_lineage_round_trips_in_parquet_metadata(tmp_path):
    lineage = tables.make_lineage("params", {"a.txt": "1" * 64})
    tables.write_table(_documents(), tmp_path / "d.parquet", schemas.DOCUMENTS, lineage)
    tables.write_embeddings(["p1"], np.ones((1, 2)), tmp_path / "e.parquet", lineage)
    assert tables.read_lineage(tmp_path / "d.parquet") == lineage
    assert tables.read_lineage(tmp_path / "e.parquet") == lineage
    assert tables.read_table(tmp_path / "d.parquet", schemas.DOCUMENTS)["doc_id"].tolist() == [
        "p1",
        "p2",
    ]
    tables.write_table(_documents(), tmp_path / "plain.parquet", schemas.DOCUMENTS)
    with pytest.raises(PipelineError) as info:
        tables.read_lineage(tmp_path / "plain.parquet", "documents")
    assert str(info.value) == (
        f"{tmp_path / 'plain.parquet'}: the documents table records no lineage (written by hand "
        "or by an older version): rerun make"
    )


def test_fingerprint_depends_on_params_and_inputs():
    base = tables.make_lineage(LabelConfig(), {"documents": "a"})
    assert base == tables.make_lineage(LabelConfig(), {"documents": "a"})
    other_params = tables.make_lineage(LabelConfig(n_terms=5), {"documents": "a"})
    assert base.fingerprint != other_params.fingerprint
    assert base.fingerprint != tables.make_lineage(LabelConfig(), {}).fingerprint
    assert base.fingerprint != tables.make_lineage(LabelConfig(), {"documents": "b"}).fingerprint
    assert base.inputs == {"documents": "a"}


def test_stage_lineage_refuses_tables_from_different_builds(tmp_path):
    docs_a, docs_b = tmp_path / "a" / "documents.parquet", tmp_path / "b" / "documents.parquet"
    tables.write_table(_documents(), docs_a, schemas.DOCUMENTS, tables.make_lineage("A", {}))
    tables.write_table(_documents(), docs_b, schemas.DOCUMENTS, tables.make_lineage("B", {}))
    clusters = tmp_path / "a" / "clusters.parquet"
    frame = _clusters()
    built = tables.stage_lineage(ClusterConfig(), documents=docs_a)
    assert built.inputs == {"documents": tables.read_lineage(docs_a).fingerprint}
    tables.write_table(frame, clusters, schemas.CLUSTERS, built)

    label = tables.stage_lineage(LabelConfig(), documents=docs_a, clusters=clusters)
    assert label.inputs == {"documents": built.inputs["documents"], "clusters": built.fingerprint}
    with pytest.raises(PipelineError) as info:
        tables.stage_lineage(LabelConfig(), documents=docs_b, clusters=clusters)
    assert str(info.value) == f"{clusters} was built from a different {docs_b}: rerun make"


def test_stage_lineage_refuses_a_table_without_lineage(tmp_path):
    """A table written by hand (or by a version before lineage) cannot show which build it
    belongs to: a stage refuses it, naming it, even beside tables that have lineage."""
    docs, clusters = tmp_path / "documents.parquet", tmp_path / "clusters.parquet"
    tables.write_table(_documents(), docs, schemas.DOCUMENTS, tables.make_lineage("A", {}))
    tables.write_table(_clusters(), clusters, schemas.CLUSTERS)  # no lineage: hand-made
    with pytest.raises(PipelineError) as info:
        tables.stage_lineage(LabelConfig(), documents=docs, clusters=clusters)
    assert str(info.value).startswith(f"{clusters}: the clusters table records no lineage")
    assert str(info.value).endswith(": rerun make") and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        pytest.param(None, "documents table not found", id="missing"),
        pytest.param(lambda p: p.write_bytes(b"junk"), "not a readable Parquet file", id="junk"),
    ],
)
def test_stage_lineage_errors_name_the_file(tmp_path, make, expected):
    path = tmp_path / "documents.parquet"
    if make:
        make(path)
    with pytest.raises(PipelineError, match=expected) as info:
        tables.stage_lineage(LabelConfig(), documents=path)
    assert str(info.value).startswith(f"{path}: ")


def test_unreadable_lineage_metadata_is_a_clear_error(tmp_path):
    path = tmp_path / "documents.parquet"
    table = pa.table({"doc_id": ["p1"]}).replace_schema_metadata({tables.LINEAGE_KEY: b"{oops"})
    pq.write_table(table, path)
    with pytest.raises(PipelineError, match="unreadable lineage"):
        tables.read_lineage(path)

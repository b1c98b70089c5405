"""topic_info.csv and document_info.csv: BERTopic 0.17.4's get_topic_info() and
get_document_info() columns (from a real BERTopic model: the build's own export), then ours;
pandas code written against BERTopic reads them unchanged; rejected.csv is the ledger."""

from __future__ import annotations

import ast
import logging

import pandas as pd
import pytest

from pipeline import csv_files, schemas
from pipeline.config import CompareConfig
from pipeline.errors import PipelineError
from pipeline.stages import compare
from pipeline.stages import csv as csv_tables
from tests.support import tables as make
from tests.support.build_folder import write_build
from tests.support.runs import run_main


def _frames() -> dict[str, pd.DataFrame]:
    """Five papers: topic 0 (p0, p1), topic 1 (p2, p3), one unassigned (p4); two venues."""
    n = 5
    documents = make.documents(
        [f'Abstract {i}, with a comma and "quotes".' for i in range(n)],
        venues=["ICML", "ICLR", "ICML", "ICML", "ICLR"],
        years=[2023, 2023, None, 2022, 2023],
        titles=["Optimal transport", None, "Graphs", "Message passing", "Noise"],
        sources=[f"a.csv:row {i}" for i in range(n)],
        urls=["https://x.org/0", None, None, None, None],
    )
    clusters = make.clusters(documents["doc_id"], [0, 0, 1, 1, -1], similarity=0.5)
    topics = make.topics(
        [0, 1, -1],  # as written: -1 last
        labels=["optimal transport", "graph, message passing", "Unassigned"],
        terms=[["optimal transport", "wasserstein"], ["graph", "message passing"], []],
        term_weights=[[0.3, 0.2], [0.25, 0.1], []],
        sizes=[2, 2, 1],
        themes=[0, 0, -1],
        representative_docs=[["p1"], ["p2", "p3"], []],
    )
    themes = make.themes_of(topics, labels={0: "geometry, graphs"}, terms={0: ["geometry"]})
    venue_topics = compare.make_venue_topics(documents, clusters, topics, themes, CompareConfig())
    return {
        "documents": documents,
        "clusters": clusters,
        "topics": topics,
        "themes": themes,
        "venue_topics": venue_topics,
    }


def test_topic_info_has_bertopics_columns_then_theme_and_venue_shares():
    f = _frames()
    info = csv_tables.make_topic_info(f["documents"], f["topics"], f["themes"], f["venue_topics"])
    assert list(info.columns) == [*schemas.TOPIC_INFO, "share_ICLR", "share_ICML"]
    assert info["Topic"].tolist() == [-1, 0, 1]  # sorted as BERTopic sorts: -1 first
    assert info["Count"].tolist() == [1, 2, 2]
    assert info["Name"].tolist() == [
        "-1_",
        "0_optimal transport_wasserstein",
        "1_graph_message passing",
    ]
    assert info["CustomName"].tolist() == [
        "Unassigned",
        "optimal transport",
        "graph, message passing",
    ]
    assert info["Representation"][1] == ["optimal transport", "wasserstein"]
    assert info["Representative_Docs"][1] == ['Abstract 1, with a comma and "quotes".']
    assert info["Representative_Docs"][2][0].startswith("Graphs. Abstract 2")  # title. abstract
    assert info["theme_label"].tolist() == ["Unassigned", "geometry, graphs", "geometry, graphs"]
    # the shares are compare's: ICML has 3 papers, topic 1 holds 2 of them
    assert info["share_ICML"].tolist() == pytest.approx([0.0, 1 / 3, 2 / 3])
    assert info["share_ICLR"].tolist() == pytest.approx([0.5, 0.5, 0.0])


def test_document_info_has_bertopics_columns_then_ours():
    f = _frames()
    info = csv_tables.make_document_info(f["documents"], f["clusters"], f["topics"])
    assert list(info.columns) == list(schemas.DOCUMENT_INFO)
    assert info["Topic"].tolist() == [0, 0, 1, 1, -1]
    assert info["Representative_document"].tolist() == [False, True, True, True, False]
    assert info["Top_n_words"][0] == "optimal transport - wasserstein"
    assert info["Name"][4] == "-1_" and info["CustomName"][4] == "Unassigned"
    assert info["Representation"][4] == [] and info["Representative_Docs"][4] == []
    assert info["Document"][3] == 'Message passing. Abstract 3, with a comma and "quotes".'
    assert info["year"].isna().tolist() == [False, False, True, False, False]


def test_write_csv_refuses_other_columns(tmp_path):
    frame = pd.DataFrame({"Topic": [0], "Count": [1]})
    with pytest.raises(PipelineError, match="expected"):
        csv_files.write_csv(frame, tmp_path / "x.csv", ("Count", "Topic"))
    with pytest.raises(PipelineError, match="expected"):
        csv_files.write_csv(frame, tmp_path / "x.csv", ("Topic",))  # Count is not share_*
    csv_files.write_csv(frame, tmp_path / "x.csv", ("Topic",), "Co")
    assert (tmp_path / "x.csv").read_text(encoding="utf-8") == "Topic,Count\n0,1\n"


def _stage(tmp_path, caplog) -> dict:
    """The csv stage run from its tables on disk, as Make runs it."""
    ledger = pd.DataFrame(
        [
            {
                "source": "a.csv:row 9",
                "file": "a.csv",
                "record": "row 9",
                "reason": "abstract is empty",
                "text": "",
                "duplicate_of": None,
            }
        ]
    )
    paths = write_build(tmp_path, **_frames(), rejected=ledger)
    out = {
        name: tmp_path / file
        for name, file in (
            ("topic_info", "topic_info.csv"),
            ("document_info", "document_info.csv"),
            ("rejected_csv", "rejected.csv"),
        )
    }
    args = [f"--{k.replace('_', '-')}={v}" for k, v in {**paths, **out}.items()]
    with caplog.at_level(logging.INFO, "pipeline"):
        result = run_main("csv", *args)
    assert result.returncode == 0, result.stderr
    assert "wrote topic_info.csv (3 topics), document_info.csv (5 papers)" in caplog.text
    return out


def test_pandas_code_written_for_bertopic_reads_the_files_unchanged(tmp_path, caplog):
    out = _stage(tmp_path, caplog)
    # as in BERTopic's docs and tutorials, on get_topic_info() / get_document_info() frames
    topic_info = pd.read_csv(out["topic_info"])
    named = topic_info[topic_info.Topic != -1]
    assert named.sort_values("Count", ascending=False).head(1).CustomName.item() in {
        "optimal transport",
        "graph, message passing",
    }
    words = topic_info.set_index("Topic").Representation.apply(ast.literal_eval)
    assert words[0] == ["optimal transport", "wasserstein"] and words[-1] == []
    docs = ast.literal_eval(topic_info.loc[topic_info.Topic == 1, "Representative_Docs"].item())
    assert docs[0].startswith("Graphs. Abstract 2")
    document_info = pd.read_csv(out["document_info"])
    assert document_info.Representative_document.dtype == bool
    representative = document_info[document_info.Representative_document]
    assert representative.doc_id.tolist() == ["p1", "p2", "p3"]
    sizes = document_info.groupby("Topic").Document.count()
    assert sizes.to_dict() == topic_info.set_index("Topic").Count.to_dict()
    assert (
        document_info.loc[0, "Document"]
        == 'Optimal transport. Abstract 0, with a comma and "quotes".'
    )
    merged = document_info.merge(topic_info[["Topic", "Count"]], on="Topic")
    assert len(merged) == 5
    ledger = pd.read_csv(out["rejected_csv"])
    assert list(ledger.columns) == schemas.REJECTED.columns
    assert ledger.reason.tolist() == ["abstract is empty"]


@pytest.mark.slow
def test_columns_and_values_are_bertopics_own_for_the_build(bundled_build):
    """BERTopic 0.17.4's own get_topic_info() and get_document_info(docs), on the build's
    BERTopic model (its export, loaded by BERTopic.load): the same columns first, the same
    values in them (its representative docs are not saved with a model)."""
    from bertopic import BERTopic

    model = BERTopic.load(str(bundled_build / "bertopic"))
    theirs = model.get_topic_info()
    ours = pd.read_csv(bundled_build / "topic_info.csv")
    assert tuple(theirs.columns) == schemas.BERTOPIC_TOPIC_INFO
    assert list(ours.columns[: len(theirs.columns)]) == list(theirs.columns)
    for column in ("Topic", "Count", "Name", "CustomName"):
        assert ours[column].tolist() == theirs[column].tolist(), column
    representation = ours.Representation.apply(ast.literal_eval)
    named = ours.Topic != -1
    assert representation[named].tolist() == theirs.Representation[named].tolist()
    documents = pd.read_csv(bundled_build / "document_info.csv")
    assert ours.Count.sum() == len(documents)
    their_docs = model.get_document_info(documents.Document.tolist())
    assert tuple(their_docs.columns) == schemas.BERTOPIC_DOCUMENT_INFO
    assert list(documents.columns[: len(their_docs.columns)]) == list(their_docs.columns)
    for column in ("Document", "Topic", "Name", "CustomName"):
        assert documents[column].tolist() == their_docs[column].tolist(), column
    top_words = documents.Topic != -1
    assert documents.Top_n_words[top_words].tolist() == their_docs.Top_n_words[top_words].tolist()
    assert documents.Representative_document.sum() > 0
    shares = [c for c in ours.columns if c.startswith("share_")]
    assert shares == ["share_ICLR", "share_ICML"]
    for column in shares:  # a venue's shares add up to its papers
        assert ours[column].sum() == pytest.approx(1.0)

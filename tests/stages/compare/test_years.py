"""venue_years.parquet: the venue comparison of each year's papers alone, computed exactly as
venue_topics' (the same log-odds z, flags, shares), with the papers without a year left out."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.config import CompareConfig
from pipeline.stages import compare
from pipeline.stages.compare import make_venue_topics, make_venue_years
from tests.support.build_folder import write_build
from tests.support.compare_inputs import compare_inputs, write_compare_inputs


def test_each_year_is_venue_topics_of_that_years_papers():
    n = 60
    years = [2022 - (i // 2) % 3 for i in range(n)]  # 2022 first: the table is by year
    documents, clusters, topics, themes = compare_inputs(["ICML", "ICLR"] * 30, years)
    clusters.loc[documents["year"] == 2021, "topic"] = np.where(
        documents.loc[documents["year"] == 2021, "venue"] == "ICML", 0, 1
    ).astype(np.int32)  # 2021: topic 0 all ICML, topic 1 all ICLR
    config = CompareConfig(z_threshold=1.5)
    table = make_venue_years(documents, clusters, topics, themes, config)
    assert list(table.columns) == schemas.VENUE_YEARS.columns
    assert list(table["year"].unique()) == [2020, 2021, 2022]
    for year in (2020, 2021, 2022):
        mine = documents["year"] == year
        alone = make_venue_topics(
            documents[mine], clusters[mine.to_numpy()], topics, themes, config
        )
        got = table[table["year"] == year].drop(columns="year")
        got = got.rename(columns={"venue_year_papers": "venue_papers"})[alone.columns]
        listed = got.set_index(["level", "id"]).index.isin(alone.set_index(["level", "id"]).index)
        assert (got.loc[~listed, "count"] == 0).all()  # the groups without papers that year
        got, alone = got[listed].astype({"z": float}), alone.astype({"z": float})
        pd.testing.assert_frame_equal(
            got.reset_index(drop=True), alone.reset_index(drop=True), check_dtype=False
        )
    flagged = table[(table["year"] == 2021) & (table["level"] == "topic")]
    assert flagged.set_index(["id", "venue"]).loc[(0, "ICML"), "flag"] == "over"
    assert flagged.set_index(["id", "venue"]).loc[(0, "ICLR"), "flag"] == "under"
    assert set(table.loc[table["year"] == 2020, "venue_year_papers"]) == {10}


def test_a_topic_absent_in_a_year_is_listed_with_no_papers():
    documents, clusters, topics, themes = compare_inputs(
        ["ICML", "ICLR"] * 6, [2020] * 6 + [2021] * 6
    )
    clusters.loc[6:, "topic"] = np.where(np.arange(6) % 2, 0, -1).astype(
        np.int32
    )  # 2021: no topic 1
    table = make_venue_years(documents, clusters, topics, themes, CompareConfig())
    absent = table[(table["year"] == 2021) & (table["level"] == "topic") & (table["id"] == 1)]
    assert len(absent) == 2 and set(absent["count"]) == {0} and set(absent["share"]) == {0.0}
    assert set(absent["flag"]) == {"none"}
    for (_y, _l, _v), group in table.groupby(["year", "level", "venue"]):
        assert group["share"].sum() == pytest.approx(1.0)


def test_papers_without_a_year_are_left_out_and_a_lone_venue_year_has_no_z():
    years = [2020, None, 2021, None] * 5
    documents, clusters, topics, themes = compare_inputs(
        ["ICML", "ICML", "ICML", "ICLR"] * 5, years
    )
    table = make_venue_years(documents, clusters, topics, themes, CompareConfig())
    topic_rows = table[table["level"] == "topic"]
    assert topic_rows.groupby("year")["count"].sum().to_dict() == {2020: 5, 2021: 5}
    assert set(topic_rows["venue"]) == {"ICML"}  # every ICLR paper lacks a year
    assert topic_rows["z"].isna().all() and set(topic_rows["flag"]) == {"none"}
    none = make_venue_years(*compare_inputs(["ICML"] * 3, [None] * 3), CompareConfig())
    assert none.empty and list(none.columns) == schemas.VENUE_YEARS.columns


def test_run_writes_venue_years_and_says_how_many_papers_had_no_year(tmp_path, caplog):
    paths = write_compare_inputs(tmp_path, ["ICML", "ICLR"] * 10)
    documents = tables.read_table(paths["documents"], schemas.DOCUMENTS)
    documents["year"] = pd.array([2020, 2020, 2021, 2021, None] * 4, dtype="Int32")
    write_build(tmp_path, documents=documents)
    out = tmp_path / "venue_years.parquet"
    with caplog.at_level(logging.INFO, logger="pipeline.compare"):
        compare.run(CompareConfig(), **paths, venue_topics=tmp_path / "vt.parquet", venue_years=out)
    written = tables.read_table(out, schemas.VENUE_YEARS)
    read = {n: tables.read_table(p, getattr(schemas, n.upper())) for n, p in paths.items()}
    expected = make_venue_years(*read.values(), CompareConfig())
    assert written["z"].notna().any()  # both venues each year: compared
    pd.testing.assert_frame_equal(written, expected.astype({"z": float}), check_dtype=False)
    assert tables.read_lineage(out) == tables.stage_lineage(CompareConfig(), **paths)
    notes = [r.getMessage() for r in caplog.records if r.getMessage().startswith("note")]
    assert notes == ["note: 4 paper(s) without a year left out of venue_years"]
    empty = write_compare_inputs(tmp_path / "undated", ["ICML"] * 4)
    documents = tables.read_table(empty["documents"], schemas.DOCUMENTS)
    documents["year"] = pd.array([None] * 4, dtype="Int32")
    write_build(tmp_path / "undated", documents=documents)
    none = tmp_path / "undated" / "venue_years.parquet"
    compare.run(
        CompareConfig(), **empty, venue_topics=tmp_path / "undated" / "v.parquet", venue_years=none
    )
    assert tables.read_table(none, schemas.VENUE_YEARS).empty

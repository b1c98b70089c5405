"""Venues as people write them: one canonical venue however it is spelt, the year found anywhere,
tracks kept and compared as their own group or left out (`ingest.tracks`), the ingest log's
venue table, and abstracts in scripts written without spaces counted sensibly."""

from __future__ import annotations

import datetime
import json
import logging

import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.config import IngestConfig, parse_config
from pipeline.errors import ConfigError
from pipeline.stages import ingest
from pipeline.stages.ingest import RawRecord, make_documents, venue_lines
from pipeline.stages.ingest.readers import parse_seed_text
from pipeline.stages.ingest.venues import VenueNames, is_main_track
from tests.support.ingest_samples import A1, A2, A3, A4
from tests.support.multilingual import CHINESE, JAPANESE

# ---------------------------------------------------------------- the spellings


@pytest.mark.parametrize(
    ("text", "venue", "year", "track"),
    [
        ("icml", "ICML", None, ""),
        ("ICML 2025", "ICML", 2025, ""),
        ("  i c m l  ", "ICML", None, ""),
        ("ICML2025", "ICML", 2025, ""),
        ("  NeurIPS\t 2024 ", "NeurIPS", 2024, ""),
        ("ICML, 2025", "ICML", 2025, ""),
        ("2025 ICML", "ICML", 2025, ""),
        ("ＩＣＭＬ ２０２５", "ICML", 2025, ""),
        ("ICML 2025 Papers", "ICML", 2025, ""),
        ("ICML 2024 Main Conference", "ICML", 2024, ""),
        ("NIPS 2017", "NeurIPS", 2017, ""),
        ("nips", "NeurIPS", None, ""),
        ("NeurIPS'23", "NeurIPS", 2023, ""),
        ("NeurIPS ’99", "NeurIPS", 1999, ""),
        ("AAAI-23", "AAAI", 2023, ""),
        ("IJCAI-22 Demo Track", "IJCAI", 2022, "Demo Track"),
        ("Neural Information Processing Systems 2022", "NeurIPS", 2022, ""),
        ("Advances in Neural Information Processing Systems 36", "NeurIPS", None, ""),
        ("Proceedings of the 40th International Conference on Machine Learning", "ICML", None, ""),
        ("ICML 2025 Spotlight", "ICML", 2025, "Spotlight"),
        ("ICML 2025 (oral)", "ICML", 2025, "oral"),
        ("ICLR 2023 notable top 5%", "ICLR", 2023, "notable top 5%"),
        ("ICLR 2023 Workshop", "ICLR", 2023, "Workshop"),
        ("ICLR Workshop 2023", "ICLR", 2023, "Workshop"),
        ("iclr workshop", "ICLR", None, "workshop"),
        (
            "NeurIPS 2024 (Datasets & Benchmarks Track)",
            "NeurIPS",
            2024,
            "Datasets & Benchmarks Track",
        ),
        ("EMNLP 2023 Findings", "EMNLP", 2023, "Findings"),
        ("aistats 2021", "AISTATS", 2021, ""),
        ("Transactions on Machine Learning Research", "TMLR", None, ""),
        ("", "Unknown", None, ""),
    ],
)
def test_each_spelling_resolves_to_one_venue_year_and_track(text, venue, year, track):
    found = VenueNames().resolve(text)
    assert (found.venue, found.year, found.track) == (venue, year, track)


@pytest.mark.parametrize(
    ("track", "main"),
    [
        ("", True),
        ("Oral", True),
        ("Spotlight", True),
        ("notable top 25%", True),
        ("Poster", True),
        ("Workshop", False),
        ("Datasets & Benchmarks Track", False),
        ("Findings", False),
        ("Workshop on Trustworthy ML", False),
    ],
)
def test_presentation_formats_are_the_main_conference_other_tracks_are_not(track, main):
    assert is_main_track(track) is main


def test_unknown_venues_match_in_any_case_and_spacing_to_the_first_spelling_seen():
    names = VenueNames()
    texts = ["Foo Conf 2021", "FOO CONF", "fooconf 2022", "foo conf Workshop", "Bar"]
    names.seen(texts)
    found = [names.resolve(t) for t in texts]
    assert [v.venue for v in found] == ["Foo Conf", "Foo Conf", "Foo Conf", "Foo Conf", "Bar"]
    assert [v.group for v in found] == ["Foo Conf"] * 3 + ["Foo Conf Workshop", "Bar"]


def test_user_aliases_add_names_of_their_own():
    names = VenueNames({"Neural Info Proc": "neurips", "My Lab Day": "LabDay"})
    assert names.resolve("neural  info proc 2020").venue == "NeurIPS"  # known spelling wins
    assert (names.resolve("my lab day 2021 Demo").group) == "LabDay Demo"


def test_tracks_spelt_differently_are_one_track():
    names = VenueNames()
    first = names.resolve("ICLR 2023 Workshop")
    assert names.resolve("iclr 2024 WORKSHOP").track == first.track == "Workshop"
    assert names.resolve("NeurIPS 2024 (Datasets & Benchmarks Track)").group == (
        "NeurIPS Datasets & Benchmarks Track"
    )


# ---------------------------------------------------------------- make_documents

SPELLINGS = [
    "icml",
    "ICML 2025",
    "ICML 2025 Spotlight",
    "NIPS 2017",
    "NeurIPS'23",
    "ICLR 2023 Workshop",
    "NeurIPS 2024 (Datasets & Benchmarks Track)",
]


def _records(venues: list[str | None], **columns) -> list[RawRecord]:
    return [
        RawRecord(
            source=f"f.csv:row {i + 1}",
            abstract=f"{A1} Paper number {i}.",
            venue=venue,
            file="f.csv",
            **{k: v[i] for k, v in columns.items()},
        )
        for i, venue in enumerate(venues)
    ]


def test_tracks_all_compares_each_track_as_its_own_group():
    docs, rejected = make_documents(_records(SPELLINGS), IngestConfig(tracks="all"))
    assert rejected.empty
    assert docs["venue"].tolist() == [
        "ICML",
        "ICML",
        "ICML",
        "NeurIPS",
        "NeurIPS",
        "ICLR Workshop",
        "NeurIPS Datasets & Benchmarks Track",
    ]
    assert docs["conference"].tolist() == ["ICML"] * 3 + ["NeurIPS"] * 2 + ["ICLR", "NeurIPS"]
    assert docs["track"].tolist() == [
        "",
        "",
        "Spotlight",
        "",
        "",
        "Workshop",
        "Datasets & Benchmarks Track",
    ]
    assert docs["year"].tolist()[1:] == [2025, 2025, 2017, 2023, 2023, 2024]
    assert pd.isna(docs["year"][0])  # kept, with no year


def test_tracks_main_only_leaves_other_tracks_in_the_ledger_with_the_reason():
    docs, rejected = make_documents(_records(SPELLINGS), IngestConfig(tracks="main_only"))
    assert docs["venue"].tolist() == ["ICML"] * 3 + ["NeurIPS"] * 2
    assert docs["track"].tolist() == ["", "", "Spotlight", "", ""]  # a spotlight is main
    assert rejected["source"].tolist() == ["f.csv:row 6", "f.csv:row 7"]
    assert rejected["reason"].tolist() == [
        "track 'Workshop' of ICLR left out (ingest.tracks: main_only)",
        "track 'Datasets & Benchmarks Track' of NeurIPS left out (ingest.tracks: main_only)",
    ]


def test_a_track_column_says_more_than_the_venue_string():
    records = _records(["ICLR 2023", "ICLR 2023", "ICLR 2023 Workshop"], track=["Oral", None, ""])
    docs, _ = make_documents(records, IngestConfig())
    assert docs["venue"].tolist() == ["ICLR", "ICLR", "ICLR Workshop"]
    assert docs["track"].tolist() == ["Oral", "", "Workshop"]
    docs, rejected = make_documents(
        _records(["ICLR 2023"], track=["Tiny Papers"]), IngestConfig(tracks="main_only")
    )
    assert docs.empty and "Tiny Papers" in rejected["reason"][0]


def test_year_from_the_year_column_else_the_venue_string_else_a_date_column():
    dates = [None, None, "2021-05-03", datetime.date(2020, 1, 2), "May 2019", None, "soon"]
    years = [2022, None, None, None, None, None, None]
    venues = ["ICML 2025", "ICML 2025", "ICML", "ICML", "ICML", None, "ICML"]
    docs, _ = make_documents(_records(venues, year=years, date=dates), IngestConfig())
    assert docs["year"].tolist()[:5] == [2022, 2025, 2021, 2020, 2019]
    assert docs["year"][5:].isna().all()


def test_venue_lines_list_every_venue_string_and_what_it_became():
    records = _records([*SPELLINGS, "ICML 2025", None])
    lines = venue_lines(records, IngestConfig(tracks="main_only"))
    assert "venue 'icml' -> ICML (ICML, no year in it): 1 record" in lines
    assert "venue 'ICML 2025' -> ICML (ICML, 2025): 2 records" in lines
    assert "venue 'ICML 2025 Spotlight' -> ICML (ICML, 2025, track 'Spotlight'): 1 record" in lines
    assert 'venue "NeurIPS\'23" -> NeurIPS (NeurIPS, 2023): 1 record' in lines
    assert (
        "venue 'ICLR 2023 Workshop' -> left out, ingest.tracks: main_only "
        "(ICLR, 2023, track 'Workshop'): 1 record"
    ) in lines
    assert "venue (no venue) -> Unknown (Unknown, no year in it): 1 record" in lines
    assert lines[-1] == "venues: 8 venue string(s) -> 3: ICML, NeurIPS, Unknown"
    lines = venue_lines(records, IngestConfig())
    assert (
        "venue 'ICLR 2023 Workshop' -> ICLR Workshop (ICLR, 2023, track 'Workshop'): 1 record"
        in (lines)
    )


def test_run_logs_the_venue_table_and_keeps_every_record(tmp_path, caplog):
    rows = [
        {"abstract": A1, "venue": "icml"},
        {"abstract": A2, "venue": "ICML 2025"},
        {"abstract": A3, "venue": "ICLR 2023 Workshop"},
        {"abstract": A4, "venue": "NeurIPS 2024 (Datasets & Benchmarks Track)"},
    ]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    config = parse_config(
        {"inputs": [str(path)], "output_dir": str(tmp_path), "ingest": {"tracks": "main_only"}}
    )
    out = tmp_path / "out"
    with caplog.at_level(logging.INFO, logger="pipeline.ingest"):
        ingest.run(config.ingest, config.inputs, out / "documents.parquet", out / "r.parquet")
    docs = tables.read_table(out / "documents.parquet", schemas.DOCUMENTS)
    rejected = tables.read_table(out / "r.parquet", schemas.REJECTED)
    assert docs["venue"].tolist() == ["ICML", "ICML"] and len(rejected) == 2
    assert "venue 'icml' -> ICML (ICML, no year in it): 1 record" in caplog.text
    assert "venues: 4 venue string(s) -> 1: ICML" in caplog.text
    assert f"{path}: read 4 = kept 2 + rejected 2" in caplog.text


def test_seed_text_headers_with_tracks_and_short_years():
    abstracts = f"\n\n{A1}\n\n{A2}\n"
    for header, group, year in [
        ("NeurIPS 2024 (Datasets & Benchmarks Track)", "NeurIPS Datasets & Benchmarks Track", 2024),
        ("NeurIPS'23", "NeurIPS", 2023),
        ("ICLR 2023 Workshop Papers", "ICLR Workshop", 2023),
    ]:
        records = parse_seed_text(header + abstracts, "f.txt")
        docs, _ = make_documents(records, IngestConfig())
        assert docs["venue"].tolist() == [group, group] and docs["year"].tolist() == [year] * 2


def test_config_takes_aliases_and_tracks_and_rejects_an_unknown_mode():
    config = parse_config(
        {
            "inputs": ["x.csv"],
            "ingest": {"venue_aliases": {"My Conf": "MC"}, "tracks": "main_only"},
        }
    )
    assert config.ingest.venue_aliases == {"My Conf": "MC"}
    with pytest.raises(ConfigError, match="ingest.tracks"):
        parse_config({"inputs": ["x.csv"], "ingest": {"tracks": "main"}})


# ---------------------------------------------------------------- words in every script


@pytest.mark.parametrize("abstract", [CHINESE[0], JAPANESE[0]], ids=["chinese", "japanese"])
def test_abstracts_in_scripts_without_spaces_are_not_one_word(abstract):
    docs, rejected = make_documents(
        [RawRecord("f.csv:row 1", abstract, venue="ICML 2025")], IngestConfig()
    )
    assert rejected.empty and docs["abstract"].tolist() == [abstract]
    too_short = make_documents(
        [RawRecord("f.csv:row 1", "本文提出方法。", venue="ICML 2025")], IngestConfig()
    )[1]
    assert too_short["reason"].tolist() == [
        "abstract too short (3 words < ingest.min_abstract_words=5)"
    ]

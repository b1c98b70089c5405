"""Stage ingest: input files -> documents.parquet (+ rejected.parquet, the ledger).

Files are read by `readers` (the seed text format, CSV, JSON, JSONL, Parquet), abstracts and
titles repaired by `repair`, venue strings read by `venues` (one canonical venue, a year and a
track). Every record read ends up either as a document or as a ledger row with the reason it
was not kept; the log lists every venue string seen and what it became.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from pipeline import progress, schemas, tables
from pipeline.config import IngestConfig
from pipeline.errors import InputError
from pipeline.stages.ingest import memo as repair_memo
from pipeline.stages.ingest.memo import RepairMemo, Watched
from pipeline.stages.ingest.readers import (
    RawRecord,
    expand_inputs,
    is_missing,
    ledger_row,
    read_file,
)
from pipeline.stages.ingest.repair import UNPRINTABLE, normalise_space, repair_text, vocabulary_of
from pipeline.stages.ingest.venues import YEAR, Venue, VenueNames, is_main_track
from pipeline.text import count_words, has_words

log = logging.getLogger("pipeline.ingest")


def _optional_text(value: object, repair: Callable[[str], str] | None = None) -> str | None:
    """A field's text, or None; repaired like an abstract (by `repair`) where one is given."""
    if is_missing(value):
        return None
    if isinstance(value, float) and value.is_integer():  # ids in a column with gaps: 7.0 -> "7"
        value = int(value)
    if repair is not None:
        return repair(str(value)) or None
    return normalise_space(UNPRINTABLE.sub(" ", str(value))) or None


def _year(value: object) -> int | None:
    if is_missing(value):
        return None
    try:
        year = int(float(str(value).strip()))
    except (ValueError, OverflowError):  # "abc", inf
        return None
    return year if 1900 <= year <= 2100 else None


def _date_year(value: object) -> int | None:
    """The year of a date column's value: a date, a year, or text holding one ('May 2023')."""
    if is_missing(value):
        return None
    if hasattr(value, "year"):  # datetime, date, pandas Timestamp
        return _year(value.year)
    if isinstance(value, int | float):
        return _year(value)
    match = YEAR.search(str(value))
    return _year(match.group("full")) if match and match.group("full") else None


def doc_id_for(abstract: str) -> str:
    """Stable id from the abstract's content: the same paper gets the same id in every run."""
    key = abstract.casefold().encode("utf-8")
    return "p" + hashlib.sha1(key).hexdigest()[:15]


def abstract_problem(abstract: object, repaired: str, config: IngestConfig) -> str | None:
    """Why a record's abstract cannot be kept (`repaired` is its repaired text), or None."""
    if is_missing(abstract):
        return "abstract is missing"
    if not isinstance(abstract, str):
        return f"abstract is not text ({type(abstract).__name__})"
    if not repaired:
        return "abstract is empty"
    if not has_words(repaired, config.min_abstract_words):
        n_words = count_words(repaired)
        return (
            f"abstract too short ({n_words} words < ingest.min_abstract_words="
            f"{config.min_abstract_words})"
        )
    return None


def _venue_text(record: RawRecord, config: IngestConfig) -> str | None:
    return _optional_text(record.venue) or config.venue


VenueKey = tuple[str | None, str | None]  # a record's venue string and track column


def venue_keys(records: list[RawRecord], config: IngestConfig) -> list[VenueKey]:
    """Each record's venue string (or ingest.venue) and track column value, in order."""
    return [(_venue_text(record, config), _optional_text(record.track)) for record in records]


def record_venues(
    records: list[RawRecord], config: IngestConfig, keys: list[VenueKey] | None = None
) -> list[Venue]:
    """What each record's venue string (or ingest.venue) and track column became, in order
    (`keys`: venue_keys', if known); each distinct pair is read once."""
    keys = venue_keys(records, config) if keys is None else keys
    names = VenueNames(config.venue_aliases)
    texts = dict.fromkeys(text for text, _ in keys)
    names.seen([text for text in texts if text])
    resolved = {text: names.resolve(text) for text in texts}
    became: dict[VenueKey, Venue] = {}
    for text, column in dict.fromkeys(keys):
        venue = resolved[text]
        if column:  # a track column says more than the venue string
            track = names.track(column)
            venue = dataclasses.replace(venue, track=track, main=is_main_track(track))
        became[(text, column)] = venue
    return [became[key] for key in keys]


def document_row(
    record: RawRecord, doc_id: str, abstract: str, venue: Venue, repair: Callable[[str], str]
) -> dict:
    """The documents row of a kept record; `venue` is what its venue string became, `repair`
    repairs its title."""
    return {
        "doc_id": doc_id,
        "venue": venue.group,
        "conference": venue.venue,
        "track": venue.track,
        "year": _year(record.year) or venue.year or _date_year(record.date),
        "title": _optional_text(record.title, repair),
        "abstract": abstract,
        "source": record.source,
        "source_id": _optional_text(record.source_id),
        "url": _optional_text(record.url),
    }


def track_problem(venue: Venue, config: IngestConfig) -> str | None:
    """Why a record of a track other than the main conference is not kept, or None."""
    if venue.main or config.tracks == "all":
        return None
    return f"track '{venue.track}' of {venue.venue} left out (ingest.tracks: main_only)"


def corpus_vocabulary(records: list[RawRecord], memo: RepairMemo | None = None) -> Counter[str]:
    """The words (and compounds) the abstracts and titles use, counted, which decide words
    hyphenated at a line break; empty when no text has such a break. With a `memo`, the last
    build's plus the new texts'."""
    texts = [t for r in records for t in (r.abstract, r.title) if isinstance(t, str)]
    if not any("\n" in t or "\r" in t or "- " in t for t in texts):
        return memo.vocabulary_for([], vocabulary_of) if memo else Counter()
    return memo.vocabulary_for(texts, vocabulary_of) if memo else vocabulary_of(texts)


def make_documents(
    records: list[RawRecord],
    config: IngestConfig,
    counts: Counter | None = None,
    memo: RepairMemo | None = None,
    venues: list[Venue] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Clean records into (documents, rejected). Every record lands in exactly one of them.

    Abstracts and titles are repaired (`repair_text`, or as `memo` knows them; `counts` gains
    each repair made; `venues`: record_venues' if known); a duplicate is the same repaired
    abstract, ignoring case, within or across files: the first is kept and the others point
    to it.
    """
    kept: list[dict] = []
    rejected: list[dict] = []
    seen: dict[str, str] = {}
    counts = Counter() if counts is None else counts
    vocabulary = Watched(corpus_vocabulary(records, memo))
    memo = memo or RepairMemo()

    def repair(text: str) -> str:
        fix = lambda raw, made: repair_text(raw, vocabulary, made)  # noqa: E731
        return memo.repair(text, fix, counts, vocabulary)

    venues = record_venues(records, config) if venues is None else venues
    pairs = zip(records, venues, strict=True)
    for record, venue in progress.bar(pairs, desc="ingest: repairing", total=len(records)):
        raw = record.abstract
        abstract = repair(raw) if isinstance(raw, str) else ""
        problem, duplicate_of = abstract_problem(raw, abstract, config), None
        problem = problem or track_problem(venue, config)
        doc_id = doc_id_for(abstract) if problem is None else None
        if doc_id in seen:
            problem, duplicate_of = f"duplicate abstract (kept {seen[doc_id]})", doc_id
        if problem:
            rejected.append(ledger_row(record.source, record.file, problem, raw, duplicate_of))
            continue
        seen[doc_id] = record.source
        kept.append(document_row(record, doc_id, abstract, venue, repair))
    documents = pd.DataFrame(kept, columns=schemas.DOCUMENTS.columns, dtype=object)
    documents["year"] = documents["year"].astype("Int32")
    return documents, pd.DataFrame(rejected, columns=schemas.REJECTED.columns, dtype=object)


def repair_line(repairs: Counter) -> str:
    """The ingest log's count of repairs: texts (abstracts and titles) each repair changed,
    and flattened line-break hyphens by what became of them."""
    if not repairs:
        return "repairs: none needed"
    parts = [f"{name} {n}" for name, n in sorted(repairs.items(), key=lambda i: (-i[1], i[0]))]
    return "repairs (texts changed, or words): " + "; ".join(parts)


def venue_lines(
    records: list[RawRecord],
    config: IngestConfig,
    venues: list[Venue] | None = None,
    keys: list[VenueKey] | None = None,
) -> list[str]:
    """The ingest log's venue table: every venue string seen (and track column value), what it
    became (comparison group, venue, year, track) and how many records hold it (`venues`: what
    record_venues gave, `keys`: venue_keys', if known)."""
    keys = venue_keys(records, config) if keys is None else keys
    venues = record_venues(records, config, keys) if venues is None else venues
    venue_of = dict(zip(keys, venues, strict=True))
    counts = {(*key, venue_of[key]): n for key, n in Counter(keys).items()}
    lines = []
    for (text, track_column, venue), n in counts.items():
        seen = repr(text) if text else "(no venue)"
        if track_column:
            seen += f" + track column {track_column!r}"
        parts = [venue.venue, str(venue.year or "no year in it")]
        parts += [f"track {venue.track!r}"] if venue.track else []
        became = f"{venue.group} ({', '.join(parts)})"
        if track_problem(venue, config):
            became = f"left out, ingest.tracks: main_only ({', '.join(parts)})"
        lines.append(f"venue {seen} -> {became}: {n} record{'s' if n != 1 else ''}")
    groups = sorted({v.group for _, _, v in counts if not track_problem(v, config)})
    lines.append(f"venues: {len(counts)} venue string(s) -> {len(groups)}: {', '.join(groups)}")
    return lines


def read_inputs(
    paths: list[Path], config: IngestConfig
) -> tuple[list[RawRecord], list[dict], dict[str, int]]:
    """(records, ledger rows of records unreadable on their own, records read per file)."""
    records: list[RawRecord] = []
    unreadable: list[dict] = []
    n_read: dict[str, int] = {}
    for path in paths:
        found, bad = read_file(path, config)
        records.extend(found)
        unreadable.extend(bad)
        n_read[str(path)] = len(found) + len(bad)
    return records, unreadable, n_read


def log_counts(
    records: list[RawRecord], documents: pd.DataFrame, rejected: pd.DataFrame, n_read: dict
) -> None:
    """`read N = kept K + rejected R`, per file and in total."""
    file_of = {record.source: record.file for record in records}
    n_kept = documents["source"].map(file_of).value_counts()
    n_rejected = rejected["file"].value_counts()
    for name, read in n_read.items():
        kept, dropped = int(n_kept.get(name, 0)), int(n_rejected.get(name, 0))
        log.info("%s: read %d = kept %d + rejected %d", name, read, kept, dropped)
    total = sum(n_read.values())
    log.info("total: read %d = kept %d + rejected %d", total, len(documents), len(rejected))


def run(config: IngestConfig, inputs: list[str], documents: Path, rejected: Path) -> pd.DataFrame:
    """Read every input (paths and globs), write documents and the ledger of rejected records.

    Both tables record a fingerprint of the ingest config and the input files' bytes. The
    ledger is written first, so a run killed in between leaves documents.parquet stale, not
    new. (With `engine: ray` the `shards` command, shards.py, then cuts the documents into
    shards for the Ray workers.)
    """
    paths = expand_inputs(inputs)
    records, unreadable, n_read = read_inputs(paths, config)
    repairs: Counter[str] = Counter()
    memo = repair_memo.load(documents.parent / repair_memo.FOLDER)
    keys = venue_keys(records, config)
    venues = record_venues(records, config, keys)
    papers, ledger = make_documents(records, config, repairs, memo, venues)
    ledger = pd.concat(
        [pd.DataFrame(unreadable, columns=schemas.REJECTED.columns), ledger], ignore_index=True
    )
    for line in venue_lines(records, config, venues, keys):
        log.info("%s", line)
    log_counts(records, papers, ledger, n_read)
    log.info("%s", repair_line(repairs))
    if papers.empty:
        raise InputError("no usable abstracts in the inputs (see the rejected records above)")
    if len(papers) < 10:
        log.warning("only %d papers: the map will have few topics, perhaps one", len(papers))
    digests = {str(path): tables.file_digest(path) for path in paths}
    params = {"inputs": list(inputs), "ingest": config.model_dump()}
    lineage = tables.make_lineage(params, digests)
    tables.write_table(ledger, rejected, schemas.REJECTED, lineage)
    tables.write_table(papers, documents, schemas.DOCUMENTS, lineage)
    repair_memo.save(memo, documents.parent / repair_memo.FOLDER)
    return papers


__all__ = [
    "RawRecord",
    "make_documents",
    "doc_id_for",
    "read_file",
    "run",
]

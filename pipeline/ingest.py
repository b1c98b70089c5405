"""Stage 1, ingest: input files -> documents.parquet (+ rejected.parquet, the ledger).

Reads the seed text format (a header line such as `ICML 2025 Papers`, then abstracts separated by
blank lines) and CSV, JSON, JSONL and Parquet tables with an `abstract` column and optional
`title`, `venue`, `year`, `id` and `url` columns. Every record read ends up either as a document or
as a ledger row with the reason it was not kept.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import logging
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import tables
from pipeline.config import Config, IngestConfig
from pipeline.errors import InputError

log = logging.getLogger("pipeline.ingest")

TEXT_SUFFIXES = {".txt", ".text"}
TABLE_SUFFIXES = {".csv", ".json", ".jsonl", ".ndjson", ".parquet", ".pq"}
OPTIONAL_COLUMNS = ("title", "venue", "year", "id", "url")
# "ICML 2025 Papers", "NeurIPS 2024 accepted papers": at most 4 words of venue before the year
# and 3 after it, alone on its line.
HEADER = re.compile(
    r"^(?P<venue>[A-Za-z][\w&+.\-]*(?: [\w&+.\-]+){0,3})\s+(?P<year>(?:19|20)\d{2})"
    r"(?P<rest>(?:\s+[\w&+.:\-()]+){0,3})\s*$"
)
VENUE_YEAR = re.compile(r"^(?P<venue>.*?)[\s,]*\b(?P<year>(?:19|20)\d{2})\b.*$")
LEDGER_TEXT_CHARS = 300


@dataclass
class RawRecord:
    """One record as read, before cleaning. `abstract` may be anything the file held."""

    source: str
    abstract: object
    title: object = None
    venue: object = None
    year: object = None
    source_id: object = None
    url: object = None


# ---------------------------------------------------------------- pure core


def normalise_space(text: str) -> str:
    """NFC-normalise and collapse every whitespace run to one space."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def split_venue(value: str) -> tuple[str, int | None]:
    """'ICLR 2023' -> ('ICLR', 2023); 'ICML' -> ('ICML', None)."""
    value = normalise_space(value)
    match = VENUE_YEAR.match(value)
    if match and match.group("venue").strip():
        return match.group("venue").strip(), int(match.group("year"))
    return value, None


def parse_seed_text(text: str, path: str, default_venue: str | None = None) -> list[RawRecord]:
    """Parse the header + blank-line-separated abstracts format.

    The header names the venue and year (`ICML 2025 Papers`). Without one, `default_venue` is
    used; with neither, the file is rejected as a whole.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[tuple[int, list[str]]] = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            if blocks and blocks[-1][0] + len(blocks[-1][1]) == number:
                blocks[-1][1].append(line)
            else:
                blocks.append((number, [line]))
    if not blocks:
        raise InputError(f"{path}: file is empty")
    first_line, first_block = blocks[0]
    header = HEADER.match(first_block[0].strip())
    if header:
        venue, year = header.group("venue").strip(), int(header.group("year"))
        if len(first_block) > 1:  # abstract starting right under the header line
            blocks[0] = (first_line + 1, first_block[1:])
        else:
            blocks = blocks[1:]
    elif default_venue:
        venue, year = split_venue(default_venue)
    else:
        raise InputError(
            f"{path}:{first_line}: no venue header (expected a first line like "
            f"'ICML 2025 Papers'; or set ingest.venue in the config)"
        )
    if not blocks:
        raise InputError(f"{path}: has a header ('{first_block[0].strip()}') but no abstracts")
    return [
        RawRecord(source=f"{path}:{line}", abstract=" ".join(block), venue=venue, year=year)
        for line, block in blocks
    ]


def records_from_frame(frame: pd.DataFrame, path: str, unit: str) -> list[RawRecord]:
    """Turn a table with an `abstract` column into records (column names match in any case)."""
    by_lower = {}
    for column in frame.columns:
        by_lower.setdefault(str(column).strip().lower(), column)
    if "abstract" not in by_lower:
        shown = ", ".join(map(str, frame.columns[:12])) or "none"
        raise InputError(f"{path}: no 'abstract' column (columns: {shown})")
    picked = {name: by_lower.get(name) for name in ("abstract", *OPTIONAL_COLUMNS)}
    columns = {
        name: (frame[col].tolist() if col is not None else [None] * len(frame))
        for name, col in picked.items()
    }
    return [
        RawRecord(
            source=f"{path}:{unit} {i + 1}",
            abstract=columns["abstract"][i],
            title=columns["title"][i],
            venue=columns["venue"][i],
            year=columns["year"][i],
            source_id=columns["id"][i],
            url=columns["url"][i],
        )
        for i in range(len(frame))
    ]


def _missing(value: object) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # lists, arrays
        return False


def _optional_text(value: object) -> str | None:
    if _missing(value):
        return None
    if isinstance(value, float) and value.is_integer():  # ids in a column with gaps: 7.0 -> "7"
        value = int(value)
    text = normalise_space(str(value))
    return text or None


def _year(value: object) -> int | None:
    if _missing(value):
        return None
    try:
        year = int(float(str(value).strip()))
    except ValueError:
        return None
    return year if 1900 <= year <= 2100 else None


def doc_id_for(abstract: str) -> str:
    """Stable id from the abstract's content: the same paper gets the same id in every run."""
    key = abstract.casefold().encode("utf-8")
    return "p" + hashlib.sha1(key).hexdigest()[:15]


def build_documents(
    records: list[RawRecord], config: IngestConfig
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Clean records into (documents, rejected). Every record lands in exactly one of them."""
    kept: list[dict] = []
    rejected: list[dict] = []
    seen: dict[str, str] = {}

    def reject(record: RawRecord, reason: str, duplicate_of: str | None = None) -> None:
        raw = record.abstract if isinstance(record.abstract, str) else repr(record.abstract)
        rejected.append(
            {
                "source": record.source,
                "reason": reason,
                "text": raw[:LEDGER_TEXT_CHARS],
                "duplicate_of": duplicate_of,
            }
        )

    for record in records:
        if _missing(record.abstract):
            reject(record, "abstract is missing")
            continue
        if not isinstance(record.abstract, str):
            reject(record, f"abstract is not text ({type(record.abstract).__name__})")
            continue
        abstract = normalise_space(record.abstract)
        if not abstract:
            reject(record, "abstract is empty")
            continue
        n_words = len(abstract.split())
        if n_words < config.min_abstract_words:
            reject(
                record,
                f"abstract too short ({n_words} words < ingest.min_abstract_words="
                f"{config.min_abstract_words})",
            )
            continue
        doc_id = doc_id_for(abstract)
        if doc_id in seen:
            reject(record, f"duplicate abstract (kept {seen[doc_id]})", duplicate_of=doc_id)
            continue
        venue_text = _optional_text(record.venue) or config.venue
        venue, venue_year = split_venue(venue_text) if venue_text else ("Unknown", None)
        seen[doc_id] = record.source
        kept.append(
            {
                "doc_id": doc_id,
                "venue": venue,
                "year": _year(record.year) or venue_year,
                "title": _optional_text(record.title),
                "abstract": abstract,
                "source": record.source,
                "source_id": _optional_text(record.source_id),
                "url": _optional_text(record.url),
            }
        )
    documents = pd.DataFrame(kept, columns=tables.DOCUMENTS.columns, dtype=object)
    documents["year"] = documents["year"].astype("Int32")
    return documents, pd.DataFrame(rejected, columns=tables.REJECTED.columns, dtype=object)


# ---------------------------------------------------------------- I/O


def expand_inputs(patterns: list[str]) -> list[Path]:
    """Resolve paths and globs (relative to the working directory), in config order."""
    paths: list[Path] = []
    for pattern in patterns:
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise InputError(f"{pattern}: no file matches this input pattern")
            paths.extend(Path(m) for m in matches if Path(m).is_file())
        else:
            path = Path(pattern)
            if not path.exists():
                raise InputError(f"{pattern}: input file not found")
            if not path.is_file():
                raise InputError(f"{pattern}: input is not a file")
            paths.append(path)
    unique = list(dict.fromkeys(paths))
    return unique


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        log.warning("%s: not UTF-8 (%s); decoded as Windows-1252/Latin-1", path, exc.reason)
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            return data.decode("latin-1")


def read_file(path: Path, config: IngestConfig) -> tuple[list[RawRecord], list[dict]]:
    """Read one input file into records, plus ledger rows for records unreadable on their own."""
    suffix = path.suffix.lower()
    name = str(path)
    try:
        if suffix in TEXT_SUFFIXES:
            return parse_seed_text(_read_text(path), name, config.venue), []
        if suffix == ".csv":
            frame = pd.read_csv(
                io.StringIO(_read_text(path)), dtype=str, keep_default_na=False, na_values=[""]
            )
            return records_from_frame(frame, name, "row"), []
        if suffix == ".json":
            data = json.loads(_read_text(path))
            if isinstance(data, dict):
                lists = [v for v in data.values() if isinstance(v, list)]
                if len(lists) != 1:
                    raise InputError(f"{name}: expected a JSON list of records")
                data = lists[0]
            if not isinstance(data, list):
                raise InputError(f"{name}: expected a JSON list of records")
            return _records_from_objects(data, name, "record")
        if suffix in {".jsonl", ".ndjson"}:
            return _read_jsonl(_read_text(path), name)
        if suffix in {".parquet", ".pq"}:
            frame = pq.read_table(path).to_pandas()
            return records_from_frame(frame, name, "row"), []
    except InputError:
        raise
    except (OSError, UnicodeDecodeError, ValueError, pa.ArrowException) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise InputError(f"{name}: cannot read as {suffix[1:]} ({detail})") from None
    known = ", ".join(sorted(TEXT_SUFFIXES | TABLE_SUFFIXES))
    raise InputError(f"{name}: unknown file type '{suffix or '(none)'}' (known: {known})")


def _records_from_objects(items: list, name: str, unit: str) -> tuple[list[RawRecord], list[dict]]:
    objects = [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]
    bad = [
        {
            "source": f"{name}:{unit} {i + 1}",
            "reason": f"{unit} is not an object ({type(item).__name__})",
            "text": repr(item)[:LEDGER_TEXT_CHARS],
            "duplicate_of": None,
        }
        for i, item in enumerate(items)
        if not isinstance(item, dict)
    ]
    if not objects:
        if bad:
            return [], bad
        raise InputError(f"{name}: contains no records")
    frame = pd.DataFrame([item for _, item in objects], dtype=object)
    records = records_from_frame(frame, name, unit)
    for record, (i, _) in zip(records, objects, strict=True):
        record.source = f"{name}:{unit} {i + 1}"
    return records, bad


def _read_jsonl(text: str, name: str) -> tuple[list[RawRecord], list[dict]]:
    items, bad = [], []
    # Only "\n" ends a JSONL record: U+2028 and friends may stand unescaped inside strings.
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            items.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            bad.append(
                {
                    "source": f"{name}:line {number}",
                    "reason": f"invalid JSON ({exc.msg})",
                    "text": line[:LEDGER_TEXT_CHARS],
                    "duplicate_of": None,
                }
            )
    if not items:
        if bad:
            return [], bad
        raise InputError(f"{name}: contains no records")
    records, not_objects = _records_from_objects([item for _, item in items], name, "line")
    line_of = [number for number, _ in items]
    for record in records:  # renumber "line k-th item" to the real line number
        k = int(record.source.rsplit(" ", 1)[1])
        record.source = f"{name}:line {line_of[k - 1]}"
    for row in not_objects:
        k = int(row["source"].rsplit(" ", 1)[1])
        row["source"] = f"{name}:line {line_of[k - 1]}"
    return records, bad + not_objects


def run(config: Config, out_documents: Path, out_rejected: Path) -> pd.DataFrame:
    """Read every input, write documents and the ledger of rejected records."""
    all_records: list[RawRecord] = []
    unreadable: list[dict] = []
    per_file: list[tuple[str, int, int]] = []
    for path in expand_inputs(config.inputs):
        records, bad = read_file(path, config.ingest)
        all_records.extend(records)
        unreadable.extend(bad)
        per_file.append((str(path), len(records), len(records) + len(bad)))
    documents, rejected = build_documents(all_records, config.ingest)
    rejected = pd.concat(
        [pd.DataFrame(unreadable, columns=tables.REJECTED.columns), rejected], ignore_index=True
    )
    kept_sources = documents["source"].str.rsplit(":", n=1).str[0].value_counts()
    for name, _, n_read in per_file:
        n_kept = int(kept_sources.get(name, 0))
        log.info("%s: read %d = kept %d + rejected %d", name, n_read, n_kept, n_read - n_kept)
    log.info(
        "total: read %d = kept %d + rejected %d",
        len(documents) + len(rejected),
        len(documents),
        len(rejected),
    )
    if documents.empty:
        raise InputError("no usable abstracts in the inputs (see the rejected records above)")
    tables.write_table(rejected, out_rejected, tables.REJECTED)
    tables.write_table(documents, out_documents, tables.DOCUMENTS)
    return documents

"""Input files -> raw records: the seed text format (a header line such as `ICML 2025 Papers`,
then abstracts separated by blank lines) and CSV, JSON, JSONL and Parquet tables with an
`abstract` column and optional `title`, `venue`, `year`, `id`, `url`, `track` and `date` columns
(`ingest.columns` maps other names). A file that cannot be used as a whole raises InputError
naming it; a record unreadable on its own becomes a ledger row.
"""

from __future__ import annotations

import glob
import io
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.config import IngestConfig
from pipeline.errors import InputError
from pipeline.stages.ingest.repair import UNPRINTABLE

log = logging.getLogger("pipeline.ingest")

TEXT_SUFFIXES = {".txt", ".text"}
TABLE_SUFFIXES = {".csv", ".json", ".jsonl", ".ndjson", ".parquet", ".pq"}
OPTIONAL_COLUMNS = ("title", "venue", "year", "id", "url", "track", "date")
# "ICML 2025 Papers", "NeurIPS'23", "NeurIPS 2024 (Datasets & Benchmarks Track)": at most 5
# words of venue before the year and 4 after it, alone on its line.
HEADER = re.compile(
    r"^(?P<venue>[^\W\d_][\w&+./\-]*(?: [\w&+./\-]+){0,4})\s*(?:\s(?:19|20)\d{2}|['’`]\d{2})"
    r"(?P<rest>(?:\s+[\w&+.:/\-()%]+){0,4})\s*$"
)
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
    track: object = None
    date: object = None
    file: str = ""  # the input file; `source` is "<file>:<record>"


def ledger_row(
    source: str, file: str, reason: str, raw: object, duplicate_of: str | None = None
) -> dict:
    """One row of rejected.parquet: where the record was, why it was not kept, its raw text."""
    where = source[len(file) + 1 :] if file and source.startswith(f"{file}:") else ""
    text = raw if isinstance(raw, str) else repr(raw)
    return {
        "source": source,
        "file": file or source,
        "record": f"line {where}" if where.isdigit() else where,
        "reason": reason,
        "text": UNPRINTABLE.sub(" ", text[:LEDGER_TEXT_CHARS]),
        "duplicate_of": duplicate_of,
    }


def parse_seed_text(text: str, path: str, default_venue: str | None = None) -> list[RawRecord]:
    """Parse the header + blank-line-separated abstracts format.

    The header names the venue and year (`ICML 2025 Papers`); the whole line is each record's
    venue string, read by `venues`. Without one, `default_venue` is used; with neither, the file
    is rejected as a whole. A record keeps its block's lines as read; `make_documents` repairs
    and unwraps them.
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
        venue = first_block[0].strip()
        if len(first_block) > 1:  # abstract starting right under the header line
            blocks[0] = (first_line + 1, first_block[1:])
        else:
            blocks = blocks[1:]
    elif default_venue:
        venue = default_venue
    else:
        raise InputError(
            f"{path}:{first_line}: no venue header (expected a first line like "
            f"'ICML 2025 Papers'; or set ingest.venue in the config)"
        )
    if not blocks:
        raise InputError(f"{path}: has a header ('{first_block[0].strip()}') but no abstracts")
    return [
        RawRecord(source=f"{path}:{line}", abstract="\n".join(block), venue=venue, file=path)
        for line, block in blocks
    ]


def _is_text(value: object) -> bool:
    """A string that is not just a number."""
    if not isinstance(value, str):
        return False
    try:
        float(value)
    except ValueError:
        return True
    return False


def records_from_frame(
    frame: pd.DataFrame, path: str, unit: str, renames: dict[str, str] | None = None
) -> list[RawRecord]:
    """Turn a table with an `abstract` column into records.

    Column names match in any case; `renames` (ingest.columns) maps other names to ours, e.g.
    {"summary": "abstract"}. A table with no rows, or whose abstracts are all numbers or other
    non-text values, is an error: it is the wrong file or the wrong column.
    """
    aliases = {name: name for name in ("abstract", *OPTIONAL_COLUMNS)}
    aliases.update({str(k).strip().lower(): v for k, v in (renames or {}).items()})
    picked: dict[str, object] = {}
    for column in frame.columns:
        name = aliases.get(str(column).strip().lower())
        if name in picked:
            raise InputError(
                f"{path}: columns '{picked[name]}' and '{column}' both give the {name}"
            )
        if name is not None:
            picked[name] = column
    shown = ", ".join(map(str, frame.columns[:12])) or "none"
    if "abstract" not in picked:
        raise InputError(
            f"{path}: no 'abstract' column (columns: {shown}); "
            "name another in ingest.columns, e.g. {summary: abstract}"
        )
    if frame.empty:
        raise InputError(f"{path}: has columns ({shown}) but no records")
    columns = {
        name: (frame[picked[name]].tolist() if name in picked else [None] * len(frame))
        for name in ("abstract", *OPTIONAL_COLUMNS)
    }
    present = [value for value in columns["abstract"] if not is_missing(value)]
    if present and not any(_is_text(value) for value in present):
        raise InputError(
            f"{path}: column '{picked['abstract']}' holds no text, only values like "
            f"{repr(present[0])[:40]}: is it the abstract column?"
        )
    return [
        RawRecord(
            source=f"{path}:{unit} {i + 1}",
            abstract=columns["abstract"][i],
            title=columns["title"][i],
            venue=columns["venue"][i],
            year=columns["year"][i],
            source_id=columns["id"][i],
            url=columns["url"][i],
            track=columns["track"][i],
            date=columns["date"][i],
            file=path,
        )
        for i in range(len(frame))
    ]


def is_missing(value: object) -> bool:
    if value is None:
        return True
    if type(value) is str:  # most cells: pd.isna costs ten times this check
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # lists, arrays
        return False


def expand_inputs(patterns: list[str]) -> list[Path]:
    """Resolve paths and globs (relative to the working directory), in config order."""
    paths: list[Path] = []
    for pattern in patterns:
        if glob.has_magic(pattern):
            matches = [Path(m) for m in sorted(glob.glob(pattern, recursive=True))]
            files = [m for m in matches if m.is_file()]
            if not files:
                raise InputError(f"{pattern}: no file matches this input pattern")
            paths.extend(files)
        else:
            path = Path(pattern)
            if not path.exists():
                raise InputError(f"{pattern}: input file not found")
            if not path.is_file():
                raise InputError(f"{pattern}: input is not a file")
            paths.append(path)
    unique = list(dict.fromkeys(paths))
    return unique


def decode_bytes(data: bytes, name: str) -> str:
    """UTF-8 (with or without BOM), UTF-16 with BOM, else Windows-1252/Latin-1 with a note.

    Never fails: Latin-1 decodes any byte.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        log.warning("%s: not UTF-8 (%s); decoded as Windows-1252/Latin-1", name, exc.reason)
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            return data.decode("latin-1")


def read_file(path: Path, config: IngestConfig) -> tuple[list[RawRecord], list[dict]]:
    """Read one input file into records, plus ledger rows for records unreadable on their own.

    Whatever makes the whole file unusable (empty, no records, no abstract column, unreadable)
    raises InputError naming the file.
    """
    suffix = path.suffix.lower()
    name = str(path)
    if suffix not in TEXT_SUFFIXES | TABLE_SUFFIXES:
        known = ", ".join(sorted(TEXT_SUFFIXES | TABLE_SUFFIXES))
        raise InputError(f"{name}: unknown file type '{suffix or '(none)'}' (known: {known})")
    try:
        if suffix in {".parquet", ".pq"}:
            if path.stat().st_size == 0:
                raise InputError(f"{name}: file is empty")
            frame = pq.read_table(path).to_pandas()
            return records_from_frame(frame, name, "row", config.columns), []
        text = decode_bytes(path.read_bytes(), name)
        if not text.strip():
            raise InputError(f"{name}: file is empty")
        if suffix in TEXT_SUFFIXES:
            return parse_seed_text(text, name, config.venue), []
        if suffix == ".csv":
            frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_values=[""])
            return records_from_frame(frame, name, "row", config.columns), []
        if suffix == ".json":
            data = json.loads(text)
            if isinstance(data, dict):
                lists = [v for v in data.values() if isinstance(v, list)]
                if len(lists) != 1:
                    raise InputError(f"{name}: expected a JSON list of records")
                data = lists[0]
            if not isinstance(data, list):
                raise InputError(f"{name}: expected a JSON list of records")
            return _records_from_objects(data, name, "record", config.columns)
        return _read_jsonl(text, name, config.columns)
    except InputError:
        raise
    except (OSError, ValueError, RecursionError, pa.ArrowException) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise InputError(f"{name}: cannot read as {suffix[1:]} ({detail})") from None


def _records_from_objects(
    items: list, name: str, unit: str, renames: dict[str, str] | None = None
) -> tuple[list[RawRecord], list[dict]]:
    objects = [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]
    bad = [
        ledger_row(
            f"{name}:{unit} {i + 1}", name, f"{unit} is not an object ({type(item).__name__})", item
        )
        for i, item in enumerate(items)
        if not isinstance(item, dict)
    ]
    if not objects:
        if bad:
            return [], bad
        raise InputError(f"{name}: contains no records")
    frame = pd.DataFrame([item for _, item in objects], dtype=object)
    records = records_from_frame(frame, name, unit, renames)
    for record, (i, _) in zip(records, objects, strict=True):
        record.source = f"{name}:{unit} {i + 1}"
    return records, bad


def _read_jsonl(
    text: str, name: str, renames: dict[str, str] | None = None
) -> tuple[list[RawRecord], list[dict]]:
    items, bad = [], []
    # Only "\n" ends a JSONL record: U+2028 and friends may stand unescaped inside strings.
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            items.append((number, json.loads(line)))
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, too deep, too long an int
            detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            reason = f"invalid JSON ({getattr(exc, 'msg', detail)[:100]})"
            bad.append(ledger_row(f"{name}:line {number}", name, reason, line))
    if not items:
        if bad:
            return [], bad
        raise InputError(f"{name}: contains no records")
    records, not_objects = _records_from_objects([item for _, item in items], name, "line", renames)
    line_of = [number for number, _ in items]
    for record in records:  # renumber "line k-th item" to the real line number
        k = int(record.source.rsplit(" ", 1)[1])
        record.source = f"{name}:line {line_of[k - 1]}"
    for row in not_objects:
        k = int(row["source"].rsplit(" ", 1)[1])
        row.update(ledger_row(f"{name}:line {line_of[k - 1]}", name, row["reason"], row["text"]))
    return records, bad + not_objects

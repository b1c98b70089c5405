"""Stage 1, ingest: input files -> documents.parquet (+ rejected.parquet, the ledger).

Reads the seed text format (a header line such as `ICML 2025 Papers`, then abstracts separated by
blank lines) and CSV, JSON, JSONL and Parquet tables with an `abstract` column and optional
`title`, `venue`, `year`, `id` and `url` columns (`ingest.columns` maps other names). Every record
read ends up either as a document or as a ledger row with the reason it was not kept.

Abstracts are repaired on the way in (`repair_text`): Windows line endings, tabs, control
characters and PDF ligatures are normalised, words hyphenated across a line break are joined
(`condi-\\ntional` -> `conditional`, but `self-\\nsupervised` -> `self-supervised`), hard line
breaks are unwrapped, and LaTeX formatting outside maths is dropped (`\\textit{x}` -> `x`,
`\\footnote{...}` and `\\cite{...}` removed). Maths (`$...$`), HTML and everything else stay as
written: the page escapes them, so markup stays text.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import logging
import re
import unicodedata
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import tables
from pipeline.config import Config, IngestConfig, stamp_text
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

# Control characters (not tab or newline) and lone surrogates (JSON "\ud800"), which Parquet
# cannot store: each becomes a space.
UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
LIGATURES = str.maketrans(
    {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"}
)
# A word hyphenated at a line break ("condi-\ntional"); the part before may itself hold hyphens.
BROKEN_WORD = re.compile(r"(?<![\w-])(\w(?:[\w-]*\w)?)-[ \t]*\n[ \t]*(\w+)")
WORD = re.compile(r"\w+(?:-\w+)*")  # a word or a hyphenated compound, unbroken
# Whole words that start hyphenated compounds, kept when a break follows them
# ("self-\nsupervised" -> "self-supervised"). Syllables PDF hyphenation splits at (con-, re-,
# pre-, in-) are deliberately absent: "con-\nvex" must become "convex".
COMPOUND_FIRST = frozenset(
    """self non semi multi cross well high low large small long short fine end real zero few one
    two three first second state data task model open closed trade plug top half full single
    double mixed black white human sample time domain""".split()
)
# Endings that never start a word of their own: "token-\nization" is "tokenization".
SUFFIXES = frozenset("ing ings ed er ers ly ity ities ize ized izes ization izations".split())
BRACED = r"\{((?:[^{}]|\{[^{}]*\})*)\}"  # {...} with one level of nested braces
MATH = re.compile(r"(\$\$.+?\$\$|(?<!\\)\$.+?(?<!\\)\$|\\\(.+?\\\)|\\\[.+?\\\])", re.S)
LATEX_DROP = re.compile(
    r"\s*~?\\(?:footnote|cite[pt]?|citeauthor|ref|eqref|label)\*?(?:\[[^\]]*\])*\s*" + BRACED
)
LATEX_FORMAT = re.compile(
    r"\\(?:text(?:it|bf|tt|sc|rm|sf|sl|up|normal)|emph|underline|mbox)\s*" + BRACED
)
LATEX_OLD_FORMAT = re.compile(r"\{\\(?:em|it|bf|tt|sc|rm|sf|sl)\s+([^{}]*)\}")
LATEX_ESCAPED = re.compile(r"\\([%&_#])")


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


# ---------------------------------------------------------------- pure core: text repair


def vocabulary_of(texts: Iterable[str]) -> set[str]:
    """Every word and hyphenated compound in `texts`, lowercased (words split at a line break
    are not among them)."""
    vocabulary: set[str] = set()
    for text in texts:
        text = text.lower().replace("\r\n", "\n").replace("\r", "\n")
        text = BROKEN_WORD.sub(" ", text) if "\n" in text else text
        vocabulary.update(WORD.findall(text))
    return vocabulary


def join_broken_words(text: str, vocabulary: Collection[str] | None = None) -> str:
    """Join words hyphenated across a line break; keep the hyphen of real compounds.

    `vocabulary` holds the words seen unbroken (the corpus's, else this text's own). In order:
    the hyphen stays when the part after the break does not start lowercase or the part before
    is not a plain word (`GPU-`, `3D-`, `end-to-`); the word is joined when the joined form is
    known (`proper-ties`); the hyphen stays when the hyphenated form is known; the word is
    joined when the part after is a bare suffix (`token-ization`); the hyphen stays when the part
    before starts compounds (`self-`, `non-`, `multi-`) or both parts are known words of three
    letters or more (`finite-sample`); otherwise the word is joined (`condi-tional`).
    """
    if "\n" not in text:
        return text
    known = vocabulary_of([text]) if vocabulary is None else vocabulary

    def repair(match: re.Match) -> str:
        left, right = match.group(1), match.group(2)
        hyphenated, joined = f"{left}-{right}", left + right
        plain = left.isalpha() and right[0].islower() and not any(c.isupper() for c in left[1:])
        if not plain:
            return hyphenated
        if joined.lower() in known:
            return joined
        if hyphenated.lower() in known:
            return hyphenated
        if right.lower() in SUFFIXES:
            return joined
        if left.lower() in COMPOUND_FIRST:
            return hyphenated
        parts_known = all(len(p) >= 3 and p.lower() in known for p in (left, right))
        return hyphenated if parts_known else joined

    return BROKEN_WORD.sub(repair, text)


def strip_latex_formatting(text: str) -> str:
    """Drop LaTeX formatting outside maths: `\\emph{x}` -> `x`, `\\footnote{..}` -> nothing."""
    if "\\" not in text and "{" not in text:
        return text
    parts = MATH.split(text)  # odd items are maths, kept as written
    for i in range(0, len(parts), 2):
        part = parts[i]
        for _ in range(4):  # nested: \textbf{\emph{x}}
            before = part
            part = LATEX_DROP.sub("", part)
            part = LATEX_FORMAT.sub(r"\1", part)
            part = LATEX_OLD_FORMAT.sub(r"\1", part)
            if part == before:
                break
        parts[i] = LATEX_ESCAPED.sub(r"\1", part)
    return "".join(parts)


def repair_text(text: str, vocabulary: Collection[str] | None = None) -> str:
    """Clean an abstract or title as extracted from a PDF or an export into one line of text.

    `vocabulary` (see `vocabulary_of`) decides hyphenated line breaks; by default, this text's.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub("\u00ad[ \t]*\n[ \t]*", "", text).replace("\u00ad", "")  # soft hyphens
    text = UNPRINTABLE.sub(" ", text.translate(LIGATURES))
    return normalise_space(strip_latex_formatting(join_broken_words(text, vocabulary)))


# ---------------------------------------------------------------- pure core: parsing


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
    used; with neither, the file is rejected as a whole. A record keeps its block's lines as
    read; `build_documents` repairs and unwraps them.
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
        RawRecord(
            source=f"{path}:{line}", abstract="\n".join(block), venue=venue, year=year, file=path
        )
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
    present = [value for value in columns["abstract"] if not _missing(value)]
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
            file=path,
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


def _optional_text(value: object, vocabulary: Collection[str] | None = None) -> str | None:
    """A field's text, or None; repaired like an abstract when a `vocabulary` is given."""
    if _missing(value):
        return None
    if isinstance(value, float) and value.is_integer():  # ids in a column with gaps: 7.0 -> "7"
        value = int(value)
    if vocabulary is not None:
        return repair_text(str(value), vocabulary) or None
    return normalise_space(UNPRINTABLE.sub(" ", str(value))) or None


def _year(value: object) -> int | None:
    if _missing(value):
        return None
    try:
        year = int(float(str(value).strip()))
    except (ValueError, OverflowError):  # "abc", inf
        return None
    return year if 1900 <= year <= 2100 else None


def doc_id_for(abstract: str) -> str:
    """Stable id from the abstract's content: the same paper gets the same id in every run."""
    key = abstract.casefold().encode("utf-8")
    return "p" + hashlib.sha1(key).hexdigest()[:15]


def build_documents(
    records: list[RawRecord], config: IngestConfig
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Clean records into (documents, rejected). Every record lands in exactly one of them.

    Abstracts and titles are repaired (`repair_text`); a duplicate is the same repaired abstract,
    ignoring case, within or across files: the first is kept and the others point to it.
    """
    kept: list[dict] = []
    rejected: list[dict] = []
    seen: dict[str, str] = {}
    # hyphenated line breaks are decided by the words the whole corpus uses unbroken
    texts = [r.abstract for r in records if isinstance(r.abstract, str)]
    vocabulary = vocabulary_of(texts) if any("\n" in t or "\r" in t for t in texts) else set()

    def reject(record: RawRecord, reason: str, duplicate_of: str | None = None) -> None:
        rejected.append(
            ledger_row(record.source, record.file, reason, record.abstract, duplicate_of)
        )

    for record in records:
        if _missing(record.abstract):
            reject(record, "abstract is missing")
            continue
        if not isinstance(record.abstract, str):
            reject(record, f"abstract is not text ({type(record.abstract).__name__})")
            continue
        abstract = repair_text(record.abstract, vocabulary)
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
                "title": _optional_text(record.title, vocabulary),
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


def run(config: Config, out_documents: Path, out_rejected: Path) -> pd.DataFrame:
    """Read every input, write documents and the ledger of rejected records.

    Both tables record a fingerprint of the ingest config and the input files' bytes. The
    ledger is written first, so a run killed in between leaves documents.parquet stale, not new.
    """
    paths = expand_inputs(config.inputs)
    all_records: list[RawRecord] = []
    unreadable: list[dict] = []
    n_read: dict[str, int] = {}
    for path in paths:
        records, bad = read_file(path, config.ingest)
        all_records.extend(records)
        unreadable.extend(bad)
        n_read[str(path)] = len(records) + len(bad)
    documents, rejected = build_documents(all_records, config.ingest)
    rejected = pd.concat(
        [pd.DataFrame(unreadable, columns=tables.REJECTED.columns), rejected], ignore_index=True
    )
    file_of = {record.source: record.file for record in all_records}
    n_kept = documents["source"].map(file_of).value_counts()
    n_rejected = rejected["file"].value_counts()
    for name, read in n_read.items():
        kept, dropped = int(n_kept.get(name, 0)), int(n_rejected.get(name, 0))
        log.info("%s: read %d = kept %d + rejected %d", name, read, kept, dropped)
    log.info(
        "total: read %d = kept %d + rejected %d",
        sum(n_read.values()),
        len(documents),
        len(rejected),
    )
    if documents.empty:
        raise InputError("no usable abstracts in the inputs (see the rejected records above)")
    if len(documents) < 10:
        log.warning("only %d papers: the map will have few topics, perhaps one", len(documents))
    digests = {str(path): tables.file_digest(path) for path in paths}
    lineage = tables.make_lineage(stamp_text(config, "ingest"), digests)
    tables.write_table(rejected, out_rejected, tables.REJECTED, lineage)
    tables.write_table(documents, out_documents, tables.DOCUMENTS, lineage)
    return documents

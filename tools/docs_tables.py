"""docs/tables.md from pipeline/schemas.py: every table's columns, types and notes, so the
reference cannot drift from the schemas the stages check on every read and write.

    python tools/docs_tables.py            # writes docs/tables.md
    python tools/docs_tables.py --check    # exit 1 if docs/tables.md differs

The notes are the schema module's own comments (the block above a table, the comment after a
column), read with `tokenize`: they are the one place that says what a column holds.
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from pathlib import Path

import pyarrow as pa

from pipeline import commands, schemas

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "tables.md"
# the file each schema's table has in an output folder, by the commands' file names
FILE_OF = {
    "model papers": commands.FILES["model"],
    "topic registry": commands.FILES["registry"],
    "topic snapshots": commands.FILES["snapshots"],
}
# the CSV tables: (file, BERTopic's columns, all columns), from the schema module's tuples
CSV_TABLES = (
    ("topic_info.csv", "BERTOPIC_TOPIC_INFO", "TOPIC_INFO"),
    ("document_info.csv", "BERTOPIC_DOCUMENT_INFO", "DOCUMENT_INFO"),
)


def _comments(source: str) -> dict[int, str]:
    """Line number -> the comment on that line, without its `#`."""
    found = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string.lstrip("#").strip()
    return found


def _block_above(comments: dict[int, str], lines: list[str], line: int) -> str:
    """The comment lines that stand alone right above `line`, joined."""
    block = []
    number = line - 1
    while number in comments and lines[number - 1].lstrip().startswith("#"):
        block.insert(0, comments[number])
        number -= 1
    return " ".join(block)


def _type(type_: pa.DataType) -> str:
    if pa.types.is_list(type_):
        return f"list<{_type(type_.value_type)}>"
    if pa.types.is_floating(type_):
        return f"float{type_.bit_width}"
    return str(type_)


def _sentence(text: str) -> str:
    text = text if text.endswith(".") else f"{text}."
    return _escape(text[:1].upper() + text[1:])


def _values(note: str, above_tuples: dict[str, str]) -> str:
    """A note naming a tuple of the schema module (`one of PLACED`) shows its values and the
    comment above the tuple."""
    for word in note.split():
        value = getattr(schemas, word, None)
        if word.isupper() and isinstance(value, tuple):
            shown = ", ".join(f"`{v}`" for v in value)
            why = above_tuples.get(word, "").rstrip(".")
            note = note.replace(word, f"{shown} ({why[:1].lower()}{why[1:]})")
    return note


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _schema_section(
    schema: schemas.Schema, above: str, notes: dict[str, str], above_tuples: dict[str, str]
) -> list[str]:
    file = FILE_OF.get(schema.name, commands.FILES.get(schema.name, f"{schema.name}.parquet"))
    lines = [f"## `{file}`", ""]
    if above:
        lines += [_sentence(above), ""]
    lines += ["| column | type | may be null | note |", "|---|---|---|---|"]
    for field in schema.fields:
        null = "yes" if field.nullable else "no"
        note = _escape(_values(notes.get(field.name, ""), above_tuples))
        lines.append(f"| `{field.name}` | {_type(field.type)} | {null} | {note} |")
    return lines + [""]


def _csv_section(file: str, theirs: tuple[str, ...], ours: tuple[str, ...]) -> list[str]:
    lines = [f"### `{file}`", "", "| column | from |", "|---|---|"]
    lines += [f"| `{c}` | {'BERTopic' if c in theirs else 'ours'} |" for c in ours]
    if file == "topic_info.csv":
        lines.append(f"| `{schemas.VENUE_SHARE_PREFIX}<venue>` | ours, one per venue |")
    return lines + [""]


def render() -> str:
    """The whole of docs/tables.md."""
    path = Path(schemas.__file__)
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    comments = _comments(source)
    out = [
        "# Tables",
        "",
        "<!-- Written by tools/docs_tables.py from pipeline/schemas.py: edit those, then run",
        "     `.venv/bin/python tools/docs_tables.py`. tests/docs/test_tables.py checks it. -->",
        "",
        "[Back to the README](../README.md) · which stage writes each: [pipeline.md](pipeline.md)",
        "",
        "Every table in an output folder, with its columns in order. `pipeline/tables.py` checks",
        "each on every read and write: a missing or extra column stops the stage. The embeddings",
        "table (`embeddings.parquet`: `doc_id` and a fixed-width float32 `embedding`) is checked",
        "by its own reader and writer there.",
        "",
    ]
    above_tuples = {}  # the comments above the module's tuples (PLACED, the CSV columns)
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        value = getattr(schemas, name)
        above = _block_above(comments, lines, node.lineno)
        if isinstance(value, schemas.Schema):
            notes = {}
            for call in ast.walk(node.value):
                if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "_f":
                    notes[call.args[0].value] = comments.get(call.end_lineno, "")
            out += _schema_section(value, above, notes, above_tuples)
        elif isinstance(value, tuple) and above:
            above_tuples[name] = above
    csv_notes = [
        _sentence(above_tuples[CSV_TABLES[0][1]]),
        _sentence(above_tuples[CSV_TABLES[0][2]]),
    ]
    out += [
        "## The CSV tables",
        "",
        " ".join(csv_notes),
        "",
        "How to read them: [pipeline.md](pipeline.md#tables-for-bertopic-users).",
        "",
    ]
    for file, theirs, ours in CSV_TABLES:
        out += _csv_section(file, getattr(schemas, theirs), getattr(schemas, ours))
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"error: {OUT} is not what tools/docs_tables.py writes: run it", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"docs_tables: wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

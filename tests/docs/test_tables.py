"""docs/tables.md is what tools/docs_tables.py writes from pipeline/schemas.py, and that names
every column of every table."""

from __future__ import annotations

from pipeline import commands, schemas
from tests.support.paths import ROOT
from tests.support.runs import load_tool


def test_the_committed_reference_is_what_the_script_writes():
    written = load_tool("docs_tables").render()
    committed = (ROOT / "docs" / "tables.md").read_text(encoding="utf-8")
    assert committed == written, (
        "docs/tables.md is stale: run .venv/bin/python tools/docs_tables.py"
    )


def test_every_schema_column_is_in_its_tables_section_in_order():
    tool = load_tool("docs_tables")
    sections = {}
    for part in tool.render().split("\n## ")[1:]:
        heading, _, body = part.partition("\n")
        sections[heading] = body
    tables = [v for v in vars(schemas).values() if isinstance(v, schemas.Schema)]
    assert len(tables) == 10
    for table in tables:
        file = tool.FILE_OF.get(table.name, commands.FILES.get(table.name))
        rows = [
            line.split("`")[1]
            for line in sections[f"`{file}`"].splitlines()
            if line.startswith("| `")
        ]
        assert rows == table.columns, file
    for column in schemas.TOPIC_INFO + schemas.DOCUMENT_INFO:
        assert f"| `{column}` |" in sections["The CSV tables"], column


def test_check_mode_fails_on_a_stale_file(tmp_path, monkeypatch):
    tool = load_tool("docs_tables")
    stale = tmp_path / "tables.md"
    stale.write_text("# Tables\n", encoding="utf-8")
    monkeypatch.setattr(tool, "OUT", stale)
    assert tool.main(["--check"]) == 1
    assert tool.main([]) == 0
    assert tool.main(["--check"]) == 0

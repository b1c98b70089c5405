"""The shape of the package: stages meet only through their tables (no stage imports another,
except quality, which reruns the cluster stage), ground modules import no stage, pages are
templates, and no file or function grows past one role."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pipeline.commands import COMMANDS
from pipeline.makedeps import ENTRY_POINTS, ROOT, imported_modules

STAGES = {command.module.split(".")[2] for command in COMMANDS.values()}
ALLOWED = {("quality", "cluster")}  # quality reruns the clustering with other seeds
PROJECT = ROOT.parent
MAX_FILE_LINES, MAX_FUNCTION_LINES = 450, 60


def _stage_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "stages" else None


def _is_engine(module: str) -> bool:
    return module.split(".")[:2] == ["pipeline", "engines"]


def test_every_stage_module_is_a_command():
    """pipeline/stages/ holds the commands' stages and nothing else."""
    found = {p.stem for p in (ROOT / "stages").iterdir() if p.suffix == ".py" or p.is_dir()}
    assert found - {"__init__", "__pycache__"} == STAGES


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(PROJECT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def test_no_stage_imports_another_stage():
    crossings = set()
    for name, path in _modules().items():
        stage = _stage_of(name)
        for imported in imported_modules(path):
            other = _stage_of(imported)
            if stage and other and other != stage:
                crossings.add((stage, other))
    assert crossings <= ALLOWED, sorted(crossings - ALLOWED)


def test_ground_modules_and_engines_import_no_stage_and_no_entry_point():
    for name, path in _modules().items():
        if _stage_of(name) or name in ENTRY_POINTS or name in {"pipeline", "pipeline.__main__"}:
            continue
        for imported in imported_modules(path):
            assert not _stage_of(imported), f"{name} (ground) imports the stage {imported}"


def test_ground_modules_import_no_engine():
    """The engines sit between the stages and the ground: ground modules do not map work."""
    for name, path in _modules().items():
        if _stage_of(name) or _is_engine(name) or name in ENTRY_POINTS or name == "pipeline":
            continue
        for imported in imported_modules(path):
            assert not _is_engine(imported), f"{name} (ground) imports the engine {imported}"


def test_stages_import_no_entry_point():
    for name, path in _modules().items():
        if not _stage_of(name):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
                assert not set(names) & ENTRY_POINTS, f"{name} imports an entry point"


def _python_files() -> list[Path]:
    return [
        path
        for folder in ("pipeline", "tests", "tools")
        for path in sorted((PROJECT / folder).rglob("*.py"))
    ]


@pytest.mark.parametrize("path", _python_files(), ids=lambda p: str(p.relative_to(PROJECT)))
def test_files_and_functions_keep_to_one_role(path: Path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_FILE_LINES, f"{path}: over {MAX_FILE_LINES} lines"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            assert length <= MAX_FUNCTION_LINES, f"{path}:{node.lineno} {node.name}: {length}"


def test_render_assembles_no_html_in_python():
    """Pages are Jinja2 templates; Python shapes data only (no '<tag' in a string literal, but
    for plotly's own label markup, <b>, <br> and <extra>, which plotly draws as text)."""
    tag = re.compile(r"<\s*/?\s*(?!(?:b|br|extra)\s*/?>)[a-zA-Z][a-zA-Z0-9]*[\s>/]")
    for path in sorted((ROOT / "stages" / "render").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, documented) and ast.get_docstring(node) is not None
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in docstrings and tag.search(node.value):
                    raise AssertionError(f"{path}:{node.lineno}: HTML in Python: {node.value!r}")

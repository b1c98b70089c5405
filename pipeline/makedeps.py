"""The Makefile's code prerequisites, read off the imports: `python -m pipeline deps` writes
`CODE_<command> := <files>` for every command: the module that runs it and every pipeline
module it imports, directly or not (lazy imports too), with the packages above each; a package's
templates and assets count with its `__init__.py`. A file of a package that nothing imports is
no prerequisite.

The entry points (cli, commands, api, this module) are not among them: changing how a stage is
called does not change what it computes.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pipeline.commands import COMMANDS

PACKAGE = "pipeline"
ROOT = Path(__file__).resolve().parent
# The ways in, which call the stages and which no stage imports (pipeline/__init__.py imports
# the API lazily, for notebook users).
ENTRY_POINTS = {
    "pipeline.api",
    "pipeline.place",
    "pipeline.serve",
    "pipeline.serve.app",
    "pipeline.serve.build",
    "pipeline.cli",
    "pipeline.commands",
    "pipeline.makedeps",
}


def module_path(name: str) -> Path | None:
    """The file of a pipeline module (a package's __init__.py), or None for other modules."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = ROOT.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every pipeline module `path` imports, wherever the import stands (lazy ones included)."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path.parent)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {n for n in found if module_path(n) is not None and n not in ENTRY_POINTS}


def code_files(module: str) -> list[Path]:
    """The files whose content decides what `module` computes: it, the pipeline modules it
    imports transitively, the packages above each (their `__init__.py` runs on import), and each
    such package's own files that are not Python (templates, assets)."""
    seen: set[str] = set()
    todo = [module]
    files: set[Path] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_path(name)
        files.add(path)
        if path.name == "__init__.py":
            files.update(package_data(path.parent))
        todo.extend(_parents(name))
        todo.extend(imported_modules(path))
    return sorted(files)


def package_data(folder: Path) -> list[Path]:
    """A package's files that are not Python, outside its subpackages (render's templates/,
    assets/ and vendor/)."""
    found = []
    for path in folder.rglob("*"):
        if not _is_source(path) or path.suffix == ".py":
            continue
        between = path.parent.relative_to(folder).parts
        inner = [folder.joinpath(*between[: i + 1]) for i in range(len(between))]
        if not any((sub / "__init__.py").exists() for sub in inner):
            found.append(path)
    return found


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _is_source(path: Path) -> bool:
    return path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"


def make_include(root: Path) -> str:
    """The make include: one CODE_<command> variable per command, paths relative to `root`,
    and PAGE_FILES, the files the render stage writes into the output folder (its own list)."""
    from pipeline.stages.render import PAGE_FILES

    lines = ["# Written by `python -m pipeline deps` from the stage modules' imports: do not edit."]
    for command in COMMANDS.values():
        files = " ".join(str(f.relative_to(root)) for f in code_files(command.module))
        lines.append(f"CODE_{command.name} := {files}")
    lines.append(f"PAGE_FILES := {' '.join(PAGE_FILES)}")
    return "\n".join(lines) + "\n"

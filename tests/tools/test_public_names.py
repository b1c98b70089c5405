"""tools/ use the pipeline, and each other, through public names only: no tool imports a name
starting with `_` from another module or reaches one through a module it imported (a private
name is free to change with its module; a tool that needs it needs a public function)."""

from __future__ import annotations

import ast

import pytest

from tests.support.paths import ROOT

TOOLS = sorted((ROOT / "tools").glob("*.py"))


def private_uses(source: str) -> list[str]:
    """The private names of other modules that `source` imports or reads from a module."""
    tree = ast.parse(source)
    modules, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if alias.name.startswith("_") or (node.module or "").split(".")[-1][:1] == "_":
                    found.append(f"from {node.module} import {alias.name}")
                modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if any(part.startswith("_") for part in alias.name.split(".")):
                    found.append(f"import {alias.name}")
                modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("path", TOOLS, ids=[p.name for p in TOOLS])
def test_a_tool_uses_no_private_name_of_another_module(path):
    assert private_uses(path.read_text(encoding="utf-8")) == []


def test_the_scan_finds_each_way_of_reaching_a_private_name():
    source = """
from bench_ray import _stage, as_ingest_leaves
from pipeline.stages.render import _private
import bench_map
import pipeline.stages.render as render
from pipeline import tables

def _own(): ...  # a tool's own private name is its business
bench_map._open(); render._helper; tables.read_table; tables.__name__; _own()
"""
    assert sorted(private_uses(source)) == [
        "bench_map._open",
        "from bench_ray import _stage",
        "from pipeline.stages.render import _private",
        "render._helper",
    ]
    assert TOOLS

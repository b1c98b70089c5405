"""The Makefile's code prerequisites are read off the imports (`python -m pipeline deps`), so a
change to a module reruns exactly the stages that import it, and those after them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.commands import COMMANDS, FILES
from pipeline.makedeps import code_files, make_include
from pipeline.stages import render
from tests.support.paths import ROOT
from tests.support.runs import bundled_config, run_main, run_make


def _code(name: str) -> set[str]:
    return {str(p.relative_to(ROOT)) for p in code_files(COMMANDS[name].module)}


def test_each_stage_depends_on_its_module_and_the_ground_it_imports():
    cluster = _code("cluster")
    assert {
        "pipeline/stages/cluster/fit.py",
        "pipeline/stages/cluster/place.py",
        "pipeline/neighbours.py",
    } <= cluster
    assert "pipeline/centroids.py" in cluster
    assert {"pipeline/tables.py", "pipeline/schemas.py"} <= cluster
    assert "pipeline/text.py" not in cluster  # the texts reach the fit only as their vectors
    assert not cluster & {
        "pipeline/stages/label/__init__.py",
        "pipeline/stages/embed/__init__.py",
        "pipeline/encoder.py",
    }
    assert "pipeline/encoder.py" in _code("label") and "pipeline/encoder.py" in _code("embed")
    assert "pipeline/scores.py" in _code("metrics") and "pipeline/scores.py" not in _code("compare")
    assert "pipeline/log_odds.py" in _code("compare") and "pipeline/log_odds.py" in _code("render")
    assert {f for f in _code("ingest") if f.startswith("pipeline/stages/ingest/")} == {
        "pipeline/stages/ingest/__init__.py",
        "pipeline/stages/ingest/hyphens.py",
        "pipeline/stages/ingest/memo.py",
        "pipeline/stages/ingest/readers.py",
        "pipeline/stages/ingest/repair.py",
        "pipeline/stages/ingest/venues.py",
    }
    # the files of a package count only where imported: the shards command's module is not
    # ingest's, though both live in stages/ingest/
    assert "pipeline/stages/ingest/shards.py" in _code("shards")
    assert "pipeline/stages/ingest/shards.py" not in _code("ingest")
    render = _code("render")  # a package: its templates and scripts too
    assert {
        "pipeline/stages/render/assets/map.js",
        "pipeline/stages/render/templates/report.html",
    } <= render
    assert "pipeline/stages/cluster/fit.py" in _code("stability")  # quality reruns the clustering
    for name in COMMANDS:  # changing how stages are called changes nothing they compute
        assert not _code(name) & {"pipeline/cli.py", "pipeline/commands.py", "pipeline/api.py"}


def test_deps_command_writes_one_variable_per_command(tmp_path):
    out = tmp_path / "deps.mk"
    result = run_main("deps", "--out", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert text == make_include(ROOT)
    names = [line.split(" := ")[0] for line in text.splitlines() if " := " in line]
    assert names == [f"CODE_{name}" for name in COMMANDS] + ["PAGE_FILES"]
    assert f"PAGE_FILES := {' '.join(render.PAGE_FILES)}" in text.splitlines()


STAGE_OF = {FILES[name]: command for command in COMMANDS.values() for name in command.outputs}


def _rerun(config: Path, *make_args: str) -> set[str]:
    """The stages Make reruns, read from `make -t` (touch mode: Make touches each stale target
    instead of running its recipe, so staleness propagates as in a real run; `make -n` does not
    follow grouped targets in GNU Make 4.3)."""
    result = run_make("-t", *make_args, "all", f"CONFIG={config}")
    assert result.returncode == 0, result.stderr
    touched = [line.split()[-1] for line in result.stdout.splitlines() if line.startswith("touch ")]
    return {STAGE_OF[Path(path).name].name for path in touched if Path(path).name in STAGE_OF}


AFTER_CLUSTER = {"cluster", "label", "metrics", "compare", "csv", "render"}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        ("pipeline/neighbours.py", AFTER_CLUSTER),  # the vote and the map's similar papers
        ("pipeline/centroids.py", AFTER_CLUSTER),
        ("pipeline/scores.py", {"label", "metrics", "compare", "csv", "render"}),  # themes' NPMI
        ("pipeline/stages/compare.py", {"compare", "csv", "render"}),
        ("pipeline/stages/render/templates/map.html", {"render"}),
        ("pipeline/stages/render/assets/style.css", {"render"}),
        ("pipeline/stages/ingest/repair.py", {"ingest", "embed"} | AFTER_CLUSTER),
        ("pipeline/cli.py", set()),
        ("pipeline/commands.py", set()),
        ("pipeline/stages/label/names.py", {"label", "metrics", "compare", "csv", "render"}),
        ("pipeline/stages/csv.py", {"csv"}),
    ],
)
def test_changing_a_module_reruns_the_stages_that_import_it(
    bundled_build: Path, tmp_path: Path, changed: str, expected: set[str]
):
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)  # copy2 keeps the modification times Make compares
    config = bundled_config(tmp_path / "copy.yaml", bundled_build, out)
    assert _rerun(config) == set()  # the copy is up to date
    assert _rerun(config, "-W", changed) == expected

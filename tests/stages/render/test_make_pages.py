"""The Makefile's page rule is render's own list of the files it writes (render.PAGE_FILES,
which `python -m pipeline deps` writes into the Make include): deleting any file of the pages,
a map script or the map's text shards included, makes `make all` render them again."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pipeline.commands import COMMANDS
from pipeline.stages import render
from tests.support.runs import bundled_config, run_make


def _stages_planned(config: Path) -> list[str]:
    """The stages `make -n all` would run (not Make's own include steps)."""
    result = run_make("-n", "all", f"CONFIG={config}")
    assert result.returncode == 0, result.stderr
    return [s for s in re.findall(r"-m pipeline (\w+)", result.stdout) if s in COMMANDS]


@pytest.mark.slow
def test_deleting_any_page_file_makes_make_render_the_pages_again(
    bundled_build: Path, tmp_path: Path
):
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)  # copy2 keeps the modification times Make compares
    config = bundled_config(tmp_path / "copy.yaml", bundled_build, out)
    assert _stages_planned(config) == []  # the copy is up to date
    aside = tmp_path / "aside"
    for name in render.PAGE_FILES:
        (out / name).rename(aside)  # a rename back keeps its time: up to date again after
        try:
            assert _stages_planned(config) == ["render"], name
        finally:
            aside.rename(out / name)
    assert _stages_planned(config) == []
    # one real run: a map script and the first shard come back as render writes them
    for name in ("map-search.js", "map-data/text-000.js"):
        (out / name).unlink()
    result = run_make("all", f"CONFIG={config}")
    assert result.returncode == 0, result.stderr[-3000:]
    script = (render.ASSETS_DIR / "map-search.js").read_bytes()
    assert (out / "map-search.js").read_bytes() == script
    shard = (bundled_build / "map-data" / "text-000.js").read_bytes()
    assert (out / "map-data" / "text-000.js").read_bytes() == shard
    assert _stages_planned(config) == []

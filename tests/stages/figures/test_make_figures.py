"""`make figures` on the bundled build: not part of `make all`, writes the three files once
(then nothing is stale), the PNG at 300 dpi, the SVG with the build's theme labels as text."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from pipeline.labels import theme_level
from tests.support.runs import bundled_config, run_make

FILES = ("map.png", "map.svg", "map.pdf")


def _planned(plan: str) -> list[str]:
    return [
        ln.split("-m pipeline ")[1].split()[0] for ln in plan.splitlines() if "-m pipeline " in ln
    ]


@pytest.mark.slow
def test_make_figures_on_the_bundled_build(bundled_build: Path, tmp_path: Path):
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)  # copy2 keeps the modification times Make compares
    config = bundled_config(tmp_path / "copy.yaml", bundled_build, out)
    plan = run_make("-n", "all", f"CONFIG={config}")
    assert plan.returncode == 0 and "figure" not in _planned(plan.stdout), plan.stdout
    result = run_make("figures", f"CONFIG={config}")
    assert result.returncode == 0, result.stderr[-3000:]
    folder = out / "figures"
    for name in FILES:
        assert 0 < (folder / name).stat().st_size <= 20_000_000, name
    with Image.open(folder / "map.png") as png:
        assert [round(d) for d in png.info["dpi"]] == [300, 300]
    themes = theme_level(pd.read_parquet(out / "themes.parquet"))
    if themes is None:  # no theme level: the topics are labelled
        themes = pd.read_parquet(out / "topics.parquet").query("topic >= 0")
    shown = themes["label"]
    svg = ET.parse(folder / "map.svg").getroot()
    texts = " ".join("".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text"))
    words = " ".join(texts.split())
    assert any(" ".join(str(label).split()) in words for label in shown), (list(shown), words)
    again = run_make("-n", "figures", f"CONFIG={config}")
    assert again.returncode == 0 and "figure" not in _planned(again.stdout), again.stdout

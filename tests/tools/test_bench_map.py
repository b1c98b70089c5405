"""tools/bench_map.py, the source of the map's figures in docs/benchmarks.md: the papers it makes
from the real corpora and the folder it renders (the browser timing itself is `make bench`'s)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.stages.render.mapfiles import SHARD_DIR
from tests.support.map_files import map_papers
from tests.support.paths import CORPORA
from tests.support.runs import load_tool


def _bench_map():
    return load_tool("bench_map")


pytestmark = pytest.mark.skipif(not CORPORA.exists(), reason="needs ../shared/corpora")


def test_copies_of_the_real_papers_get_unique_ids_and_perturbed_places(tmp_path):
    bench_map = _bench_map()
    real = len(bench_map.real_papers())
    assert real == 9673
    tables = bench_map.map_tables(real + 300)
    frame = tables["frame"]
    assert frame["doc_id"].is_unique and len(frame) == real + 300
    assert frame["doc_id"].is_monotonic_increasing  # the page's order
    copies = frame[frame["source"] == frame["source"].iloc[0]]
    assert len(copies) in (1, 2)
    assert tables["vectors"].shape == (real + 300, 384)
    if len(copies) == 2:  # the same text, another place and embedding
        assert copies["abstract"].nunique() == 1 and copies["x"].nunique() == 2
    assert int(tables["topics"]["size"].sum()) == len(frame)


def test_the_bench_renders_a_map_folder_it_can_measure(tmp_path):
    bench_map = _bench_map()
    tables = bench_map.map_tables(400)
    bench_map.render_map(tmp_path, tables)
    sizes = bench_map.folder_bytes(tmp_path)
    assert sizes["shard_files"] == len(list((tmp_path / SHARD_DIR).iterdir())) > 1
    assert sizes["total"] > sizes["map_html"] + sizes["shards"] > 0
    names = ["map.html"] + [f"{SHARD_DIR}/{p.name}" for p in (tmp_path / SHARD_DIR).iterdir()]
    files = {name: (tmp_path / name).read_text(encoding="utf-8") for name in names}
    papers = map_papers(files)
    assert papers["abstract"] == tables["frame"]["abstract"].tolist()
    assert np.allclose(papers["x"], tables["frame"]["x"])


def test_the_report_names_the_cpu_and_the_load_beside_every_figure():
    bench_map = _bench_map()
    row = {"papers": 100_000, "unique": False, "render_s": 60.0, "bytes_per_paper": 565}
    row |= {"map_html_per_paper": 38, "shard_files": 123, "shards_per_paper": 527}
    row |= {"draw_s": 2.1, "text_s": 5.0, "search_s": 0.3, "search_hits": [1, 2, 3]}
    row |= {"click_s": 0.08, "zoom_s": 0.05, "js_heap_mb": 500, "problems": [], "load": [1.2, 2.5]}
    row |= {"select_s": 0.6, "selected": [100_000, 10_012], "select_counted_s": 0.4}
    row |= {"select_titled_s": 0.5, "csv_s": 1.4, "csv_mb": 3.2, "bibtex_s": 1.1}
    row |= {"brush_s": 0.4, "recolour_s": 0.3}
    cpu, line = bench_map.report([row]).splitlines()
    assert cpu.startswith("CPU ") and "cores, flags" in cpu
    assert "100,000 papers" in line and "points drawn 2.1 s" in line
    assert "a tenth selected 0.6 s (10,012 papers" in line and "as CSV 1.4 s (3.2 MB)" in line
    assert line.endswith("load 1.2-2.5")

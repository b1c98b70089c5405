"""pipeline/timings.py: each stage run's figures in <output_dir>/.timings/<stage>.json, the
benches' source (never the log lines)."""

from __future__ import annotations

import json
import time

import pytest

from pipeline import timings
from pipeline.errors import PipelineError


def test_a_record_holds_the_last_runs_figures_and_what_the_stage_added(tmp_path):
    timings.record(tmp_path, "embed", new_papers=5, embedding_s=9.0)  # an earlier run's
    started = timings.begin(tmp_path, "embed")
    assert not timings.timings_path(tmp_path, "embed").exists()  # forgotten as the run starts
    timings.record(tmp_path, "embed", new_papers=3, embed_s=1.5)
    timings.record(tmp_path, "embed", embed_s=2.5)  # recorded again: replaced
    figures = timings.finish(tmp_path, "embed", started - 1.25, "ray")
    assert figures == timings.read(tmp_path, "embed")
    assert {k: figures[k] for k in ("new_papers", "embed_s", "engine")} == {
        "new_papers": 3,
        "embed_s": 2.5,
        "engine": "ray",
    }
    assert "embedding_s" not in figures and 1.25 <= figures["wall_s"] < 30
    assert figures["peak_mb"] == round(timings.peak_memory_mb()) > 10
    path = tmp_path / ".timings" / "embed.json"
    assert json.loads(path.read_text(encoding="utf-8")) == figures


def test_a_failed_run_leaves_no_record_and_reading_it_is_one_line(tmp_path):
    timings.finish(tmp_path, "cluster", time.perf_counter())
    timings.begin(tmp_path, "cluster")  # the run then fails: finish is never reached
    with pytest.raises(PipelineError) as info:
        timings.read(tmp_path, "cluster")
    assert str(info.value).startswith(f"{tmp_path / '.timings' / 'cluster.json'}: ")
    assert "not found" in str(info.value) and "\n" not in str(info.value)


def test_recorded_gives_every_stages_record_by_name(tmp_path):
    assert timings.recorded(tmp_path) == {}
    timings.record(tmp_path, "render", wall_s=1.0)
    timings.record(tmp_path, "compare", wall_s=2.0)
    assert timings.recorded(tmp_path) == {"compare": {"wall_s": 2.0}, "render": {"wall_s": 1.0}}

"""pipeline/timings.py: each stage run's figures in <output_dir>/.timings/<stage>.json, the
benches' source (never the log lines)."""

from __future__ import annotations

import json

import pytest

from pipeline import timings
from pipeline.errors import PipelineError


def test_a_record_holds_the_last_runs_figures_and_what_the_stage_added(tmp_path):
    earlier = timings.begin(tmp_path, "embed")
    timings.record(tmp_path, "embed", new_papers=5, cached_papers=0)
    timings.finish(tmp_path, "embed", earlier)
    started = timings.begin(tmp_path, "embed")
    assert timings.read(tmp_path, "embed") == {}  # the earlier run's forgotten as this starts
    timings.record(tmp_path, "embed", new_papers=3, embed_s=1.5)
    timings.record(tmp_path, "embed", embed_s=2.5)  # recorded again: replaced
    figures = timings.finish(tmp_path, "embed", started - 1.25, "ray")
    assert figures == timings.read(tmp_path, "embed")
    assert {k: figures[k] for k in ("new_papers", "embed_s", "engine")} == {
        "new_papers": 3,
        "embed_s": 2.5,
        "engine": "ray",
    }
    assert "cached_papers" not in figures and 1.25 <= figures["wall_s"] < 30
    assert figures["peak_mb"] == round(timings.peak_memory_mb()) > 10
    path = tmp_path / ".timings" / "embed.json"
    assert json.loads(path.read_text(encoding="utf-8")) == figures


def test_a_stage_run_by_itself_keeps_no_record(tmp_path):
    """A stage's run() called outside the CLI and the API (as tests do) writes nothing."""
    timings.record(tmp_path / "out", "embed", new_papers=3)
    assert not (tmp_path / "out").exists()


def test_a_failed_run_leaves_a_record_without_its_time_and_reading_none_is_one_line(tmp_path):
    with pytest.raises(PipelineError) as info:
        timings.read(tmp_path, "cluster")
    assert str(info.value).startswith(f"{tmp_path / '.timings' / 'cluster.json'}: ")
    assert "not found" in str(info.value) and "\n" not in str(info.value)
    timings.finish(tmp_path, "cluster", timings.begin(tmp_path, "cluster"))
    timings.begin(tmp_path, "cluster")  # the run then fails: finish is never reached
    assert timings.read(tmp_path, "cluster") == {}


def test_recorded_gives_every_stages_record_by_name(tmp_path):
    assert timings.recorded(tmp_path) == {}
    for stage, seconds in (("render", 1.0), ("compare", 2.0)):
        timings.begin(tmp_path, stage)
        timings.record(tmp_path, stage, wall_s=seconds)
    assert timings.recorded(tmp_path) == {"compare": {"wall_s": 2.0}, "render": {"wall_s": 1.0}}


def test_a_file_where_the_output_folder_goes_is_left_to_the_stage_to_report(tmp_path):
    blocked = tmp_path / "outputs"
    blocked.write_text("a file", encoding="utf-8")
    assert timings.begin(blocked, "ingest") > 0  # no error here: the stage's own comes next

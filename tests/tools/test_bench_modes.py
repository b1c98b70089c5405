"""tools/bench_modes.py: which embedding modes are faithful, the one `auto` then takes, and the
modes file it is kept in; and the embed stamp, which names the precision `auto` stands for."""

from __future__ import annotations

import json

import pytest

from pipeline import encoder as encoders
from pipeline.commands import COMMANDS, command_stamp
from pipeline.config import Config
from tests.support.runs import load_tool

modes = load_tool("bench_modes")

FP32 = {
    "papers_per_s": 30.0,
    "cosine_min": 1.0,
    "cosine_mean": 1.0,
    "ari_to_fp32": 1.0,
    "npmi_mean": 0.20,
    "topic_diversity": 0.80,
}


def _row(**changes) -> dict:
    return {**FP32, **changes}


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        pytest.param(
            _row(papers_per_s=90, cosine_mean=0.99998, ari_to_fp32=0.93), True, id="bf16-like"
        ),
        pytest.param(_row(cosine_mean=0.985), False, id="vectors-moved"),
        pytest.param(_row(ari_to_fp32=0.89), False, id="topics-agree-less-than-two-seeds"),
        pytest.param(_row(npmi_mean=0.189), False, id="npmi-lower-by-over-0.01"),
        pytest.param(_row(npmi_mean=0.211), False, id="npmi-higher-by-over-0.01"),
        pytest.param(_row(topic_diversity=0.789), False, id="diversity-off-by-over-0.01"),
        pytest.param(_row(npmi_mean=0.205, topic_diversity=0.795), True, id="within-0.01"),
    ],
)
def test_a_mode_is_faithful_only_when_vectors_topics_and_terms_hold(row, expected):
    assert modes.faithful(row, FP32, seed_pair_ari=0.9) is expected


def test_auto_gets_the_fastest_faithful_mode():
    measured = {
        "fp32": dict(FP32, faithful=True),
        "bf16": _row(papers_per_s=90, faithful=True),
        "int8": _row(papers_per_s=120, faithful=False),
    }
    assert modes.choose(measured) == "bf16"
    measured["bf16"]["faithful"] = False
    assert modes.choose(measured) == "fp32"


def test_the_modes_file_keeps_other_cpus_and_auto_reads_this_ones(tmp_path, monkeypatch):
    path = tmp_path / "cache" / encoders.MODES_FILE
    path.parent.mkdir()
    path.write_text(json.dumps({"another CPU": {"choice": "int8"}}), encoding="utf-8")
    monkeypatch.setattr(encoders, "cpu_identity", lambda: "this CPU")
    result = {
        "cpu": "this CPU",
        "papers": 10,
        "seed_pair_ari": 0.9,
        "choice": "bf16",
        "modes": {"fp32": dict(FP32, faithful=True)},
    }
    modes.record(result, path)
    known = json.loads(path.read_text(encoding="utf-8"))
    assert known["another CPU"] == {"choice": "int8"}
    assert known["this CPU"]["choice"] == "bf16"
    config = Config(inputs=["x.txt"], embed={"cache_dir": str(path.parent)})
    assert encoders.resolve_precision(config.embed) == "bf16"
    lines = modes.report(result)
    assert "auto chooses bf16 on this CPU" in lines[-1] and "fp32 |     30.0 |" in lines[2]


def test_the_embed_stamp_names_the_precision_auto_stands_for(tmp_path, monkeypatch):
    monkeypatch.setattr(encoders, "cpu_identity", lambda: "this CPU")
    monkeypatch.setattr(encoders, "cpu_has_native_bf16", lambda: False)
    config = Config(inputs=["x.txt"], embed={"cache_dir": str(tmp_path)})
    before = {name: command_stamp(config, COMMANDS[name]) for name in COMMANDS}
    assert json.loads(before["embed"])["machine"] == {"embed_precision": "fp32"}
    assert "machine" not in json.loads(before["cluster"])
    (tmp_path / encoders.MODES_FILE).write_text('{"this CPU": {"choice": "int8"}}')
    after = {name: command_stamp(config, COMMANDS[name]) for name in COMMANDS}
    assert json.loads(after["embed"])["machine"] == {"embed_precision": "int8"}
    changed = {name for name in COMMANDS if before[name] != after[name]}
    assert changed == {name for name, c in COMMANDS.items() if "embed" in c.sections}
    assert changed >= {"embed", "label"}


def test_a_modes_build_gives_the_embed_stages_papers_per_second_from_its_record(
    tmp_path, monkeypatch
):
    """papers/s of a mode: the embed stage's new papers over its seconds, as `topicmap build`
    recorded them (pipeline.timings), not a log line."""
    import types

    from pipeline import timings

    out = tmp_path / "out"

    def build(command, **kwargs):
        assert command[2:4] == ["pipeline", "build"] and f"output_dir={out}" in command
        timings.begin(out, "embed")
        timings.record(out, "embed", new_papers=120, cached_papers=0, embed_s=4.0)
        return types.SimpleNamespace(returncode=0, stderr="")

    monkeypatch.setattr(modes.subprocess, "run", build)
    assert modes._build(tmp_path / "c.yaml", out, "bf16") == 30.0

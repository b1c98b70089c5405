"""`make bench BENCH_ARGS="--sections ray"`: the embed stage on the local engine against Ray (a
local instance, `engine.concurrency` 2 actors of one core each) on the config's corpus, side
by side in one run (alternating, `--runs` of each, the median reported, with the machine's load
average at each start), then the cluster and label stages on both outputs: throughput (the whole
stage, and the embedding itself once the model is loaded or the first actor ready), ratio,
whether the embeddings and the topics are identical, and the CPU's flags.

Developer code (imported by tools/bench.py): it is not part of the installed package.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from bench_limit import cpu_flags
from bench_stage import figure, run_stage

from pipeline import schemas, tables
from pipeline.config import EngineConfig
from pipeline.document_shards import manifest_of
from pipeline.stages.ingest import shards

ROOT = Path(__file__).resolve().parents[1]
WORKERS = 2


def as_ingest_leaves(documents: Path, engine: dict) -> None:
    """Beside a documents table, what make all leaves for the engine before the embed stage (on
    Ray, the documents shards the shards command writes), so that the embed stage finds them."""
    config = EngineConfig(**engine)
    if config.kind == "ray":
        shards.run(config, documents, manifest_of(documents))


def _config(base: dict, work: Path, kind: str) -> Path:
    out = work / f"engine-{kind}"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(work / "ingest" / "documents.parquet", out / "documents.parquet")
    data = dict(base, output_dir=str(out))
    data["embed"] = dict(base.get("embed") or {}, cache_dir=None, progress_bar=False)
    data["engine"] = dict(base.get("engine") or {}, kind=kind, concurrency=WORKERS)
    as_ingest_leaves(out / "documents.parquet", data["engine"])
    path = work / f"engine-{kind}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _embed(config: Path) -> dict:
    """One cold embed stage (no cache): its figures, and the load average when it started."""
    load = os.getloadavg()[0]
    record = run_stage("embed", config)
    figures = {
        "papers": figure(record, "new_papers", "embed"),
        "embed_s": figure(record, "embed_s", "embed"),
        "load": load,
        "stage_s": figure(record, "wall_s", "embed"),
        "working_s": figure(record, "embedding_s", "embed"),
    }
    if record.get("engine") == "ray":  # the actors' own time: first shard handed out to last back
        figures.update({name: figure(record, name, "embed") for name in ("shards", "actors")})
        figures["actors_s"] = figure(record, "ray_s", "embed")
    return figures


def _median_run(runs: list[dict]) -> dict:
    ordered = sorted(runs, key=lambda r: r["embed_s"])
    return {**ordered[len(ordered) // 2], "runs": len(runs), "loads": [r["load"] for r in runs]}


def _topics(config: Path) -> float:
    start = time.perf_counter()
    for stage in ("cluster", "label"):
        run_stage(stage, config)
    return time.perf_counter() - start


def _tables(config: Path) -> tuple[np.ndarray, pd.DataFrame, pd.DataFrame]:
    out = Path(yaml.safe_load(config.read_text(encoding="utf-8"))["output_dir"])
    vectors = tables.read_embeddings(out / "embeddings.parquet")[1]
    clusters = tables.read_table(out / "clusters.parquet", schemas.CLUSTERS)
    topics = tables.read_table(out / "topics.parquet", schemas.TOPICS)
    return vectors, clusters, topics[["topic", "label", "size"]]


def bench_ray(config_path: Path, work: Path, runs: int = 1) -> dict:
    """Local engine and Ray with WORKERS actors in turn, `runs` times, on the corpus ingested in
    `work/ingest`; then cluster and label on each engine's embeddings."""
    base = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    configs = {kind: _config(base, work, kind) for kind in ("local", "ray")}
    measured = {kind: [] for kind in configs}
    for _ in range(runs):
        for kind, path in configs.items():
            measured[kind].append(_embed(path))
    results = {kind: _median_run(measured[kind]) for kind in configs}
    for kind, path in configs.items():
        results[kind]["cluster_label_s"] = _topics(path)
    (lv, lc, lt), (rv, rc, rt) = (_tables(configs[k]) for k in ("local", "ray"))
    local_rate = results["local"]["papers"] / results["local"]["embed_s"]
    ray_rate = results["ray"]["papers"] / results["ray"]["embed_s"]
    return {
        **results,
        "workers": WORKERS,
        "local_per_s": local_rate,
        "ray_per_s": ray_rate,
        "ray_actors_per_s": results["ray"]["papers"] / results["ray"]["actors_s"],
        "ratio": ray_rate / local_rate,
        "working_ratio": results["local"]["working_s"] / results["ray"]["working_s"],
        "min_cosine": float(np.einsum("nd,nd->n", lv, rv).min()),
        "identical_embeddings": bool(np.array_equal(lv, rv)),
        "identical_topics": bool(lc.equals(rc) and lt.equals(rt)),
        "cpu_flags": cpu_flags(),
        "cores": len(os.sched_getaffinity(0)),
        "shard_papers": EngineConfig(**(base.get("engine") or {})).shard_papers,
    }


def report(r: dict) -> list[str]:
    local, ray = r["local"], r["ray"]
    loads = ", ".join(f"{a:.1f}/{b:.1f}" for a, b in zip(local["loads"], ray["loads"], strict=True))
    return [
        f"ray ({local['papers']} papers; {r['cores']} cores; CPU flags "
        f"{' '.join(r['cpu_flags']) or 'none listed'}; shards of {r['shard_papers']} papers; "
        f"median of {local['runs']} alternating "
        f"runs, load average at each start local/ray: {loads}):",
        f"  local engine        {r['local_per_s']:7.1f} papers/s   embed {local['embed_s']:.1f} s"
        f"  (stage {local['stage_s']:.1f} s)",
        f"  ray, {r['workers']} workers      {r['ray_per_s']:7.1f} papers/s   embed "
        f"{ray['embed_s']:.1f} s  (stage {ray['stage_s']:.1f} s; the actors "
        f"{ray['actors_s']:.1f} s over {ray['shards']} shards: {r['ray_actors_per_s']:.1f}/s)",
        f"  while embedding     {local['papers'] / local['working_s']:7.1f} papers/s local (once "
        f"the model was loaded: {local['working_s']:.1f} s), {ray['papers'] / ray['working_s']:.1f}"
        f" on Ray (once the first actor was ready: {ray['working_s']:.1f} s): "
        f"{r['working_ratio']:.3f}x",
        f"  ratio ray / local   {r['ratio']:7.3f}x   min cosine {r['min_cosine']:.6f}, "
        f"embeddings {'identical' if r['identical_embeddings'] else 'DIFFERENT'}, topics "
        f"{'identical' if r['identical_topics'] else 'DIFFERENT'} "
        f"(cluster + label {local['cluster_label_s']:.0f} s / {ray['cluster_label_s']:.0f} s)",
    ]

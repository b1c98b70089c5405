"""Benches of corpora grown from the cold build's papers (tools/bench.py runs them after its
build section, in the same work folder).

- scaling (--scaling 10000,30000,100000): cluster, label and render at those sizes, the papers
  repeated and their embeddings perturbed: time and peak memory per stage, the fit's topics and
  the shares of papers unassigned and fitted (the rest placed into the sample fit).
- adding at scale (--grow-sizes 100000): a corpus of that many such papers built by `make all`
  (each copy's abstract marked with its copy number, so that ingest keeps it as a paper of its
  own and the papers added are new to it, and its perturbed vector put in the build's
  embeddings cache under its text, so that no copy is embedded), then the 19 ICLR 2025 papers
  added to it by `make all`, ADD_RUNS times from copies of the built folder and cache (the
  median reported beside every run: one add of 30 s varies by seconds on a 2-core machine):
  seconds, each stage's wall time (the median run's), and whether every known paper kept its
  topic, label and position (in every run).
Developer code: not part of the installed package.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import bench_stage
import numpy as np
import pandas as pd
import yaml

from pipeline import schemas, tables

SCALING_STAGES = ("cluster", "label", "metrics", "compare", "export", "render")
NOISE = 0.01  # the perturbation of a copy's embedding (then made unit length again)
ADD_RUNS = 3  # adds at scale, each from the same built folder


def _grown(cold: Path, size: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """(documents, vectors, copy number) of the cold build's papers repeated to `size`."""
    documents = tables.read_table(cold / "documents.parquet", schemas.DOCUMENTS)
    _, vectors = tables.read_embeddings(cold / "embeddings.parquet", documents=documents)
    take = np.arange(size) % len(documents)
    rng = np.random.default_rng(0)
    noisy = vectors[take] + rng.normal(0, NOISE, (size, vectors.shape[1])).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    return documents.iloc[take].reset_index(drop=True), noisy, np.arange(size) // len(documents)


def bench_scaling(config_path: Path, work: Path, sizes: list[int]) -> list[dict]:
    """cluster/label/render on corpora grown from the real one by perturbing its embeddings."""
    cold = work / "cold"
    rows = []
    for size in sizes:
        folder = work / f"scale_{size}"
        folder.mkdir()
        grown, noisy, copy = _grown(cold, size)
        grown["doc_id"] = [f"{d}-{c}" for d, c in zip(grown["doc_id"], copy, strict=True)]
        how = f"the cold build's papers repeated to {size}, embeddings perturbed (seed 0)"
        bench_stage.write_tables(folder, grown, cold / "documents.parquet", how, noisy)
        base = yaml.safe_load(config_path.read_text(encoding="utf-8"))
        inputs = [str(folder / "documents.parquet")]
        config = bench_stage.write_config(
            folder / "config.yaml", base, inputs, folder, work / "cache"
        )
        row = {"papers": size}
        for stage in SCALING_STAGES:
            figures = bench_stage.run_stage(stage, config)
            row[stage] = (figures["wall_s"], figures["peak_mb"])
            if stage == "cluster":
                row.update(_topic_counts(folder))
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def _topic_counts(folder: Path) -> dict:
    """The fit's topics, the share of papers unassigned and of those fitted (not placed)."""
    clusters = tables.read_table(folder / "clusters.parquet", schemas.CLUSTERS, ["topic", "placed"])
    return {
        "topics": int(clusters.loc[clusters["topic"] >= 0, "topic"].nunique()),
        "unassigned": float((clusters["topic"] < 0).mean()),
        "fitted": float((clusters["placed"] == "fit").mean()),
    }


def _copies_input(cold: Path, folder: Path, size: int, cache: Path) -> Path:
    """The grown corpus as one input table, and its vectors in `cache` under their texts."""
    from pipeline import encoder as encoders
    from pipeline.config import EmbedConfig
    from pipeline.stages.embed import EmbeddingCache, cache_path
    from pipeline.text import embedding_texts, text_key

    grown, noisy, copy = _grown(cold, size)
    pairs = zip(grown["abstract"], copy, strict=True)
    # every copy marked, the first too: the cold build holds the 19 papers added later, and an
    # unmarked copy of one would make the added paper a duplicate (rejected, nothing added)
    marked = [f"{a} (copy {c})" for a, c in pairs]
    grown = grown.assign(abstract=marked)
    table = pd.DataFrame(
        {
            "abstract": grown["abstract"],
            "title": grown["title"],
            "venue": grown["venue"] + " " + grown["year"].astype("string").fillna(""),
            "url": grown["url"],
            "track": grown["track"],
        }
    )
    table.to_parquet(folder / "copies.parquet")
    config = EmbedConfig()
    precision = encoders.resolve_precision(config)
    path = cache_path(cache, config.model, precision, encoders.batch_rows(config, precision))
    known = EmbeddingCache(path, noisy.shape[1])
    known.vectors.update(zip(map(text_key, embedding_texts(grown)), noisy, strict=True))
    known.save()
    return folder / "copies.parquet"


def _known(folder: Path) -> pd.DataFrame:
    clusters = tables.read_table(folder / "clusters.parquet", schemas.CLUSTERS)
    topics = tables.read_table(folder / "topics.parquet", schemas.TOPICS)
    return clusters.merge(topics[["topic", "label"]], on="topic", how="left")


def bench_add_at_scale(config_path: Path, work: Path, size: int, added: Path) -> dict:
    """A built corpus of `size` grown papers, then `added`'s papers added by `make all`."""
    folder = work / f"grow_{size}"
    folder.mkdir()
    cache = folder / "cache"
    copies = _copies_input(work / "cold", folder, size, cache)
    base = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    out = folder / "out"
    config = bench_stage.write_config(folder / "base.yaml", base, [str(copies)], out, cache)
    cold_s, _ = bench_stage.run_make(config)
    before = _known(out)
    for path in (out, cache):  # copytree keeps the times Make compares
        shutil.copytree(path, path.with_name(f"{path.name}_built"), symlinks=True)
    inputs = [str(copies), str(added)]
    config = bench_stage.write_config(folder / "grown.yaml", base, inputs, out, cache)
    runs = [_add_once(config, out, cache, before) for _ in range(ADD_RUNS)]
    median = sorted(runs, key=lambda r: r["add_s"])[len(runs) // 2]
    return {
        "papers": len(before),
        "cold_s": cold_s,
        **median,
        "add_runs": [r["add_s"] for r in runs],
        "unchanged": all(r["unchanged"] for r in runs),
    }


def _add_once(config: Path, out: Path, cache: Path, before: pd.DataFrame) -> dict:
    """One add from the built folder and cache (restored first; the config made newer, so
    that Make reads it again as the first add does)."""
    for path in (out, cache):
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(path.with_name(f"{path.name}_built"), path, symlinks=True)
    os.utime(config)
    add_s, records = bench_stage.run_make(config)
    after = _known(out)
    kept = after.merge(before, on="doc_id", suffixes=("", "_before"))
    unchanged = len(kept) == len(before) and all(
        kept[c].equals(kept[f"{c}_before"]) for c in ("topic", "label", "x", "y")
    )
    return {
        "add_s": add_s,
        "added": int((after["placed"] == "added").sum()),
        "stages": {name: r.get("wall_s") for name, r in records.items()},
        "unchanged": bool(unchanged),
    }


def run(config_path: Path, work: Path, sizes: str, added: Path) -> list[dict]:
    """The adding-at-scale section at each of `sizes` (a comma list), printed as it goes."""
    results = []
    for size in [int(s) for s in sizes.split(",")]:
        results.append(bench_add_at_scale(config_path, work, size, added))
        print("\n".join(report_add(results[-1:])), flush=True)
    return results


def report_scaling(rows: list[dict]) -> list[str]:
    lines = [
        f"scaling (s wall / peak MB):  papers | topics | unassigned | fitted "
        f"| {' | '.join(SCALING_STAGES)} | cluster + label + render"
    ]
    for row in rows:
        cells = " | ".join(f"{row[s][0]:.0f} s / {row[s][1]} MB" for s in SCALING_STAGES)
        total = sum(row[s][0] for s in ("cluster", "label", "render"))
        peak = max(row[s][1] for s in SCALING_STAGES)
        lines.append(
            f"  {row['papers']:>7} | {row.get('topics', '-')} "
            f"| {100 * row.get('unassigned', 0):.1f}% | {100 * row.get('fitted', 0):.1f}% "
            f"| {cells} | {total:.0f} s, peak {peak} MB"
        )
    return lines


def report_add(results: list[dict]) -> list[str]:
    lines = []
    for r in results:
        stages = ", ".join(f"{name} {s:.1f} s" for name, s in r["stages"].items() if s)
        lines += [
            f"add 19 papers to a built corpus of {r['papers']} (cold make all {r['cold_s']:.0f} s):"
            f" {r['add_s']:.1f} s (goal <= 30 s; median of"
            f" {', '.join(f'{x:.1f}' for x in r.get('add_runs', [r['add_s']]))} s),"
            f" {r['added']} placed, known papers' topics,"
            f" labels and positions {'unchanged' if r['unchanged'] else 'CHANGED'}",
            f"  stages: {stages}",
        ]
    return lines

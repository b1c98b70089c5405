"""`make bench BENCH_ARGS="--ray-sizes 10000,30000,100000"`: the stages whose work grows with the
corpus at growing sizes, on the local engine and on Ray (a local instance), side by side: each
stage's wall time and its driver's peak memory, the embedding's papers/s, and whether both
engines gave the same vectors and topics.

A corpus of N papers is made from the 9,673 ICML + ICLR 2020-2023 papers in ../shared/corpora,
each copy's title marked with its copy number (" [copy k]"), so that every text is new to the
embedder (the embed stage embeds a text once). Each size runs on the local engine (two threads)
and on Ray with two one-core workers; the smallest also on Ray with one worker, which shows the
per-paper stages' throughput growing with workers. Embedding runs without a cache. The cluster
stage fits on at most `cluster.fit_max_papers` papers on the driver and places the rest on the
engine. Peak memory is the stage process's: Ray's workers are processes of Ray's own.
Developer code (imported by tools/bench.py): it is not part of the installed package.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import numpy as np
import yaml
from bench_ray import as_ingest_leaves
from bench_stage import figure, run_stage, write_tables

from pipeline import schemas, tables
from pipeline.encoder import cpu_flags

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
STAGES = ("embed", "cluster", "label")


def grown_documents(documents, size: int):
    """`size` papers from `documents`, copies marked in their titles and doc_ids."""
    take = np.arange(size) % len(documents)
    copy = np.arange(size) // len(documents)
    grown = documents.iloc[take].reset_index(drop=True)
    titles, ids = grown["title"].tolist(), grown["doc_id"].tolist()
    grown["title"] = [t if c == 0 else f"{t} [copy {c}]" for t, c in zip(titles, copy, strict=True)]
    grown["doc_id"] = [d if c == 0 else f"{d}-{c}" for d, c in zip(ids, copy, strict=True)]
    return grown


def _real_documents(work: Path):
    """(the shared corpora's papers, ingested; the documents table holding them)."""
    from pipeline.config import IngestConfig
    from pipeline.stages import ingest

    files = sorted(str(p) for p in CORPORA.glob("*.parquet"))
    out = work / "ray-scaling-ingest"
    documents = out / "documents.parquet"
    return ingest.run(IngestConfig(), files, documents, out / "rejected.parquet"), documents


def _engine_config(base: dict, folder: Path, kind: str, workers: int) -> Path:
    data = dict(base, inputs=[str(folder / "documents.parquet")], output_dir=str(folder))
    data["embed"] = dict(base.get("embed") or {}, cache_dir=None, progress_bar=False)
    data["engine"] = dict(base.get("engine") or {}, kind=kind, concurrency=workers)
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _run(config: Path) -> dict:
    row = {}
    for stage in STAGES:
        record = run_stage(stage, config)
        row[stage] = (record["wall_s"], record["peak_mb"])
        if stage == "embed":
            papers, seconds = (figure(record, f, stage) for f in ("new_papers", "embed_s"))
            row["embed_per_s"] = papers / seconds
    return row


def _outcome(folder: Path):
    vectors = tables.read_embeddings(folder / "embeddings.parquet")[1]
    clusters = tables.read_table(folder / "clusters.parquet", schemas.CLUSTERS)
    return vectors, clusters


def bench_ray_scaling(config_path: Path, work: Path, sizes: list[int]) -> list[dict]:
    base = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    documents, source = _real_documents(work)
    rows = []
    for size in sizes:
        engines = [("local", 2), ("ray", 2)] + ([("ray", 1)] if size == min(sizes) else [])
        grown = grown_documents(documents, size)
        for kind, workers in engines:
            folder = work / f"ray-scaling-{size}-{kind}-{workers}"
            folder.mkdir(parents=True)
            write_tables(folder, grown, source, f"the real papers repeated to {size}")
            engine = dict(base.get("engine") or {}, kind=kind)
            as_ingest_leaves(folder / "documents.parquet", engine)
            row = {"papers": size, "engine": kind, "workers": workers}
            row.update(_run(_engine_config(base, folder, kind, workers)))
            rows.append(row)
            print(row, file=sys.stderr, flush=True)
        local = _outcome(work / f"ray-scaling-{size}-local-2")
        for row in rows[-len(engines) :]:
            vectors, clusters = _outcome(
                work / f"ray-scaling-{size}-{row['engine']}-{row['workers']}"
            )
            row["identical_embeddings"] = bool(np.array_equal(local[0], vectors))
            row["identical_clusters"] = bool(local[1].equals(clusters))
    return rows


def _heading(title: str) -> str:
    """The table's title with the machine it was measured on."""
    return (
        f"{title} ({len(os.sched_getaffinity(0))} cores; CPU flags "
        f"{' '.join(cpu_flags()) or 'none listed'}; s wall / driver's peak MB):"
    )


def _engine(row: dict) -> str:
    return "local" if row["engine"] == "local" else f"ray x{row['workers']}"


def report(rows: list[dict]) -> list[str]:
    lines = [
        _heading("ray scaling"),
        "  papers | engine  | embed | papers/s | cluster | label | same as local",
    ]
    for r in rows:
        engine = _engine(r)
        cells = " | ".join(f"{r[s][0]:.0f} s / {r[s][1]} MB" for s in STAGES[:1])
        rest = " | ".join(f"{r[s][0]:.0f} s / {r[s][1]} MB" for s in STAGES[1:])
        same = "yes" if r["identical_embeddings"] and r["identical_clusters"] else "NO"
        lines.append(
            f"  {r['papers']:>7} | {engine:7} | {cells} | {r['embed_per_s']:8.1f} | {rest} | {same}"
        )
    return lines


def _real_vectors(base: dict, source: Path, work: Path) -> np.ndarray:
    """The real papers' embeddings (the config's embed section and cache)."""
    folder = work / "ray-label-real"
    folder.mkdir(parents=True)
    shutil.copy(source, folder / "documents.parquet")
    data = dict(base, inputs=[str(folder / "documents.parquet")], output_dir=str(folder))
    data["embed"] = dict(base.get("embed") or {}, progress_bar=False)
    (folder / "config.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    run_stage("embed", folder / "config.yaml")
    return tables.read_embeddings(folder / "embeddings.parquet")[1]


def _label_row(folder: Path, size: int, kind: str, workers: int, base: dict) -> dict:
    record = run_stage("label", _engine_config(base, folder, kind, workers))
    label = (record["wall_s"], record["peak_mb"])
    return {"papers": size, "engine": kind, "workers": workers, "label": label}


def bench_label_ray(config_path: Path, work: Path, sizes: list[int]) -> list[dict]:
    """The label stage (its term counts on the engine) at growing sizes, local and on Ray: the
    real papers repeated (copies' titles marked), their embeddings perturbed (no embedding),
    clustered once on the local engine; the same topics and themes on every engine?"""
    base = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    documents, source = _real_documents(work)
    vectors = _real_vectors(base, source, work)
    rng = np.random.default_rng(0)
    rows = []
    for size in sizes:
        grown = grown_documents(documents, size)
        take = np.arange(size) % len(documents)
        noisy = vectors[take] + (take != np.arange(size))[:, None] * rng.normal(
            0, 0.01, (size, vectors.shape[1])
        ).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        local = work / f"ray-label-{size}-local-2"
        local.mkdir(parents=True)
        how = f"the real papers repeated to {size}, copies' embeddings perturbed (seed 0)"
        write_tables(local, grown, source, how, noisy)
        run_stage("cluster", _engine_config(base, local, "local", 2))
        engines = [("local", 2), ("ray", 2)] + ([("ray", 1)] if size == min(sizes) else [])
        for kind, workers in engines:
            folder = work / f"ray-label-{size}-{kind}-{workers}"
            if folder != local:
                shutil.copytree(
                    local, folder, ignore=shutil.ignore_patterns("topics.parquet", "themes.parquet")
                )
            rows.append(_label_row(folder, size, kind, workers, base))
            pairs = (("topics.parquet", schemas.TOPICS), ("themes.parquet", schemas.THEMES))
            same = [
                tables.read_table(folder / n, s).equals(tables.read_table(local / n, s))
                for n, s in pairs
            ]
            rows[-1]["same_labels"] = all(same)
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def report_label(rows: list[dict]) -> list[str]:
    lines = [
        _heading("label on the engines"),
        "  papers | engine  | label | same topics and themes as local",
    ]
    for r in rows:
        engine = _engine(r)
        lines.append(
            f"  {r['papers']:>7} | {engine:7} | {r['label'][0]:.0f} s / {r['label'][1]} MB | "
            f"{'yes' if r['same_labels'] else 'NO'}"
        )
    return lines

"""`make bench BENCH_ARGS="--sections sample"`: a topic model fitted on a sample of the corpus
against one fitted on all of it, on the ICML + ICLR 2020-2023 corpora (9,673 papers).

Builds the corpus with a full fit (`make all` and `make stability`: the worst pair of seeds'
agreement), then with the model fitted on a stratified half and the other half assigned, and
prints the adjusted Rand index between the two and both builds' quality figures.
Developer code: not part of the installed package.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from bench_stage import run_make

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
FILES = [f"{venue}{year}.parquet" for venue in ("iclr", "icml") for year in range(2020, 2024)]
FIGURES = ("topics", "unassigned_share", "largest_topic_share", "npmi_mean", "topic_diversity")


def _config(work: Path, name: str, cache: Path, **cluster) -> Path:
    data = {
        "inputs": [str(CORPORA / f) for f in FILES],
        "output_dir": str(work / name),
        "embed": {"cache_dir": str(cache), "progress_bar": False},
        "cluster": cluster,
    }
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def bench_sample(work: Path, cache: Path) -> dict:
    """Full fit vs a fit on half the papers, on the 9,673 papers."""
    import sys

    sys.path.insert(0, str(ROOT))
    from sklearn.metrics import adjusted_rand_score

    from pipeline import schemas, tables

    full = _config(work, "full", cache)
    full_s, _ = run_make(full)
    run_make(full, "stability")
    n = len(tables.read_table(work / "full" / "documents.parquet", schemas.DOCUMENTS))
    half_dir = work / "half"
    half_dir.mkdir()
    for name in ("documents.parquet", "rejected.parquet", "embeddings.parquet"):
        shutil.copy2(work / "full" / name, half_dir / name)  # the same papers and vectors
    half = _config(work, "half", cache, fit_max_papers=n // 2)
    half_s, _ = run_make(half)
    a = tables.read_table(work / "full" / "clusters.parquet", schemas.CLUSTERS)
    b = tables.read_table(half_dir / "clusters.parquet", schemas.CLUSTERS)
    metrics = {k: json.loads((work / k / "metrics.json").read_text()) for k in ("full", "half")}
    stability = json.loads((work / "full" / "stability.json").read_text())
    return {
        "papers": n,
        "fitted_on_sample": int((b["placed"] == "fit").sum()),
        "full_s": full_s,
        "half_s": half_s,
        "ari_sample_vs_full": float(adjusted_rand_score(a["topic"], b["topic"])),
        "ari_full_worst_seed_pair": stability["ari_min"],
        "figures": {k: {f: metrics[k][f] for f in FIGURES} for k in metrics},
    }


def report(s: dict) -> list[str]:
    lines = [
        f"sample fit ({s['papers']} papers, model fitted on {s['fitted_on_sample']}, the rest "
        "assigned) vs full fit:",
        f"  ARI sample vs full {s['ari_sample_vs_full']:.3f}   "
        f"(full fit's worst seed pair {s['ari_full_worst_seed_pair']:.3f})",
        f"  make all: full {s['full_s']:.0f} s, sample {s['half_s']:.0f} s (embeddings cached)",
    ]
    for name, figures in s["figures"].items():
        cells = "  ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()
        )
        lines.append(f"  {name:<5} {cells}")
    return lines

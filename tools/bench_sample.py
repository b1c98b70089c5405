"""`make bench BENCH_ARGS="--sections sample"`: a topic model fitted on a sample of the corpus
against one fitted on all of it, on the ICML + ICLR 2020-2023 corpora (9,673 papers).

Builds the corpus with a full fit (`make all` and `make stability`: the worst pair of seeds'
agreement), then with the model fitted on a stratified half and the other half assigned, and
prints the adjusted Rand index between the two and both builds' quality figures; then the same
with a tenth fitted. The diagnosis (in this process, on the built papers and vectors) splits the
agreement into the fitted papers (how the fit itself differs) and the placed ones (how placing
differs), beside what a second seed of the full fit gives on the same papers and what two
disjoint samples of the same size give against each other, and matches the full fit's topics
one-to-one to the sample fit's (Hungarian, on the Jaccard index) to show which topics a sample
loses or splits. Developer code: not part of the installed package.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from bench_stage import run_make

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
FILES = [f"{venue}{year}.parquet" for venue in ("iclr", "icml") for year in range(2020, 2024)]
FIGURES = ("topics", "unassigned_share", "largest_topic_share", "npmi_mean", "topic_diversity")
PART_SHARE = 0.2  # a topic of the full fit lies in every sample topic holding this share of it
WORST_SHOWN = 8  # the full fit's topics a sample matches worst, listed in the report


def matched_topics(full: np.ndarray, other: np.ndarray) -> pd.DataFrame:
    """Per topic of `full` (-1, unassigned, left out), largest first: its papers, the topic of
    `other` matched to it one-to-one (Hungarian, on the Jaccard index; -1 when none is left or
    the match shares no paper), their Jaccard index, how many topics of `other` hold at least
    PART_SHARE of its papers (2 or more: split), and the share `other` leaves unassigned."""
    from scipy.optimize import linear_sum_assignment

    full, other = np.asarray(full), np.asarray(other)
    mine, theirs = np.unique(full[full >= 0]), np.unique(other[other >= 0])
    both = np.zeros((len(mine), len(theirs)))
    for i, topic in enumerate(mine):
        found, count = np.unique(other[(full == topic) & (other >= 0)], return_counts=True)
        both[i, np.searchsorted(theirs, found)] = count
    size = np.array([(full == t).sum() for t in mine])
    union = size[:, None] + np.array([(other == t).sum() for t in theirs])[None, :] - both
    jaccard = both / np.maximum(union, 1)
    match = np.full(len(mine), -1)
    if both.size:
        rows, cols = linear_sum_assignment(-jaccard)
        match[rows] = cols
    table = pd.DataFrame(
        {
            "topic": mine.astype(int),
            "papers": size,
            "matched": [
                int(theirs[m]) if m >= 0 and both[i, m] else -1 for i, m in enumerate(match)
            ],
            "jaccard": [float(jaccard[i, m]) if m >= 0 else 0.0 for i, m in enumerate(match)],
            "parts": (both >= PART_SHARE * size[:, None]).sum(axis=1),
            "unassigned": [float((other[full == t] < 0).mean()) for t in mine],
        }
    )
    return table.sort_values(["papers", "topic"], ascending=[False, True], ignore_index=True)


def split_agreement(full: np.ndarray, other: np.ndarray, fitted: np.ndarray) -> dict:
    """The adjusted Rand index of two partitions of the same papers, on all of them, on those
    `fitted` (a boolean mask) and on the others (unassigned papers count as one more group)."""
    from sklearn.metrics import adjusted_rand_score

    full, other, fitted = np.asarray(full), np.asarray(other), np.asarray(fitted, dtype=bool)
    return {
        "all": float(adjusted_rand_score(full, other)),
        "fitted": float(adjusted_rand_score(full[fitted], other[fitted])),
        "placed": float(adjusted_rand_score(full[~fitted], other[~fitted])),
    }


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


def diagnose(documents: pd.DataFrame, vectors: np.ndarray, full: np.ndarray, size: int) -> dict:
    """Where a fit on `size` of the papers differs from the full fit (`full`: its topics in
    documents' order): the agreement on the fitted and the placed papers, beside a full fit with
    the next seed on the same papers and a fit on a disjoint sample of the same size (the papers
    whose doc_id hashes highest in each venue and year), and the full fit's topics matched."""
    from pipeline.config import ClusterConfig
    from pipeline.stages.cluster import fit_model
    from pipeline.stages.cluster.sample import stratified_sample

    n, config = len(documents), ClusterConfig()

    def topics(rows=None, **update) -> np.ndarray:
        settings = config.model_copy(update={"fit_max_papers": n, **update})
        result = fit_model(documents, vectors, settings, "bench", rows=rows)
        return result.clusters["topic"].to_numpy()

    fitted = np.zeros(n, dtype=bool)
    fitted[stratified_sample(documents, size)] = True
    seed = topics(random_state=config.random_state + 1)
    sample = topics(np.flatnonzero(fitted))
    disjoint = np.setdiff1d(np.arange(n), stratified_sample(documents, n - size))
    matched = matched_topics(full, sample)
    worst = matched.sort_values(["jaccard", "topic"]).head(WORST_SHOWN)
    return {
        "fitted": size,
        "sample_vs_full": split_agreement(full, sample, fitted),
        "next_seed_vs_full": split_agreement(full, seed, fitted),
        "disjoint_samples": float(split_agreement(sample, topics(disjoint), fitted)["all"]),
        "mean_jaccard": float(matched["jaccard"].mean()),
        "split": int((matched["parts"] >= 2).sum()),
        "below_half": int((matched["jaccard"] < 0.5).sum()),
        "worst": worst.to_dict("records"),
    }


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
    documents = tables.read_table(work / "full" / "documents.parquet", schemas.DOCUMENTS)
    _, vectors = tables.read_embeddings(work / "full" / "embeddings.parquet", documents=documents)
    full_topics = a.set_index("doc_id")["topic"].reindex(documents["doc_id"]).to_numpy()
    diagnosis = [diagnose(documents, vectors, full_topics, size) for size in (n // 2, n // 10)]
    return {
        "diagnosis": diagnosis,
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
    for d in s.get("diagnosis", []):
        lines += diagnosis_lines(d)
    return lines


def diagnosis_lines(d: dict) -> list[str]:
    """The diagnosis of one sample size, as report lines."""
    sample, seed = d["sample_vs_full"], d["next_seed_vs_full"]
    lines = [
        f"  {d['fitted']} fitted: ARI vs full fit, all / fitted / placed papers: sample "
        f"{sample['all']:.3f} / {sample['fitted']:.3f} / {sample['placed']:.3f}; the full fit's "
        f"next seed {seed['all']:.3f} / {seed['fitted']:.3f} / {seed['placed']:.3f}; two "
        f"disjoint samples {d['disjoint_samples']:.3f}",
        f"    full fit's topics matched one-to-one: mean Jaccard {d['mean_jaccard']:.2f}, "
        f"{d['below_half']} below 0.5, {d['split']} split; worst (topic papers jaccard parts "
        "unassigned):",
    ]
    for w in d["worst"]:
        lines.append(
            f"      {w['topic']:>4} {w['papers']:>5} {w['jaccard']:.2f} {w['parts']} "
            f"{w['unassigned']:.2f}"
        )
    return lines

"""`make bench BENCH_ARGS="--sections modes"`: each embedding precision this CPU runs, measured
for speed and faithfulness on the config's corpus, and the one `embed.precision: auto` takes on
this CPU from then on.

Each mode (fp32; bf16 where the CPU has it natively, as emulated bf16 is several times slower
than fp32; int8) builds the corpus (`topicmap build`, a cache of its own): the embed stage's
papers/s, the vectors' cosine to fp32's, the topics' adjusted Rand index to fp32's, NPMI and
diversity. fp32 built again with the next seed gives how well two fp32 seeds agree. A mode is
faithful when its mean cosine to fp32 is at least 0.99, its topics agree with fp32's at least
as well as the two seeds agree with each other, and its NPMI and diversity are within 0.01 of
fp32's. The fastest faithful mode is written to the embeddings cache folder's modes.json under
this CPU's identity (model, flags, cores), where `auto` reads it.
Developer code: not part of the installed package.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from bench_stage import figure

ROOT = Path(__file__).resolve().parents[1]
MIN_MEAN_COSINE = 0.99
MAX_FIGURE_GAP = 0.01  # NPMI and diversity, from fp32's


def _build(config: Path, out: Path, precision: str, seed: int | None = None) -> float:
    """A build in a process of its own; the embed stage's papers/s."""
    sets = [
        f"output_dir={out}",
        f"embed.cache_dir={out / 'cache'}",
        "embed.progress_bar=false",
        f"embed.precision={precision}",
    ]
    if seed is not None:
        sets.append(f"cluster.random_state={seed}")
    command = [sys.executable, "-m", "pipeline", "build", "--config", str(config)]
    for setting in sets:
        command += ["--set", setting]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"bench: build with {precision} failed:\n{result.stderr[-3000:]}")
    from pipeline import timings

    record = timings.read(out, "embed")
    return figure(record, "new_papers", "embed") / figure(record, "embed_s", "embed")


def _outcome(out: Path) -> tuple[np.ndarray, np.ndarray, dict]:
    """(vectors, topic per paper, metrics.json) of a build, in the documents' order."""
    from pipeline import schemas, tables

    papers = tables.read_table(out / "documents.parquet", schemas.DOCUMENTS)
    _, vectors = tables.read_embeddings(out / "embeddings.parquet", documents=papers)
    clusters = tables.read_table(out / "clusters.parquet", schemas.CLUSTERS)
    topics = clusters.set_index("doc_id").loc[papers["doc_id"], "topic"].to_numpy()
    return vectors, topics, json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def faithful(row: dict, reference: dict, seed_pair_ari: float) -> bool:
    return (
        row["cosine_mean"] >= MIN_MEAN_COSINE
        and row["ari_to_fp32"] >= seed_pair_ari
        and abs(row["npmi_mean"] - reference["npmi_mean"]) <= MAX_FIGURE_GAP
        and abs(row["topic_diversity"] - reference["topic_diversity"]) <= MAX_FIGURE_GAP
    )


def choose(modes: dict[str, dict]) -> str:
    """The fastest faithful mode (fp32, the reference, always is)."""
    candidates = [name for name, row in modes.items() if row["faithful"]]
    return max(candidates, key=lambda name: modes[name]["papers_per_s"])


def bench_modes(config: Path, work: Path) -> dict:
    from sklearn.metrics import adjusted_rand_score

    from pipeline import encoder as encoders
    from pipeline.config import load_config

    seed = load_config(config).cluster.random_state
    names = ["fp32"] + (["bf16"] if encoders.cpu_has_native_bf16() else []) + ["int8"]
    rates = {name: _build(config, work / f"modes-{name}", name) for name in names}
    _build(config, work / "modes-fp32-seed", "fp32", seed + 1)
    reference, topics, figures = _outcome(work / "modes-fp32")
    _, other_seed, _ = _outcome(work / "modes-fp32-seed")
    seed_pair_ari = float(adjusted_rand_score(topics, other_seed))
    modes = {}
    for name in names:
        vectors, mode_topics, mode_figures = _outcome(work / f"modes-{name}")
        cosine = (vectors * reference).sum(axis=1)
        row = {
            "papers_per_s": rates[name],
            "cosine_min": float(cosine.min()),
            "cosine_mean": float(cosine.mean()),
            "ari_to_fp32": float(adjusted_rand_score(topics, mode_topics)),
            "npmi_mean": mode_figures["npmi_mean"],
            "topic_diversity": mode_figures["topic_diversity"],
        }
        modes[name] = dict(row, faithful=faithful(row, figures, seed_pair_ari))
    return {
        "cpu": encoders.cpu_identity(),
        "papers": len(reference),
        "seed_pair_ari": seed_pair_ari,
        "modes": modes,
        "choice": choose(modes),
    }


def record(result: dict, path: Path | None) -> None:
    """Keep this CPU's measurement in `path` (the modes file), beside other CPUs' ones."""
    if path is None:
        return
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    known = known if isinstance(known, dict) else {}
    known[result["cpu"]] = {"choice": result["choice"], "modes": result["modes"]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def report(result: dict) -> list[str]:
    lines = [
        f"modes: {result['cpu']}; {result['papers']} papers; two fp32 seeds agree at ARI "
        f"{result['seed_pair_ari']:.3f}",
        "  mode | papers/s | cosine to fp32 min / mean | ARI to fp32 | NPMI | diversity | faithful",
    ]
    for name, row in result["modes"].items():
        lines.append(
            f"  {name:4} | {row['papers_per_s']:8.1f} | {row['cosine_min']:.5f} / "
            f"{row['cosine_mean']:.5f}   | {row['ari_to_fp32']:11.3f} | {row['npmi_mean']:.3f} | "
            f"{row['topic_diversity']:9.3f} | {'yes' if row['faithful'] else 'no'}"
        )
    lines.append(f"  auto chooses {result['choice']} on this CPU")
    return lines

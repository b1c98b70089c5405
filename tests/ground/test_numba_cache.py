"""numba_cache.enable(folder) makes numba keep compiled code on disk for later processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.support.paths import ROOT


def test_functions_defined_after_enable_are_cached_on_disk(tmp_path):
    (tmp_path / "jitted.py").write_text(
        textwrap.dedent(
            """
            import numba

            @numba.njit
            def add_one(x):
                return x + 1
            """
        )
    )
    script = (
        "from pipeline import numba_cache; numba_cache.enable('cache'); "
        "import jitted; assert jitted.add_one(1) == 2"
    )
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{tmp_path}")
    env.pop("NUMBA_CACHE_DIR", None)
    subprocess.run([sys.executable, "-c", script], env=env, check=True, cwd=tmp_path)
    cached = [p.name for p in (tmp_path / "cache").rglob("*") if p.suffix in {".nbi", ".nbc"}]
    assert any(name.endswith(".nbi") for name in cached), cached
    assert any(name.endswith(".nbc") for name in cached), cached

"""Where the project and the shared corpora are, for tests at any depth of tests/."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT.parent / "shared" / "corpora"
SEEDS = ROOT.parent / "shared" / "seeds"  # the 76 bundled abstracts, cut into four other files

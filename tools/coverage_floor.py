"""`make coverage`'s floor: every module of pipeline/ keeps at least 85% of its lines covered,
the ground modules and the ingest stage at least 95% (from coverage's JSON report).

Developer code, not part of the installed package.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FLOOR, GROUND_FLOOR = 85.0, 95.0
GROUND = {
    f"pipeline/{name}.py"
    for name in "schemas tables text encoder neighbours centroids scores config errors".split()
}


def floor(path: str) -> float:
    return GROUND_FLOOR if path in GROUND or path.startswith("pipeline/stages/ingest/") else FLOOR


def below_floor(report: dict) -> list[str]:
    """'path: N% of lines < floor' for each module under its floor."""
    found = []
    for path, data in sorted(report["files"].items()):
        summary = data["summary"]
        statements = summary["num_statements"]
        lines = 100.0 * summary["covered_lines"] / statements if statements else 100.0
        if lines < floor(path):
            found.append(f"{path}: {lines:.1f}% of lines < {floor(path):.0f}%")
    return found


def main(argv: list[str]) -> int:
    report = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    totals = report["totals"]
    print(
        f"coverage of pipeline/: {totals['percent_covered']:.1f}% with branches, "
        f"{100 * totals['covered_lines'] / totals['num_statements']:.1f}% of lines"
    )
    problems = below_floor(report)
    for problem in problems:
        print(f"coverage: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

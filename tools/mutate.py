"""`make mutate`: mutation testing (mutmut) of the pure cores and ground modules, each module with
its own fast test selection.

Developer code, not part of the installed package. For each module below, a work folder
.build/mutate/<name>/ gets links to the project (pipeline/, tests/, configs/, data/) and a
pyproject.toml whose [tool.mutmut] mutates only that module and collects tests only from its
test files; mutmut then runs each mutant against the tests that execute the mutated function
(from its own first, clean run). Each run starts afresh (mutmut's cache does not see changed
tests); the results stay in the work folders for `mutmut show` / `mutmut browse` there.

Every mutant that survives must be listed in tests/mutants-surviving.md with its reason (an
equivalent mutant, and why); the run prints each module's figures, the survivors' diffs and the
listed survivors that no longer survive, and fails if a survivor is not listed.

    make mutate                          # every module
    make mutate MUTATE_ARGS="compare"    # some of them
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".build" / "mutate"
SURVIVORS = ROOT / "tests" / "mutants-surviving.md"
LINKED = ("pipeline", "tests", "configs", "data")
# module -> the tests that own it (fast: no model, UMAP, build or browser)
MODULES = {
    "repair": (
        "pipeline/stages/ingest/repair.py",
        ["tests/stages/ingest/test_repair.py", "tests/stages/ingest/test_ingest.py"],
    ),
    "readers": (
        "pipeline/stages/ingest/readers.py",
        [
            "tests/stages/ingest/test_readers.py",
            "tests/stages/ingest/test_readers_records.py",
            "tests/stages/ingest/test_ingest.py",
            "tests/end_to_end/test_bad_input.py",
        ],
    ),
    "tables": (
        "pipeline/tables.py",
        [
            "tests/ground/test_tables.py",
            "tests/ground/test_tables_io.py",
            "tests/stages/csv/test_csv.py",
        ],
    ),
    "compare": (
        "pipeline/stages/compare.py",
        ["tests/stages/compare/test_compare.py", "tests/stages/compare/test_years.py"],
    ),
    "log_odds": (
        "pipeline/log_odds.py",
        ["tests/stages/compare/test_compare.py", "tests/stages/compare/test_years.py"],
    ),
    "scores": (
        "pipeline/scores.py",
        ["tests/ground/test_scores.py", "tests/stages/metrics/test_metrics.py"],
    ),
    "config": ("pipeline/config.py", ["tests/ground/test_config.py"]),
}
# mutmut's exit codes of a mutant the tests catch: a test failed, pytest failed, or the tests
# never finished (a timeout: the mutant hangs them, as `b"" -> None` in a read loop does)
KILLED = {1, 3, 36, 24, -24, 152, 255}


def prepare(name: str) -> Path:
    """The module's work folder: links to the project and its own mutmut settings."""
    module, tests = MODULES[name]
    folder = WORK / name
    folder.mkdir(parents=True, exist_ok=True)
    for entry in LINKED:
        link = folder / entry
        if not link.is_symlink():
            link.symlink_to(ROOT / entry, target_is_directory=True)
    settings = "\n".join(
        [
            "",
            "[tool.mutmut]",
            'source_paths = ["pipeline"]',
            f"only_mutate = [{json.dumps(module)}]",
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
            'pytest_add_cli_args = ["-p", "no:cacheprovider", "-m", "not slow and not browser"]',
            'also_copy = ["configs", "data"]',
            "use_git_change_detection = false",
            "",
        ]
    )
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8") + settings
    path = folder / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    shutil.rmtree(folder / "mutants", ignore_errors=True)
    return folder


def mutmut(folder: Path, *args: str) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).parent / "mutmut"), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env)


def results(folder: Path, module: str) -> dict[str, int | None]:
    """mutant name -> exit code of its test run, from mutmut's record of the module."""
    meta = folder / "mutants" / f"{module}.meta"
    return json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]


def listed_survivors() -> set[str]:
    """The mutants tests/mutants-surviving.md explains (names in backticks opening a row)."""
    text = SURVIVORS.read_text(encoding="utf-8") if SURVIVORS.exists() else ""
    return set(re.findall(r"^\|\s*`([\w.]+__mutmut_\d+)`", text, flags=re.M))


def run_module(name: str, children: int) -> tuple[dict[str, int | None], Path]:
    folder = prepare(name)
    done = mutmut(folder, "run", "--max-children", str(children))
    if done.returncode != 0:
        sys.exit(f"mutate: mutmut failed for {name}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return results(folder, MODULES[name][0]), folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/mutate.py", description=__doc__)
    parser.add_argument("modules", nargs="*", choices=[[], *MODULES], default=[])
    parser.add_argument("--children", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    listed = listed_survivors()
    unlisted, total, killed = [], 0, 0
    for name in args.modules or list(MODULES):
        codes, folder = run_module(name, args.children)
        survivors = sorted(k for k, code in codes.items() if code not in KILLED)
        n_killed = len(codes) - len(survivors)
        total, killed = total + len(codes), killed + n_killed
        share = 100 * n_killed / max(len(codes), 1)
        print(f"{MODULES[name][0]}: {n_killed} of {len(codes)} mutants killed ({share:.1f}%)")
        for key in survivors:
            if key not in listed:
                unlisted.append(key)
                print(mutmut(folder, "show", key).stdout.rstrip())
        gone = sorted(
            k for k in listed if k.startswith(_prefix(MODULES[name][0])) and codes.get(k) in KILLED
        )
        for key in gone:
            print(f"  {key} is listed as surviving but is killed now: remove it from the list")
    print(f"all: {killed} of {total} mutants killed ({100 * killed / max(total, 1):.1f}%)")
    if unlisted:
        print(f"{len(unlisted)} surviving mutant(s) not in {SURVIVORS.name}", file=sys.stderr)
        return 1
    return 0


def _prefix(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".") + "."


if __name__ == "__main__":
    sys.exit(main())

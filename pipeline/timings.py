"""Each stage run's figures, machine-readable: `<output_dir>/.timings/<stage>.json`.

The CLI (`topicmap stage NAME`, which `make` runs) and the API's `build` `begin` a stage's
record as it starts (the last run's is forgotten) and `finish` it as it ends: `wall_s` (wall
seconds), `peak_mb` (the process's peak resident memory so far) and `engine` (where the stage's
per-paper work ran, for the stages that have an engine). In between, a stage may `record`
figures of its own; the embed stage's are `new_papers` and `cached_papers`, `embed_s` (embedding
the new papers, the model's loading included) and `embedding_s` (the embedding itself, once the
model was loaded or the first Ray actor ready), and on Ray `ray_s`, `shards` and `actors`. A run
that fails leaves no record. The benches read these (`read`) rather than the log lines.
"""

from __future__ import annotations

import time
from pathlib import Path

from pipeline import tables

TIMINGS_DIR = ".timings"


def timings_path(out_dir: str | Path, stage: str) -> Path:
    return Path(out_dir) / TIMINGS_DIR / f"{stage}.json"


def begin(out_dir: str | Path, stage: str) -> float:
    """Forget the stage's last record; the start time (time.perf_counter) for `finish`."""
    try:
        timings_path(out_dir, stage).unlink(missing_ok=True)
    except NotADirectoryError:  # a file where the output folder goes: the stage itself says so
        pass
    return time.perf_counter()


def record(out_dir: str | Path, stage: str, **figures: float | int | str | bool | None) -> None:
    """Add `figures` to the stage's record (one recorded again replaces its value)."""
    path = timings_path(out_dir, stage)
    known = tables.read_json(path, f"{stage} timings") if path.exists() else {}
    tables.write_json({**known, **figures}, path)


def finish(out_dir: str | Path, stage: str, started: float, engine: str | None = None) -> dict:
    """Record the stage's wall seconds since `started`, the peak memory and its `engine`; the
    whole record."""
    seconds = time.perf_counter() - started
    record(out_dir, stage, wall_s=round(seconds, 3), peak_mb=round(peak_memory_mb()), engine=engine)
    return read(out_dir, stage)


def read(out_dir: str | Path, stage: str) -> dict:
    """The figures of the stage's last run into `out_dir` (one line if it left none)."""
    return tables.read_json(timings_path(out_dir, stage), f"the {stage} stage's timings")


def recorded(out_dir: str | Path) -> dict[str, dict]:
    """Every stage's record in `out_dir`, by stage name (sorted)."""
    found = sorted((Path(out_dir) / TIMINGS_DIR).glob("*.json"))
    return {path.stem: tables.read_json(path, f"the {path.stem} stage's timings") for path in found}


def peak_memory_mb() -> float:
    """This process's peak resident memory. VmHWM counts this program only; ru_maxrss (the
    fallback off Linux) also counts a large parent that forked it, as Linux keeps it over exec."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

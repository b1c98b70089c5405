"""Each stage run's figures, machine-readable: `<output_dir>/.timings/<stage>.json`.

The CLI (`topicmap stage NAME`, which `make` runs) and the API's `build` `begin` a stage's
record as it starts (the last run's is forgotten) and `finish` it as it ends: `wall_s` (wall
seconds), `peak_mb` (the process's peak resident memory so far) and `engine` (where the stage's
per-paper work ran, for the stages that have an engine). In between, the stage may `record`
figures of its own (the embed stage: `new_papers`, `cached_papers` and `embed_s`, the seconds
embedding the new papers took, the model's loading included; the Ray bench also reads
`embedding_s`, the embedding itself once the model was loaded or the first actor ready, and on
Ray `ray_s`, `shards` and `actors`); a stage's run() called by itself (as tests do) keeps
none. A run that fails leaves a record without `wall_s`. The benches read these records
(`read`) rather than the log lines.
"""

from __future__ import annotations

import time
from pathlib import Path

from pipeline import tables

TIMINGS_DIR = ".timings"


def timings_path(out_dir: str | Path, stage: str) -> Path:
    return Path(out_dir) / TIMINGS_DIR / f"{stage}.json"


def begin(out_dir: str | Path, stage: str) -> float:
    """Start the stage's record, the last run's forgotten; the start time for `finish`."""
    try:
        tables.write_json({}, timings_path(out_dir, stage))
    except OSError:  # no output folder to be had: the stage itself says why
        pass
    return time.perf_counter()


def record(out_dir: str | Path, stage: str, **figures: float | int | str | bool | None) -> None:
    """Add `figures` to the record of the stage's run under way (one recorded again replaces
    its value); when no run was begun in `out_dir` (a stage's run() called by itself), none."""
    if timings_path(out_dir, stage).exists():
        _add(out_dir, stage, figures)


def finish(out_dir: str | Path, stage: str, started: float, engine: str | None = None) -> dict:
    """Record the stage's wall seconds since `started`, the peak memory and its `engine`; the
    whole record."""
    seconds = round(time.perf_counter() - started, 3)
    _add(out_dir, stage, {"wall_s": seconds, "peak_mb": round(peak_memory_mb()), "engine": engine})
    return read(out_dir, stage)


def _add(out_dir: str | Path, stage: str, figures: dict) -> None:
    path = timings_path(out_dir, stage)
    known = tables.read_json(path, f"the {stage} stage's timings") if path.exists() else {}
    tables.write_json({**known, **figures}, path)


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

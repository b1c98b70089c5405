"""`make bench BENCH_ARGS="--sections topics"`: topics that live across builds, side by side.

- emergence: a cold build (empty cache) of the 9,673 ICML + ICLR 2020-2023 papers of
  ../shared/corpora, then the same folder with the 575 SIGGRAPH Asia papers of ../shared/foreign
  added: the share of them in topics born in that build, whether every earlier paper kept its
  topic number, label and position, and that build's time against the cold build's;
- identity: 2020-2022 (6,272 papers), then 2023 added (3,401: a refit by the refit policy): the
  share of the 2020-2022 papers whose topic number is unchanged against the best one-to-one
  numbering's (Hungarian), the counts of survived, split, merged, retired and new topics, and
  the surviving topics whose label was kept.
Developer code: not part of the installed package.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
YEARS = range(2020, 2024)
ML = [SHARED / "corpora" / f"{v}{y}.parquet" for v in ("iclr", "icml") for y in YEARS]
FOREIGN = [SHARED / "foreign" / f"siggraphasia{y}.parquet" for y in YEARS]
LOGGED = re.compile(
    r"pipeline\.(cluster|label): (pool|  group|settled|\d+ new topics|topic numbers|labels)"
)


def _config(work: Path, name: str, out: str, cache: Path, inputs: list[Path]) -> Path:
    data = {
        "inputs": [str(p) for p in inputs],
        "output_dir": str(work / out),
        "embed": {"cache_dir": str(cache), "progress_bar": False},
    }
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _make(config: Path) -> tuple[float, list[str]]:
    """`make all`: its wall seconds and the log lines of what became a topic."""
    start = time.perf_counter()
    result = subprocess.run(
        ["make", "--no-print-directory", "all", f"CONFIG={config}"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")},
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"bench: make all failed:\n{result.stderr[-3000:]}")
    return seconds, [line for line in result.stderr.splitlines() if LOGGED.search(line)]


def _read(folder: Path) -> dict:
    from pipeline import schemas, tables

    return {
        "documents": tables.read_table(folder / "documents.parquet", schemas.DOCUMENTS),
        "clusters": tables.read_table(folder / "clusters.parquet", schemas.CLUSTERS),
        "topics": tables.read_table(folder / "topics.parquet", schemas.TOPICS),
        "registry": tables.read_table(folder / "model/registry.parquet", schemas.TOPIC_REGISTRY),
        "fit_id": tables.read_notes(folder / "clusters.parquet")["fit_id"],
    }


def bench_emergence(work: Path, cache: Path) -> dict:
    base_s, _ = _make(_config(work, "emerge-base", "emerge", cache, ML))
    before = _read(work / "emerge")
    plus_s, logged = _make(_config(work, "emerge-plus", "emerge", cache, ML + FOREIGN))
    after = _read(work / "emerge")
    registry = after["registry"]
    born = set(registry.loc[registry["made"] == "emerged", "topic"]) - set(
        before["registry"]["topic"]
    )
    foreign = after["documents"].loc[after["documents"]["venue"].str.startswith("SIGGRAPH")]
    topic_of = after["clusters"].set_index("doc_id")["topic"]
    landed = topic_of.reindex(foreign["doc_id"]).isin(born)
    joined = before["clusters"].merge(after["clusters"], on="doc_id", suffixes=("", "_after"))
    had_topic = joined["topic"] >= 0
    label_before = before["topics"].set_index("topic")["label"]
    label_after = after["topics"].set_index("topic")["label"]
    kept_topics = sorted(set(before["topics"]["topic"]) - {-1})
    return {
        "papers": len(before["clusters"]),
        "added": len(foreign),
        "new_topics": len(born),
        "landed_in_new": int(landed.sum()),
        "landed_share": float(landed.mean()),
        "earlier_with_topic": int(had_topic.sum()),
        "earlier_same_topic": int((joined["topic"] == joined["topic_after"])[had_topic].sum()),
        "earlier_unassigned_joined": int(((~had_topic) & (joined["topic_after"] >= 0)).sum()),
        "earlier_same_position": int(
            ((joined["x"] == joined["x_after"]) & (joined["y"] == joined["y_after"])).sum()
        ),
        "earlier": len(joined),
        "labels_same": int(sum(label_before[t] == label_after.get(t) for t in kept_topics)),
        "topics_before": len(kept_topics),
        "base_s": base_s,
        "plus_s": plus_s,
        "log": logged,
    }


def bench_identity(work: Path, cache: Path) -> dict:
    from pipeline.stages.cluster import identity

    early = [p for p in ML if not p.stem.endswith("2023")]
    _make(_config(work, "identity-base", "identity", cache, early))
    before = _read(work / "identity")
    refit_s, logged = _make(_config(work, "identity-plus", "identity", cache, ML))
    after = _read(work / "identity")
    joined = before["clusters"].merge(after["clusters"], on="doc_id", suffixes=("", "_after"))
    old, new = joined["topic"].to_numpy(), joined["topic_after"].to_numpy()
    counted = re.search(
        r"(\d+) survived, (\d+) split, (\d+) merged, (\d+) retired, (\d+) new", "\n".join(logged)
    )
    kinds = ("survived", "split", "merged", "retired", "new")
    survived = sorted(set(before["topics"]["topic"]) & set(after["topics"]["topic"]) - {-1})
    label_before = before["topics"].set_index("topic")["label"]
    label_after = after["topics"].set_index("topic")["label"]
    return {
        "papers_before": len(before["clusters"]),
        "papers_after": len(after["clusters"]),
        "refitted": after["fit_id"] != before["fit_id"],
        "kept_share": identity.kept_share(old, new),
        "best_share": identity.best_kept_share(old, new),
        "topics_before": int((before["registry"]["status"] == "active").sum()),
        "topics_after": int((after["registry"]["status"] == "active").sum()),
        "transitions": dict(zip(kinds, map(int, counted.groups()), strict=True)) if counted else {},
        "same_number_topics": len(survived),
        "labels_kept": int(sum(label_before[t] == label_after[t] for t in survived)),
        "refit_s": refit_s,
        "log": logged,
    }


def bench_topics(work: Path, cache: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    return {"emergence": bench_emergence(work, cache), "identity": bench_identity(work, cache)}


def section(work: Path) -> dict:
    """The section in `make bench`: measured in `work`, printed, returned."""
    results = bench_topics(work, work / "topics-cache")
    print("\n".join(report(results)), flush=True)
    return results


def report(r: dict) -> list[str]:
    e, i = r["emergence"], r["identity"]
    lines = [
        f"topics across builds: emergence ({e['papers']} ICML + ICLR 2020-2023 papers, then "
        f"{e['added']} SIGGRAPH Asia added):",
        f"  {e['landed_in_new']} of {e['added']} ({100 * e['landed_share']:.1f}%) in the "
        f"{e['new_topics']} topics born in that build (goal >= 80%)",
        f"  earlier papers: {e['earlier_same_topic']} of {e['earlier_with_topic']} with a topic "
        f"kept it, {e['earlier_same_position']} of {e['earlier']} kept their position, "
        f"{e['earlier_unassigned_joined']} unassigned joined a new topic; labels kept "
        f"{e['labels_same']} of {e['topics_before']}",
        f"  cold build {e['base_s']:.0f} s, the build adding them {e['plus_s']:.0f} s "
        f"({e['plus_s'] / e['base_s']:.2f} of it; goal <= 0.20)",
        f"identity across a refit ({i['papers_before']} papers of 2020-2022, then "
        f"{i['papers_after'] - i['papers_before']} of 2023: refitted {i['refitted']}):",
        f"  topic number unchanged for {100 * i['kept_share']:.1f}% of the 2020-2022 papers in a "
        f"topic; best one-to-one numbering {100 * i['best_share']:.1f}% "
        f"(ratio {i['kept_share'] / max(i['best_share'], 1e-9):.3f}; goal >= 0.95)",
        f"  topics {i['topics_before']} -> {i['topics_after']}: "
        + ", ".join(f"{v} {k}" for k, v in i["transitions"].items()),
        f"  labels kept by {i['labels_kept']} of the {i['same_number_topics']} topics that kept "
        f"their number; the refitting build {i['refit_s']:.0f} s",
    ]
    return lines + ["  log:"] + [f"    {line}" for line in e["log"] + i["log"]]


if __name__ == "__main__":  # the section alone: tools/bench_topics.py WORK_DIR
    import json
    import logging

    logging.basicConfig(level=logging.WARNING)
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    results = bench_topics(folder, folder / "cache")
    (folder / "topics.json").write_text(json.dumps(results, indent=2, default=str))
    print("\n".join(report(results)), flush=True)

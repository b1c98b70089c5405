"""The figures at scale (`make bench BENCH_ARGS="--figure-sizes 10000,100000"`): `topicmap figure`
on a build of N papers made as the map's bench makes them (tools/bench_map.map_tables: the
9,673 real ICML and ICLR 2020-2023 papers of ../shared/corpora repeated with perturbed map
positions, 40 topics in 10 themes of neighbouring topics), run as `make figures` runs it
(tools/bench_stage.run_stage): wall seconds and peak memory from the stage's own record, and
each file's size, for the default figure (one map, the themes' labels), the 40 topics' labels,
one panel per venue with a highlighted topic, and the same papers dealt among 11 venues' panels.

Render only: no clustering. Developer code: it is not part of the installed package.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import bench_map  # beside this file
import bench_stage  # beside this file
import numpy as np
import pandas as pd
import yaml

from pipeline import schemas, tables

N_THEMES = 10
LIMIT_S, LIMIT_MB = 60.0, 20.0  # the issue's: within 60 s, each file at most 20 MB
VARIANTS = {  # name -> the figures section, and the venues the papers are dealt among
    "one map": ({}, None),
    "topic labels": ({"labels": "topics"}, None),
    "venue panels": ({"panels": "venue", "highlight_topic": 3}, None),
    "11 venues' panels": ({"panels": "venue"}, 11),
}


def build_tables(n: int) -> dict[str, pd.DataFrame]:
    """documents, clusters, topics and themes of n papers (bench_map.map_tables' layout)."""
    made = bench_map.map_tables(n)
    frame, topics = made["frame"], made["topics"]
    documents = frame.assign(source=[f"bench:{s}" for s in frame["source"]], source_id=None)[
        schemas.DOCUMENTS.columns
    ]
    clusters = frame[["doc_id", "topic", "x", "y"]].assign(
        raw_outlier=False, placed="fit", similarity=np.float32(0.5)
    )
    ids = topics["topic"].to_numpy()
    # themes of neighbouring topics, as the label stage's are: topics in order of their centre's
    # angle around the map's middle, four at a time
    centres = frame[frame["topic"] >= 0].groupby("topic")[["x", "y"]].median()
    middle = centres.mean()
    angle = np.arctan2(centres["y"] - middle["y"], centres["x"] - middle["x"])
    rank = dict(zip(angle.sort_values().index, range(len(angle)), strict=True))
    per_theme = -(-len(rank) // N_THEMES)
    theme_of = np.array([rank[t] // per_theme if t >= 0 else -1 for t in ids], dtype=np.int32)
    topics = topics.assign(
        terms=[[] for _ in ids],
        term_weights=[[] for _ in ids],
        theme=theme_of,
        representative_docs=[[] for _ in ids],
    )
    themes = pd.DataFrame(
        {
            "theme": np.arange(-1, N_THEMES, dtype=np.int32),
            "label": ["Unassigned"] + [f"theme {t} of the bench" for t in range(N_THEMES)],
            "terms": [[] for _ in range(N_THEMES + 1)],
            "size": [int(topics.loc[theme_of == t, "size"].sum()) for t in range(-1, N_THEMES)],
            "topics": [[int(i) for i in ids[theme_of == t]] for t in range(-1, N_THEMES)],
            "area": np.full(N_THEMES + 1, -1, dtype=np.int32),
            "area_label": [""] * (N_THEMES + 1),
        }
    )
    return {"documents": documents, "clusters": clusters, "topics": topics, "themes": themes}


def dealt(made: dict[str, pd.DataFrame], venues: int) -> dict[str, pd.DataFrame]:
    """The same tables with the papers dealt in turn among `venues` venues (the most panels)."""
    names = np.array([f"Venue {v + 1:02d}" for v in range(venues)])
    documents = made["documents"].copy()
    documents["venue"] = names[np.arange(len(documents)) % venues]
    documents["conference"] = documents["venue"]
    return made | {"documents": documents}


def write_build(folder: Path, made: dict[str, pd.DataFrame], figures: dict) -> Path:
    """The tables into `folder` (each with a lineage of its own, as one build), and a config
    whose output is that folder; returns the config's path."""
    lineage = tables.make_lineage("bench: figures' tables (tools/bench_figures.py)", {})
    for name, schema in (
        ("documents", schemas.DOCUMENTS),
        ("clusters", schemas.CLUSTERS),
        ("topics", schemas.TOPICS),
        ("themes", schemas.THEMES),
    ):
        tables.write_table(made[name], folder / f"{name}.parquet", schema, lineage)
    config = {
        "inputs": [str(folder / "documents.parquet")],
        "output_dir": str(folder),
        "figures": figures,
    }
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def bench_figures(sizes: list[int]) -> list[dict]:
    """One row per size and variant: papers, variant, wall_s, peak_mb, MB per file."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="topicmap-figures-") as work:
        for n in sizes:
            made = build_tables(n)
            for variant, (figures, venues) in VARIANTS.items():
                folder = Path(work) / f"{n}-{variant.replace(' ', '-')}"
                folder.mkdir()
                drawn = made if venues is None else dealt(made, venues)
                record = bench_stage.run_stage("figure", write_build(folder, drawn, figures))
                files = {
                    p.name: round(p.stat().st_size / 1e6, 2)
                    for p in sorted((folder / "figures").iterdir())
                }
                row = {"papers": n, "variant": variant, "wall_s": record["wall_s"]}
                rows.append(row | {"peak_mb": record["peak_mb"], "mb": files})
                print(report(rows[-1:], cpu=False), flush=True)
    return rows


def report(rows: list[dict], cpu: bool = True) -> str:
    lines = [bench_map.cpu_line()] if cpu else []
    for r in rows:
        sizes = ", ".join(f"{name} {mb} MB" for name, mb in r["mb"].items())
        fits = r["wall_s"] <= LIMIT_S and max(r["mb"].values()) <= LIMIT_MB
        lines.append(
            f"figures {r['papers']:>9,} papers, {r['variant']}: {r['wall_s']:.1f} s, peak "
            f"{r['peak_mb']} MB; {sizes} ({'within' if fits else 'OVER'} {LIMIT_S:.0f} s and "
            f"{LIMIT_MB:.0f} MB a file)"
        )
    return "\n".join(lines)

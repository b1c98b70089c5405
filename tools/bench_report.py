"""The report page at scale (`make bench BENCH_ARGS="--report-sizes history,wide"`): renders the
report (index.html) of a corpus made from the real ones in ../shared/corpora by relabelling
venues and years (tools/relabel_corpus.py), then opens it from disk in headless Chromium as the
browser tests do and measures its bytes and its load (navigation to the page's ready mark: every
chart in the first view drawn), with console errors and requests outside the folder.

The cases (issue 33): `history`, 21,000 papers of 8 venues over 39 years (1985-2023), and
`wide`, 47,000 papers of 25 venues over their own 4 years. Render only: the topics are a k-means
of the papers' words (100 topics in 15 themes), the map positions those clusters' places with
noise; venue_topics and venue_years come from the compare stage's own cores. Developer code.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from bench_map import cpu_line, launch  # beside this file
from relabel_corpus import content_groups, real_papers, relabel

CASES = {  # name: (papers, venues, years or None: each paper's own)
    "history": (21000, 8, list(range(1985, 2024))),
    "wide": (47000, 25, None),
}
N_TOPICS, N_THEMES = 100, 15
READY = "() => document.body?.dataset.ready === 'true'"


def _documents(rows: pd.DataFrame) -> pd.DataFrame:
    from pipeline import schemas

    frame = pd.DataFrame(
        {
            "doc_id": "p" + rows["id"].astype(str),
            "venue": rows["venue"].str.rsplit(" ", n=1).str[0],
            "track": "",
            "year": rows["year"].astype("int32"),
            "title": rows["title"],
            "abstract": rows["abstract"].fillna(""),
            "source": "bench",
            "source_id": None,
            "url": rows["url"],
        }
    )
    frame["conference"] = frame["venue"]
    return frame[list(schemas.DOCUMENTS.columns)]


def _labels(texts: pd.Series, groups: np.ndarray, k: int) -> list[str]:
    """Each group's three most frequent words of five letters or more (a readable label)."""
    labels = []
    for g in range(k):
        words = texts[groups == g].str.lower().str.findall(r"[a-z]{5,}").explode().value_counts()
        labels.append(", ".join(words.index[3:6]) if len(words) > 6 else f"topic {g}")
    return labels


def tables(case: str, seed: int = 0) -> dict:
    """The stage tables render reads, for one of CASES."""
    from pipeline.config import CompareConfig
    from pipeline.stages import compare

    n, venues, years = CASES[case]
    base = real_papers()
    rows = relabel(base, venues, n, years, seed=seed)
    documents = _documents(rows)
    source = np.arange(n) % len(base)
    texts = base["title"].fillna("") + ". " + base["abstract"].fillna("")
    group = content_groups(texts, N_TOPICS, seed)
    rng = np.random.default_rng(seed)
    topic = np.where(rng.random(n) < 0.1, -1, group[source]).astype(np.int32)  # 10% unassigned
    centres = rng.normal(scale=6, size=(N_TOPICS + 1, 2))
    xy = centres[topic + 1] + rng.normal(size=(n, 2))
    theme_of = np.arange(N_TOPICS) % N_THEMES
    labels = _labels(texts, group, N_TOPICS)
    ids = documents["doc_id"].tolist()
    clusters = pd.DataFrame(
        {
            "doc_id": ids,
            "topic": topic,
            "x": xy[:, 0].astype(np.float32),
            "y": xy[:, 1].astype(np.float32),
            "raw_outlier": topic < 0,
            "placed": "fit",
            "similarity": np.float32(0.6),
        }
    )
    sizes = np.bincount(topic + 1, minlength=N_TOPICS + 1)
    first = {t: ids[int(np.flatnonzero(topic == t)[0])] for t in range(N_TOPICS) if sizes[t + 1]}
    topics = pd.DataFrame(
        {
            "topic": np.arange(-1, N_TOPICS, dtype=np.int32),
            "label": ["Unassigned", *labels],
            "terms": [["noise"]] + [lab.split(", ") for lab in labels],
            "term_weights": [[0.1]] + [[0.3, 0.2, 0.1]] * N_TOPICS,
            "size": sizes.astype(np.int32),
            "theme": np.array([-1, *theme_of], dtype=np.int32),
            "representative_docs": [[]]
            + [[first[t]] if t in first else [] for t in range(N_TOPICS)],
        }
    )
    themes = _themes(theme_of, labels, sizes)
    config = CompareConfig()
    return {
        "documents": documents,
        "clusters": clusters,
        "topics": topics,
        "themes": themes,
        "venue_topics": compare.make_venue_topics(documents, clusters, topics, themes, config),
        "venue_years": compare.make_venue_years(documents, clusters, topics, themes, config),
    }


def _themes(theme_of: np.ndarray, labels: list[str], sizes: np.ndarray) -> pd.DataFrame:
    """The themes table: each theme holds the topics theme_of gives it, largest first."""
    members = [[t for t in range(N_TOPICS) if theme_of[t] == h] for h in range(N_THEMES)]
    return pd.DataFrame(
        {
            "theme": np.arange(N_THEMES, dtype=np.int32),
            "label": [labels[m[0]] for m in members],
            "terms": [labels[m[0]].split(", ") for m in members],
            "size": [int(sum(sizes[t + 1] for t in m)) for m in members],
            "topics": [sorted(m, key=lambda t: -sizes[t + 1]) for m in members],
            **{"area": np.full(N_THEMES, -1, np.int32), "area_label": [""] * N_THEMES},
        }
    )


def render_report(folder: Path, t: dict) -> float:
    """Write the pages into folder as the render stage does; seconds taken."""
    from plotly.offline import get_plotlyjs

    from pipeline.config import RenderConfig
    from pipeline.stages import render
    from pipeline.stages.render.mapview import Similar

    started = time.perf_counter()
    n = len(t["documents"])
    similar = Similar(
        sorted(t["documents"]["doc_id"]),
        np.zeros((n, 5), dtype=np.int64),
        np.zeros((n, 5), dtype=np.float32),
    )
    pages = render.make_pages(
        t["documents"],
        similar,
        t["clusters"],
        t["topics"],
        t["themes"],
        t["venue_topics"],
        {},
        RenderConfig(),
        venue_years=t["venue_years"],
    )
    render.write_files(folder, pages, get_plotlyjs())
    return time.perf_counter() - started


FLOOR_PAGE = """<!doctype html><html lang="en"><head><title>plotly.js alone</title>
<script src="plotly.min.js"></script></head><body><script>document.body.dataset.ready = "true";
</script></body></html>"""


def measure(folder: Path, runs: int = 3) -> dict:
    """Open index.html from disk (headless Chromium, the tests' flags): seconds to the ready mark
    (median of `runs`), console errors and requests leaving the folder; and, in the same runs, a
    page that loads only plotly.js's bundle (the floor any plotly report pays, which the load of
    a shared machine inflates as much)."""
    from playwright.sync_api import sync_playwright

    (folder / "floor.html").write_text(FLOOR_PAGE, encoding="utf-8")
    loads, floors, problems = [], [], []
    prefix = folder.as_uri() + "/"
    with sync_playwright() as playwright:
        browser = launch(playwright)
        load_before = os.getloadavg()[0]
        for run in range(2 * runs):
            name = "floor.html" if run % 2 else "index.html"
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on(
                "request", lambda r: None if r.url.startswith(prefix) else problems.append(r.url)
            )
            started = time.perf_counter()
            page.goto((folder / name).as_uri(), wait_until="commit")
            page.wait_for_function(READY, timeout=120_000, polling=20)
            (floors if run % 2 else loads).append(time.perf_counter() - started)
            context.close()
        browser.close()
    return {
        "load_s": round(sorted(loads)[len(loads) // 2], 2),
        "plotly_only_s": round(sorted(floors)[len(floors) // 2], 2),
        "problems": problems,
        "load": [round(load_before, 1), round(os.getloadavg()[0], 1)],
    }


def bench_report(cases: list[str]) -> list[dict]:
    rows = []
    for case in cases:
        with tempfile.TemporaryDirectory(prefix="topicmap-report-") as work:
            folder = Path(work)
            t = tables(case)
            row = {"case": case, "papers": len(t["documents"])}
            row["venues"] = int(t["documents"]["venue"].nunique())
            row["years"] = int(t["documents"]["year"].nunique())
            row["render_s"] = round(render_report(folder, t), 1)
            row["index_mb"] = round((folder / "index.html").stat().st_size / 1e6, 2)
            row["map_mb"] = round((folder / "map.html").stat().st_size / 1e6, 2)
            row |= measure(folder)
        print(report([row]), flush=True)
        rows.append(row)
    return rows


def report(rows: list[dict]) -> str:
    lines = [cpu_line()]
    for r in rows:
        lines.append(
            f"report {r['case']}: {r['papers']:,} papers, {r['venues']} venues, {r['years']} "
            f"years: index.html {r['index_mb']} MB (map.html {r['map_mb']} MB), loaded in "
            f"{r['load_s']} s (median of 3; a page of plotly.js alone {r['plotly_only_s']} s), "
            f"render {r['render_s']} s, errors/outside "
            f"requests: {len(r['problems'])}; load {r['load'][0]}-{r['load'][1]}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(report(bench_report(sys.argv[1:] or list(CASES))))

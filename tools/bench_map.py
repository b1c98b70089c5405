"""The map page at scale (`make bench BENCH_ARGS="--map-sizes 100000,1000000"`): renders a map of
N papers made from the real corpora in ../shared/corpora (9,673 ICML and ICLR 2020-2023
papers, repeated with perturbed map positions and embeddings, doc_ids made unique), then opens
it from disk in headless Chromium as the browser tests do and measures:

- draw:   navigation to every point drawn (the page's ready mark, the WebGL canvas non-blank);
- text:   loading every text shard (the first search);
- search: a search answered once the shards are loaded (median of 3 words);
- click:  a click on a point to the panel showing its abstract and five neighbours (cold: the
          paper's shard not loaded yet; median of 3 papers);
- select: a box drawn round a tenth of the papers (box select, a real mouse drag) to the list
          beside the map counted and the map redrawn, and to its first titles; then exporting
          those papers as CSV (their text shards loaded first) and as BibTeX;
- brush:  a year range set (as the histogram's brush and its sliders set it) to the map redrawn
          and the histogram and counts updated (median of 3 ranges); recolour: the colouring
          changed (by year, by venue, by topic) to the map redrawn (median of the 3);
- bytes:  the folder's bytes per paper beyond plotly.js's two bundles (map.html, shards, assets),
          and console errors and requests outside the folder.

Render only: no clustering. Each of the 9,673 papers gets one of the 40 blob topics of a
synthetic layout (seeded); a copy keeps its original's topic and text. Repeated texts deflate
better than unique ones, so the 9,673 unique papers are measured too (copies=1). Developer code.
"""

from __future__ import annotations

import glob
import hashlib
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from bench_limit import cpu_flags  # beside this file

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
N_TOPICS = 40
DIM = 384


def real_papers() -> pd.DataFrame:
    """The shared corpora's papers: title, abstract, conference, year, track, url."""
    frames = [pd.read_parquet(path) for path in sorted(glob.glob(str(CORPORA / "*.parquet")))]
    papers = pd.concat(frames, ignore_index=True)
    return pd.DataFrame(
        {
            "conference": papers["venue"].str.split().str[0],
            "year": papers["year"].astype("int32"),
            "title": papers["title"],
            "abstract": papers["abstract"].fillna(""),
            "url": papers["url"],
        }
    )


def map_tables(n: int, seed: int = 0) -> dict:
    """frame, vectors, topics for render's map: n papers from the real ones, repeated."""
    base = real_papers()
    rng = np.random.default_rng(seed)
    topic_of = rng.integers(-1, N_TOPICS, len(base))  # -1: unassigned
    centres = rng.normal(scale=6, size=(N_TOPICS + 1, 2))
    directions = rng.normal(size=(N_TOPICS + 1, DIM)).astype(np.float32)
    source = np.arange(n) % len(base)
    copy = np.arange(n) // len(base)
    topic = topic_of[source]
    xy = centres[topic + 1] + rng.normal(size=(len(base), 2))[source]
    xy += (copy > 0)[:, None] * rng.normal(scale=0.15, size=(n, 2))  # copies perturbed
    frame = base.iloc[source].reset_index(drop=True)
    # ids hashed as ingest's are, so a paper's copies are spread through the page's order
    ids = [
        hashlib.sha1(f"{s}/{c}".encode()).hexdigest()[:15]
        for s, c in zip(source, copy, strict=True)
    ]
    frame.insert(0, "doc_id", ["p" + i for i in ids])
    frame["venue"] = frame["conference"]
    frame["track"] = ""
    frame["topic"] = topic.astype(np.int32)
    frame["x"], frame["y"] = xy[:, 0].astype(np.float32), xy[:, 1].astype(np.float32)
    frame["source"] = source
    frame["placed"] = "fit"  # as the clusters table of a fit gives every paper
    frame = frame.sort_values("doc_id", ignore_index=True)
    own = rng.normal(size=(len(base), DIM)).astype(np.float32)  # each real paper's own part
    vectors = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 65536):  # topic direction + the paper's own + a copy's own noise
        block = frame.iloc[start : start + 65536]
        perturb = rng.normal(scale=0.1, size=(len(block), DIM)).astype(np.float32)
        vectors[start : start + len(block)] = (
            directions[block["topic"].to_numpy() + 1] + own[block["source"].to_numpy()] + perturb
        )
    topics = pd.DataFrame(
        {
            "topic": np.arange(-1, N_TOPICS, dtype=np.int32),
            "label": ["Unassigned"] + [f"topic {t}" for t in range(N_TOPICS)],
            "size": np.bincount(frame["topic"] + 1, minlength=N_TOPICS + 1).astype(np.int32),
        }
    )
    return {"frame": frame, "vectors": vectors, "topics": topics}


def render_map(folder: Path, tables: dict) -> float:
    """Write map.html, its shards, plotly.js and the assets into folder as the render stage
    does (render.map_page, render.write_files); seconds taken."""
    from plotly.offline import get_plotlyjs

    from pipeline.config import RenderConfig
    from pipeline.stages import render
    from pipeline.stages.render.shaping import Summary

    started = time.perf_counter()
    frame = tables["frame"]
    counts = frame["venue"].value_counts().sort_index()
    summary = Summary(
        papers=len(frame),
        venue_papers=[(v, int(c)) for v, c in counts.items()],
        topics=N_TOPICS,
        themes=None,
        unassigned=int((frame["topic"] < 0).sum()),
    )
    embeddings = (frame["doc_id"].tolist(), tables["vectors"])
    files = render.map_page(
        frame, tables["topics"], None, embeddings, summary, RenderConfig(), "Bench", "index.html"
    )
    render.write_files(folder, files, get_plotlyjs())
    return time.perf_counter() - started


def folder_bytes(folder: Path) -> dict:
    plotly = {"plotly.min.js", "plotly-gl2d.min.js"}  # once per folder, whatever its papers
    files = [p for p in folder.rglob("*") if p.is_file() and p.name not in plotly]
    files = [p for p in files if ".render" not in p.parts]  # render's own, not the pages'
    shards = [p for p in files if p.parent.name == "map-data"]
    return {
        "total": sum(p.stat().st_size for p in files),
        "map_html": (folder / "map.html").stat().st_size,
        "shards": sum(p.stat().st_size for p in shards),
        "shard_files": len(shards),
    }


READY = "() => document.getElementById('topic-map')?.dataset.ready === 'true'"
GL_PIXELS = """() => {
    const canvas = document.querySelector('#topic-map canvas.gl-canvas-context');
    const gl = canvas && canvas.getContext('webgl');
    if (!gl) return 0;
    const px = new Uint8Array(gl.drawingBufferWidth * gl.drawingBufferHeight * 4);
    gl.readPixels(0, 0, gl.drawingBufferWidth, gl.drawingBufferHeight, gl.RGBA,
        gl.UNSIGNED_BYTE, px);
    let n = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
    return n;
}"""
# a zoom to the middle quarter and back, as plotly does on the wheel: seconds each, mean
TIMED_ZOOM = """async () => {
    const gd = document.getElementById('topic-map');
    const [x0, x1] = gd._fullLayout.xaxis.range, [y0, y1] = gd._fullLayout.yaxis.range;
    const t = performance.now();
    const q = (a, b) => [a + (b - a) * 3 / 8, a + (b - a) * 5 / 8];
    await Plotly.relayout(gd, {'xaxis.range': q(x0, x1), 'yaxis.range': q(y0, y1)});
    await Plotly.relayout(gd, {'xaxis.range': [x0, x1], 'yaxis.range': [y0, y1]});
    return (performance.now() - t) / 2000;
}"""
TIMED_SEARCH = """async (q) => {
    const t = performance.now();
    const map = window.TopicMap.instance;
    await map.search(q);
    return [performance.now() - t, map.state.active.reduce((n, v) => n + v, 0)];
}"""
POINT_AT = """(i) => {
    const gd = document.getElementById('topic-map');
    const drawn = window.TopicMap.instance.figure.drawn;
    for (const trace of gd._fullData) {
        const list = drawn.get(trace.uid);
        if (!trace.uid.startsWith('papers-') || !list) continue;
        const k = list.indexOf(i);
        if (k < 0) continue;
        const xa = gd._fullLayout[trace.xaxis.replace('x', 'xaxis')];
        const ya = gd._fullLayout[trace.yaxis.replace('y', 'yaxis')];
        const box = gd.getBoundingClientRect();
        return {x: box.left + xa._offset + xa.l2p(trace.x[k]),
                y: box.top + ya._offset + ya.l2p(trace.y[k])};
    }
    return null;
}"""


# a square about the middle of the map holding about a tenth of the papers: its corners in
# page pixels, and the papers inside
TENTH_BOX = """() => {
    const gd = document.getElementById('topic-map'), D = window.TopicMap.instance.data;
    const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
    const [cx, cy] = [(xa.range[0] + xa.range[1]) / 2, (ya.range[0] + ya.range[1]) / 2];
    const inside = (h) => { let n = 0; for (let i = 0; i < D.N; i++)
        if (Math.abs(D.x[i] - cx) <= h && Math.abs(D.y[i] - cy) <= h) n++; return n; };
    let [low, high] = [0, Math.abs(xa.range[1] - xa.range[0])];
    for (let step = 0; step < 30; step++) {
        const h = (low + high) / 2;
        if (inside(h) < D.N / 10) low = h; else high = h;
    }
    const box = gd.getBoundingClientRect(), h = (low + high) / 2;
    const px = (x) => box.left + xa._offset + xa.l2p(x);
    const py = (y) => box.top + ya._offset + ya.l2p(y);
    return {x0: px(cx - h), y0: py(cy + h), x1: px(cx + h), y1: py(cy - h), papers: inside(h)};
}"""
# when the mouse is released, when the list's counts change (update(), before the draw) and
# when plotly last drew the map (plotly_afterplot: its own selection's, then the redraw's)
SELECTION_WATCH = """() => { const w = window.__select = {};
    const now = () => performance.now();
    window.addEventListener('mouseup', () => { w.up = now(); }, {capture: true, once: true});
    new MutationObserver((_, seen) => { w.counted = now(); seen.disconnect(); })
        .observe(document.getElementById('list-counts'), {childList: true});
    document.getElementById('topic-map').on('plotly_afterplot', () => { w.drawn = now(); });
}"""
SELECTION_LISTED = """() => {
    const m = window.TopicMap.instance, titles = document.querySelectorAll('#match-list .nb-title');
    return m.state.selection !== null && !!document.querySelector('#list-counts dl')
        && titles.length > 0 && !document.getElementById('match-list').hasAttribute('aria-busy');
}"""
TIMED_EXPORT = """async (format) => {
    const t = performance.now();
    const text = await window.TopicMap.instance.lists.exportList(format);
    return [performance.now() - t, text.length];
}"""


def _select_and_export(page) -> dict:
    """A box drawn round a tenth of the papers (a real mouse drag in box-select mode): seconds
    from releasing the mouse to the list's counts shown and the map redrawn (the page's own
    clock), and to the list's first 50 titles shown (their text shards loaded); then its export
    as CSV (the shards not loaded before) and as BibTeX."""
    page.click("#drag-mode [data-drag=select]")
    box = page.evaluate(TENTH_BOX)
    page.evaluate(SELECTION_WATCH)
    page.mouse.move(box["x0"], box["y0"])
    page.mouse.down()
    page.mouse.move(box["x1"], box["y1"], steps=6)
    started = time.perf_counter()
    page.mouse.up()
    page.wait_for_function(SELECTION_LISTED, polling=10, timeout=60_000)
    titled_s = time.perf_counter() - started
    watched = page.evaluate("window.__select")
    selected = page.evaluate("+document.getElementById('match-count').dataset.count")
    csv_ms, csv_chars = page.evaluate(TIMED_EXPORT, "csv")
    bib_ms, _ = page.evaluate(TIMED_EXPORT, "bibtex")
    page.click("#clear-selection")
    page.click("#drag-mode [data-drag=pan]")
    return {
        "select_s": round((max(watched["drawn"], watched["counted"]) - watched["up"]) / 1000, 3),
        "select_counted_s": round((watched["counted"] - watched["up"]) / 1000, 3),
        "select_titled_s": round(titled_s, 3),
        "selected": [int(box["papers"]), int(selected)],
        "csv_s": round(csv_ms / 1000, 3),
        "csv_mb": round(csv_chars / 2**20, 1),
        "bibtex_s": round(bib_ms / 1000, 3),
    }


# seconds from a year range (or a colouring) set to the map redrawn, as the histogram's brush and
# the colour select set them (the page's own actions, awaited)
TIMED_ACTION = """async ([action, args]) => {
    const map = window.TopicMap.instance;
    const t = performance.now();
    await map[action](...args);
    return (performance.now() - t) / 1000;
}"""


def _brush_and_recolour(page) -> dict:
    """Median seconds of three year ranges and of three colourings, each to the map redrawn."""
    years = page.evaluate("window.TopicMap.instance.data.DATA.years.years")
    ranges = [(years[1], years[-2]), (years[0], years[1]), (years[-2], years[-1])]
    brush = [page.evaluate(TIMED_ACTION, ["setYears", list(r)]) for r in ranges]
    page.evaluate(TIMED_ACTION, ["setYears", [years[0], years[-1]]])
    colours = [page.evaluate(TIMED_ACTION, ["setColour", [c]]) for c in ("year", "venue", "topic")]
    return {
        "brush_s": round(statistics.median(brush), 3),
        "recolour_s": round(statistics.median(colours), 3),
    }


def _open(browser, folder: Path, timeout_ms: int) -> tuple[object, object, list, float]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors, outside = [], []
    prefix = folder.as_uri() + "/"
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith(prefix) else outside.append(r.url))
    started = time.perf_counter()
    page.goto((folder / "map.html").as_uri(), wait_until="commit", timeout=timeout_ms)
    page.wait_for_function(READY, timeout=timeout_ms, polling=20)
    drawn = time.perf_counter() - started
    assert page.evaluate(GL_PIXELS) > 0, "the WebGL canvas is blank"
    return context, page, errors + outside, drawn


def _click_s(page, index: int) -> float | None:
    """A real mouse click on paper `index` to its panel with abstract and 5 neighbours."""
    at = page.evaluate(POINT_AT, index)
    if at is None:
        return None
    before = page.evaluate("document.getElementById('paper-detail').dataset.paper || ''")
    page.mouse.move(at["x"] - 20, at["y"] - 20)
    page.mouse.move(at["x"], at["y"], steps=4)  # plotly clicks the point it hovers
    page.wait_for_timeout(300)
    started = time.perf_counter()
    page.mouse.click(at["x"], at["y"])
    # the paper under the pointer (a point drawn on top of it may be another paper's)
    page.wait_for_function(
        """(before) => {
            const detail = document.getElementById('paper-detail');
            return !detail.hidden && detail.dataset.paper !== before
                && document.querySelectorAll('#paper-neighbours button').length === 5;
        }""",
        arg=before,
        polling=10,
        timeout=60_000,
    )
    return time.perf_counter() - started


def launch(playwright):
    """Headless Debian chromium with the test suite's flags (the benches' browser)."""
    return playwright.chromium.launch(
        executable_path="/usr/bin/chromium",
        headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    )


def measure(folder: Path, n: int, timeout_ms: int = 300_000) -> dict:
    """Open the map in headless Chromium (the test suite's flags) and time what it does."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        load_before = os.getloadavg()[0]
        context, page, problems, drawn = _open(browser, folder, timeout_ms)
        page.evaluate("window.TopicMap.instance.setView('combined')")
        # papers near the middle of the map, where a click hits a point, not two
        clicks = [_click_s(page, i) for i in (n // 3, n // 2, 2 * n // 3)]
        page.keyboard.press("Escape")
        zoom_s = page.evaluate(TIMED_ZOOM)
        selecting = _select_and_export(page)  # before the searches: no shard loaded but clicks'
        brushing = _brush_and_recolour(page)
        started = time.perf_counter()
        page.evaluate(TIMED_SEARCH, "learning")  # the first search loads every shard
        text_s = time.perf_counter() - started
        searches = [page.evaluate(TIMED_SEARCH, q) for q in ("graph", "diffusion", "robust")]
        memory = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : 0")
        context.close()
        browser.close()
    return {
        "draw_s": round(drawn, 2),
        "text_s": round(text_s, 2),
        "search_s": round(statistics.median(s[0] for s in searches) / 1000, 3),
        "search_hits": [int(s[1]) for s in searches],
        "click_s": round(statistics.median(c for c in clicks if c is not None), 3),
        "zoom_s": round(zoom_s, 3),
        **selecting,
        **brushing,
        "js_heap_mb": round(memory / 2**20),
        "problems": problems,
        # the machine's 1-minute load average as the measuring began and ended: other work
        # running beside the browser slows every figure
        "load": [round(load_before, 1), round(os.getloadavg()[0], 1)],
    }


def bench_map(sizes: list[int], unique: bool = True) -> list[dict]:
    """Render and measure a map of each size (and of the 9,673 unique papers)."""
    rows = []
    runs = ([len(real_papers())] if unique else []) + sizes
    for n in runs:
        with tempfile.TemporaryDirectory(prefix="topicmap-map-") as work:
            folder = Path(work)
            started = time.perf_counter()
            tables = map_tables(n)
            render_s = render_map(folder, tables)
            row = {"papers": n, "unique": n == len(real_papers()), "render_s": round(render_s, 1)}
            row["make_s"] = round(time.perf_counter() - started - render_s, 1)
            sizes_ = folder_bytes(folder)
            row["bytes_per_paper"] = round(sizes_["total"] / n)
            row["map_html_per_paper"] = round(sizes_["map_html"] / n)
            row["shards_per_paper"] = round(sizes_["shards"] / n)
            row["shard_files"] = sizes_["shard_files"]
            del tables
            row |= measure(folder, n)
        print(report([row]), flush=True)
        rows.append(row)
    return rows


def cpu_line() -> str:
    """The CPU the figures come from: its model name, cores and the flags that matter to
    speed (bench_limit.cpu_flags, as the other sections print them)."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        info = []
    name = next((ln.split(":", 1)[1].strip() for ln in info if ln.startswith("model name")), "?")
    flags = " ".join(cpu_flags()) or "none listed"
    return f"CPU {name}, {os.cpu_count()} cores, flags {flags}"


def report(rows: list[dict]) -> str:
    lines = [cpu_line()]
    for r in rows:
        lines.append(
            f"map {r['papers']:>9,} papers{' (unique)' if r['unique'] else ''}: render "
            f"{r['render_s']} s; {r['bytes_per_paper']} B/paper beyond plotly.js (map.html "
            f"{r['map_html_per_paper']}, {r['shard_files']} shards {r['shards_per_paper']}); "
            f"points drawn {r['draw_s']} s, all text loaded {r['text_s']} s, search "
            f"{r['search_s']} s ({r['search_hits']} hits), click to panel {r['click_s']} s, "
            f"zoom {r['zoom_s']} s, "
            f"a tenth selected {r['select_s']} s ({r['selected'][1]:,} papers; counted "
            f"{r['select_counted_s']} s, first titles {r['select_titled_s']} s), exported as CSV "
            f"{r['csv_s']} s ({r['csv_mb']} MB), as BibTeX {r['bibtex_s']} s, "
            f"year brush {r['brush_s']} s, recolour {r['recolour_s']} s, "
            f"JS heap {r['js_heap_mb']} MB, errors/outside requests: {len(r['problems'])}; "
            f"load {r['load'][0]}-{r['load'][1]}"
        )
    return "\n".join(lines)

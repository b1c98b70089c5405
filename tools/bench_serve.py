"""The serve section of `make bench` (`--serve-sizes 10000,100000`, with `--config` naming a
finished build to serve): `topicmap serve`'s figures, side by side in one run.

- start: `topicmap serve --dir <the config's output_dir> --port 0` in its own process, from
  its start to its first answer (the map page, served while the model loads) and to its first
  answer of /api/search (the model loaded);
- search: GET /api/search?k=10 over HTTP, median of 20 queries (the 20 rewritten abstracts of
  tests/support/rewritten_abstracts.json, each a new text, so its embedding is included), at each
  size: the 9,673 ICML + ICLR 2020-2023 papers of ../shared/corpora repeated to that size, copies'
  embeddings perturbed (seed 0), served in this process by the same app;
- place: POST /api/place of the same 20 abstracts into the served build, median;
- hit rate: each rewritten abstract searched among the 9,673 papers (embedded by the model;
  the project's embeddings cache is used): how many find their own paper among the top 10.

Developer code.
"""

from __future__ import annotations

import http.client
import json
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
REWRITTEN = ROOT / "tests/support/rewritten_abstracts.json"
QUERIES = 20


def _get(port: int, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    connection.request(method, path, body=json.dumps(body) if body else None, headers=headers)
    response = connection.getresponse()
    answer = json.loads(response.read())
    connection.close()
    return response.status, answer


def start_to_first_answers(folder: Path) -> tuple[float, float]:
    """Seconds from `topicmap serve`'s start to its first answer (the map page, served while
    the model loads) and to its first /api/search answer (the model loaded)."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "pipeline", "serve", "--dir", str(folder), "--port", "0"]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        for line in process.stderr:
            if line.startswith("serving http://"):
                port = int(line.split(":")[2].split("/")[0])
                break
        else:
            raise RuntimeError("topicmap serve did not start")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("GET", "/map.html")
        assert connection.getresponse().status == 200
        page = time.perf_counter() - started
        status, answer = _get(port, "GET", "/api/search?q=graph+neural+networks&k=10")
        assert status == 200, answer
        return page, time.perf_counter() - started
    finally:
        process.terminate()
        process.wait(10)


def _in_thread(app):
    """(uvicorn serving `app` on a free port in a thread, the port)."""
    import uvicorn

    from pipeline.serve import bind

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return server, sock.getsockname()[1]


def _timed(port: int, requests: list[tuple[str, str, dict | None]]) -> float:
    """The median milliseconds of the requests (each answered 200)."""
    times = []
    for method, path, body in requests:
        start = time.perf_counter()
        status, answer = _get(port, method, path, body)
        times.append((time.perf_counter() - start) * 1000)
        assert status == 200, answer
    return statistics.median(times)


def corpora_papers(config) -> tuple[pd.DataFrame, np.ndarray]:
    """The 9,673 papers of ../shared/corpora as ingest keeps them, and their unit embeddings
    (through the project's embeddings cache)."""
    from pipeline.neighbours import unit_rows
    from pipeline.place import cached_embedder
    from pipeline.stages.ingest import make_documents, read_file
    from pipeline.text import embedding_texts

    records = []
    for path in sorted(CORPORA.glob("*.parquet")):
        records += read_file(path, config.ingest)[0]
    documents, _ = make_documents(records, config.ingest)
    quiet = config.model_copy(
        update={"embed": config.embed.model_copy(update={"progress_bar": False})}
    )
    vectors = cached_embedder(quiet)(embedding_texts(documents))
    return documents, unit_rows(vectors)


def grown(served, documents: pd.DataFrame, vectors: np.ndarray, size: int):
    """The served build with `size` papers: the corpora's repeated, copies' vectors perturbed."""
    from pipeline.neighbours import unit_rows
    from pipeline.serve.app import RESULT_COLUMNS

    take = np.arange(size) % len(documents)
    copy = np.arange(size) // len(documents)
    rng = np.random.default_rng(0)
    noise = rng.normal(scale=0.02, size=(size, vectors.shape[1])).astype(np.float32)
    papers = documents.iloc[take].reset_index(drop=True)
    papers["doc_id"] = [f"{d}-{c}" for d, c in zip(papers["doc_id"], copy, strict=True)]
    papers = papers.assign(topic=-1, topic_label="Unassigned", theme=-1, theme_label="Unassigned")
    papers = papers.assign(x=0.0, y=0.0)[RESULT_COLUMNS]
    return replace(
        served, papers=papers, vectors=unit_rows(vectors[take] + (copy > 0)[:, None] * noise)
    )


def hit_rate(served, documents: pd.DataFrame, vectors: np.ndarray, rewritten: list[dict]) -> int:
    from pipeline.search import MAX_ABSTRACT_CHARS, best_matches, query_text

    ids = documents["source_id"].to_numpy()
    hits = 0
    for item in rewritten:
        query = served.embed([query_text(item["rewrite"], MAX_ABSTRACT_CHARS)])[0]
        hits += item["id"] in ids[best_matches(vectors, query, 10)[0]].tolist()
    return hits


def bench_serve(config_path: Path, sizes: list[int]) -> dict:
    from pipeline.config import load_config
    from pipeline.serve.app import make_app
    from pipeline.serve.build import load_build

    config = load_config(config_path)
    folder = Path(config.output_dir).resolve()
    rewritten = json.loads(REWRITTEN.read_text(encoding="utf-8"))
    page_s, search_s = start_to_first_answers(folder)
    results = {"build": str(folder), "start_page_s": page_s, "start_search_s": search_s}
    served = load_build(folder)
    results["build_papers"] = len(served.papers)
    server, port = _in_thread(make_app(served))
    bodies = [("POST", "/api/place", {"abstract": r["rewrite"]}) for r in rewritten[:QUERIES]]
    results["place_ms"] = _timed(port, bodies)
    server.should_exit = True
    documents, vectors = corpora_papers(config)
    results["corpora_papers"] = len(documents)
    results["hits"] = hit_rate(served, documents, vectors, rewritten)
    searches = [
        ("GET", "/api/search?" + urlencode({"q": r["rewrite"], "k": 10}), None)
        for r in rewritten[:QUERIES]
    ]
    results["search_ms"] = {}
    for size in sizes:
        server, port = _in_thread(make_app(grown(served, documents, vectors, size)))
        results["search_ms"][size] = _timed(port, searches)
        server.should_exit = True
    one = served.embed([rewritten[0]["rewrite"]])[0]
    for size in sizes:  # the exact product alone, without the query's embedding
        base = grown(served, documents, vectors, size).vectors
        base @ one  # once before timing: the first product pays for touching the pages
        start = time.perf_counter()
        for _ in range(QUERIES):
            base @ one
        results.setdefault("product_ms", {})[size] = (time.perf_counter() - start) * 1000 / QUERIES
    return results


def report(results: dict) -> list[str]:
    lines = [
        f"serve ({results['build']}, {results['build_papers']:,} papers):",
        f"  start to first answer (the map page) {results['start_page_s']:.1f} s (limit 5 s); "
        f"to the first search answered, the model loaded: {results['start_search_s']:.1f} s",
        f"  /api/place median of {QUERIES}: {results['place_ms']:.0f} ms (limit 200 ms)",
    ]
    for size, ms in results["search_ms"].items():
        limit = 100 if int(size) <= 10_000 else 300
        product = results["product_ms"][size]
        lines.append(
            f"  /api/search at {int(size):,} papers, median of {QUERIES}: {ms:.0f} ms "
            f"(limit {limit} ms; the cosine product alone {product:.1f} ms)"
        )
    lines.append(
        f"  rewritten abstracts finding their paper in the top 10 of "
        f"{results['corpora_papers']:,}: {results['hits']} of 20 (at least 15)"
    )
    return lines

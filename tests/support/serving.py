"""Helpers of the server's tests: a small finished build written as the stages write it (its
papers embedded by a bag-of-words stand-in for the model), the server run on a free local port
in a thread or as `topicmap serve` in a process, and a plain HTTP client (http.client, so that
a path is sent exactly as written, `..` included)."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pandas as pd

from pipeline.config import Config, parse_config
from pipeline.stages.cluster import model as models
from tests.support import tables as make
from tests.support.build_folder import write_build
from tests.support.paths import ROOT

WIDTH = 384
ABSTRACTS = [
    "Graph neural networks pass messages between the nodes of molecules to predict chemistry.",
    "Message passing over molecular graphs predicts the properties of new drug candidates.",
    "Protein structures are predicted from amino acid sequences with attention over residues.",
    "Reinforcement learning agents explore sparse reward games with curiosity bonuses.",
    "Policy gradient methods for robots learn walking from rewards in simulation first.",
    "Offline reinforcement learning learns policies from logged data without exploration.",
]
TITLES = ["Molecule graphs", "Drug candidates", "Protein folding", "Curious agents", None, None]
TOPICS = [0, 0, 0, 1, 1, 1]


def fake_vectors(texts: list[str]) -> np.ndarray:
    """Unit bag-of-words vectors: each word a fixed random direction, so texts sharing words
    are similar (a stand-in for the model: the server's code, not the model, is under test)."""
    rows = np.zeros((len(texts), WIDTH), dtype=np.float32)
    for r, text in enumerate(texts):
        for word in re.findall(r"[a-z]+", text.lower()):
            rows[r] += np.random.default_rng(zlib.crc32(word.encode())).normal(size=WIDTH)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.where(norms > 0, norms, 1)).astype(np.float32)


class FakeQueryEncoder:
    """pipeline.serve.build.QueryEncoder's stand-in: fake_vectors, counting its calls."""

    def __init__(self, config: Config):
        self.precision = "fp32"
        self.calls = 0

    def load(self) -> None:
        self.model = "fake"

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return fake_vectors(texts)


def served_config(folder: Path) -> Config:
    return parse_config({"inputs": ["x.json"], "output_dir": str(folder)})


def write_served_build(folder: Path, config: Config) -> Path:
    """A finished build of six papers in two topics: its tables, saved model and two pages."""
    from pipeline import encoder as encoders

    folder.mkdir(parents=True, exist_ok=True)
    documents = make.documents(ABSTRACTS, titles=TITLES)
    texts = [f"{t}. {a}" if t else a for t, a in zip(TITLES, ABSTRACTS, strict=True)]
    vectors = fake_vectors(texts)
    doc_ids = documents["doc_id"].tolist()
    x = np.arange(len(doc_ids), dtype=np.float32)
    clusters = make.clusters(doc_ids, TOPICS, x=x.tolist(), y=(x * 2).tolist())
    topics = make.topics([0, 1], labels=["molecules", "agents"])
    themes = make.themes([0, 1], labels=["science", "control"])
    write_build(
        folder,
        documents=documents,
        embeddings=(doc_ids, vectors),
        clusters=clusters,
        topics=topics,
        themes=themes,
    )
    fitted = pd.DataFrame({"doc_id": doc_ids, "topic": TOPICS, "x": x, "y": x * 2, "weight": 1.0})
    identity = encoders.encoder_identity(config.embed)
    model = models.new_model(config.cluster, identity, len(doc_ids), fitted, vectors)
    models.save(model, folder / "model")
    (folder / "map.html").write_text("<!DOCTYPE html><title>map</title>", encoding="utf-8")
    (folder / "index.html").write_text("<!DOCTYPE html><title>report</title>", encoding="utf-8")
    return folder


@contextmanager
def running(app) -> Iterator[str]:
    """The app served by uvicorn on a free port of 127.0.0.1 in a thread; yields its base URL."""
    import uvicorn

    from pipeline.serve import bind

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the server did not start"
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@contextmanager
def serve_process(*args: str, timeout: float = 120) -> Iterator[tuple[str, subprocess.Popen]]:
    """`topicmap serve ARGS --port 0` in its own process; yields (its base URL, the process)
    once it printed the address it serves."""
    command = [sys.executable, "-m", "pipeline", "serve", *args, "--port", "0"]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            lines.append(line)
            if not line and process.poll() is not None:
                break
            found = re.search(r"serving (http://\S+?)/map\.html", line)
            if found:
                threading.Thread(target=process.stderr.read, daemon=True).start()  # drain
                yield found.group(1), process
                return
        raise AssertionError("topicmap serve did not start:\n" + "".join(lines)[-3000:])
    finally:
        process.terminate()
        process.wait(10)


def request(
    base: str,
    method: str,
    path: str,
    body: bytes | str | dict | None = None,
    headers: dict | None = None,
) -> tuple[int, object]:
    """(status, the JSON answer or the text) of one request; `path` is sent as written."""
    if isinstance(body, dict):
        body = json.dumps(body)
        headers = {"Content-Type": "application/json", **(headers or {})}
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    if response.getheader("content-type", "").startswith("application/json"):
        return response.status, json.loads(data)
    return response.status, data.decode("utf-8", errors="replace")

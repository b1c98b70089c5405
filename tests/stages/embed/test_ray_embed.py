"""The embed stage on Ray (ray_embed.py, work.py): the papers not cached, a chunk per documents
shard, embedded by actors that read the shards and write a resumable work folder. On a real local
Ray instance with the real model: the local engine's vectors bit for bit with 1 or 2 workers, a
worker killed once and restarted, a shard failing for good named in one line and the rerun
resuming from the work folder, an unreachable cluster in one line."""

from __future__ import annotations

import logging
import re
import socket
from pathlib import Path

import numpy as np
import pytest

from pipeline import schemas, tables
from pipeline.config import EmbedConfig, EngineConfig
from pipeline.document_shards import manifest_of
from pipeline.engines.ray_data import failure_line
from pipeline.errors import PipelineError
from pipeline.stages import embed
from pipeline.stages.embed.ray_embed import FAULT_ENV, ShardEncoder, failed_chunk, failed_what
from pipeline.stages.embed.work import WORK_DIR, plan, read_vectors, work_folder
from pipeline.stages.ingest import shards
from tests.support.paths import ROOT
from tests.support.runs import run_main, write_config

BUNDLED = [str(ROOT / "data/raw/*.txt")]
NO_CACHE = EmbedConfig(cache_dir=None, progress_bar=False)
SHARD = 20  # the 76 bundled papers in 4 shards
# the Ray engine's log line: papers, shards, actors, seconds, and the embedding itself
ON_RAY = re.compile(
    r"ray: embedded (\d+) papers in (\d+) shards on (\d+) actors in ([\d.]+) s \(.*?; "
    r"([\d.]+) s of it embedding once the first actor was ready"
)


@pytest.fixture(autouse=True)
def _workers_import_this_checkout(monkeypatch):
    """Ray's workers are new processes: they import the pipeline of this checkout."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv(FAULT_ENV, raising=False)


def _manifest(out: Path) -> Path:
    return manifest_of(out / "documents.parquet")


def test_work_is_the_missing_papers_of_each_fixed_shard_named_by_the_work(tmp_path):
    keys = [f"k{i}" for i in range(5)]
    # k1 cached, k4 a repeat of k0, k3 of k2: shard 0 embeds k0, shard 1 k2, shard 2 nothing
    keys[4], keys[3] = "k0", "k2"
    groups = embed.missing_groups(keys, {"k1": None}, 2)
    assert groups == [[0], [2], []]
    folder = work_folder(tmp_path, "embed", "model bf16", keys, 2)
    assert folder.parent == tmp_path / WORK_DIR
    assert folder == work_folder(tmp_path, "embed", "model bf16", keys, 2)
    assert folder != work_folder(tmp_path, "embed", "model fp32", keys, 2)
    assert folder != work_folder(tmp_path, "embed", "model bf16", keys[::-1], 2)
    assert folder != work_folder(tmp_path, "embed", "model bf16", keys, 3)
    sources = [tmp_path / f"part-{i:05d}.parquet" for i in range(3)]
    chunks = plan(sources, groups, keys, 2, folder)
    assert [(c.index, c.rows, c.keys) for c in chunks] == [(0, (0,), ("k0",)), (1, (0,), ("k2",))]
    assert chunks[1].source == sources[1] and not any(c.done for c in chunks)
    assert chunks[1].attempts == folder / "part-00001.attempts"
    tables.write_key_vectors(chunks[0].result, ["k0"], np.eye(1, 3, dtype=np.float32))
    assert chunks[0].done and read_vectors(chunks[0], 3).tolist() == [[1, 0, 0]]
    tables.write_key_vectors(chunks[1].result, ["x"], np.eye(1, 3, dtype=np.float32))
    with pytest.raises(PipelineError, match="does not match part-00001.parquet"):
        read_vectors(chunks[1], 3)


def test_the_work_of_the_smaller_tail_shards_is_found_at_their_rows(tmp_path):
    keys = [f"k{i}" for i in range(300)]  # shards of 75, 64, 64, 64 and 33 papers
    known = {f"k{i}" for i in range(300) if i not in (5, 170, 299)}
    groups = embed.missing_groups(keys, known, 100)
    assert groups == [[5], [], [170], [], [299]]
    sources = [tmp_path / f"part-{i:05d}.parquet" for i in range(5)]
    chunks = plan(sources, groups, keys, 100, tmp_path)
    assert [(c.index, c.rows, c.keys) for c in chunks] == [
        (0, (5,), ("k5",)),
        (2, (31,), ("k170",)),
        (4, (32,), ("k299",)),
    ]


def test_a_worker_that_cannot_read_its_shard_says_which_host_and_path(tmp_path):
    """What an actor raises (Ray carries it to the driver, which prints the worker's own
    line) when the shared path is not there on its node."""
    missing = tmp_path / "documents.shards" / "part-00003.parquet"
    chunk = plan([missing] * 4, [[], [], [], [0]], ["a", "b", "c", "d"], 1, tmp_path)[0]
    with pytest.raises(RuntimeError) as raised:
        ShardEncoder.embed(None, chunk)
    line = failure_line(raised.value, "embedding", 3, "rerun")
    assert line.startswith(f"{socket.gethostname()} cannot read {missing} ("), line
    assert not chunk.result.exists() and not chunk.attempts.exists()


def test_a_failure_names_the_shard_tried_most(tmp_path):
    sources = [tmp_path / f"part-{i:05d}.parquet" for i in range(3)]
    chunks = plan(sources, [[0], [1], [2]], ["a", "b", "c"], 1, tmp_path)
    tables.write_key_vectors(chunks[0].result, ["a"], np.ones((1, 2), np.float32))
    chunks[2].attempts.write_text("host 1\nhost 2\n", encoding="utf-8")
    chunks[1].attempts.write_text("host 3\n", encoding="utf-8")
    assert failed_chunk(chunks) == chunks[2]
    assert failed_what(chunks) == f"embedding shard {sources[2]}"
    assert failed_what(chunks[:1]) == "embedding a shard"  # all done: none to name


def _ingested(tmp_path: Path, inputs: list[str], name: str = "out") -> Path:
    out = tmp_path / name
    config = write_config(tmp_path / f"{name}.yaml", inputs, out)
    assert run_main("ingest", "--config", str(config)).returncode == 0
    return out


def test_a_fully_cached_ray_run_starts_no_ray_and_needs_no_shards(tmp_path):
    """The documents shards are for papers to embed: with every text cached none are read."""
    out = _ingested(tmp_path, BUNDLED)
    papers = tables.read_table(out / "documents.parquet", schemas.DOCUMENTS)
    config = EmbedConfig(cache_dir=str(tmp_path / "cache"), precision="fp32", progress_bar=False)
    path = embed.cache_path(tmp_path / "cache", config.model, "fp32", config.batch_size)
    cache = embed.EmbeddingCache(path, 384)
    texts = embed.embedding_texts(papers)
    cache.vectors = {embed.text_key(t): np.full(384, 0.05, np.float32) for t in texts}
    cache.save()
    embed.run(
        config, out / "documents.parquet", out / "embeddings.parquet", EngineConfig(kind="ray")
    )
    assert len(_vectors(out / "embeddings.parquet")) == len(papers)
    assert not (out / "documents.shards").exists() and not (out / WORK_DIR).exists()


def test_missing_or_stale_shards_are_one_line_saying_what_to_run(tmp_path):
    out = _ingested(tmp_path, BUNDLED)
    settings = "engine:\n  kind: ray\n  shard_papers: 20\nembed:\n  cache_dir: null"
    config = write_config(tmp_path / "ray.yaml", BUNDLED, out, settings)
    for _ in range(2):  # no shards, then shards of another size
        result = run_main("embed", "--config", str(config))
        assert result.returncode == 1 and "Traceback" not in result.stderr
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith(f"error: {out / 'documents.shards'}: no current shards of "), last
        assert "in shards of 20 papers" in last and "run `topicmap shards`" in last
        shards.run(EngineConfig(shard_papers=30), out / "documents.parquet", _manifest(out))
    assert not (out / "embeddings.parquet").exists()


def _vectors(path: Path) -> np.ndarray:
    return tables.read_embeddings(path)[1]


def _assert_same_vectors(ray_vectors: np.ndarray, local_vectors: np.ndarray) -> None:
    assert ray_vectors.shape == local_vectors.shape
    assert np.einsum("nd,nd->n", ray_vectors, local_vectors).min() >= 0.9999
    np.testing.assert_array_equal(ray_vectors, local_vectors)  # the same chunks: identical


@pytest.fixture(scope="module")
def bundled_local(tmp_path_factory) -> tuple[Path, np.ndarray]:
    """The bundled corpus ingested, and its embeddings by the local engine."""
    work = tmp_path_factory.mktemp("ray-bundled")
    out = _ingested(work, BUNDLED)
    engine = EngineConfig(shard_papers=SHARD)
    embed.run(NO_CACHE, out / "documents.parquet", out / "local.parquet", engine)
    return out, _vectors(out / "local.parquet")


def _fresh(bundled_local, tmp_path: Path) -> tuple[Path, np.ndarray]:
    """An output folder of its own holding the bundled documents and their shards (as the
    shards command leaves them), and the local vectors."""
    source, local = bundled_local
    out = tmp_path / "out"
    out.mkdir()
    (out / "documents.parquet").write_bytes((source / "documents.parquet").read_bytes())
    shards.run(EngineConfig(shard_papers=SHARD), out / "documents.parquet", _manifest(out))
    return out, local


def _embed_on_ray(out: Path, target: str, **engine) -> None:
    config = EngineConfig(kind="ray", shard_papers=SHARD, **engine)
    embed.run(NO_CACHE, out / "documents.parquet", out / target, config)


@pytest.mark.slow
@pytest.mark.ray
def test_unreachable_address_is_one_line_and_keeps_outputs(bundled_local, monkeypatch, tmp_path):
    out, _ = _fresh(bundled_local, tmp_path)
    previous = out / "embeddings.parquet"
    previous.write_bytes((bundled_local[0] / "local.parquet").read_bytes())
    before = previous.read_bytes()
    settings = f"engine:\n  kind: ray\n  shard_papers: {SHARD}\nembed:\n  cache_dir: null"
    config = write_config(tmp_path / "far.yaml", BUNDLED, out, settings)
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")  # discard port: nothing listens
    result = run_main("embed", "--config", str(config))
    assert result.returncode == 1
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith("error: cannot reach the Ray cluster at 127.0.0.1:9")
    ), result.stderr
    assert "Traceback" not in result.stderr
    assert previous.read_bytes() == before


@pytest.mark.slow
@pytest.mark.ray
def test_one_ray_worker_gives_the_local_embeddings(bundled_local, tmp_path):
    out, local = _fresh(bundled_local, tmp_path)
    _embed_on_ray(out, "ray1.parquet", concurrency=1)
    _assert_same_vectors(_vectors(out / "ray1.parquet"), local)
    assert not (out / WORK_DIR).exists(), "the work folder is removed once in the table"


@pytest.mark.slow
@pytest.mark.ray
def test_a_worker_killed_once_is_retried_by_ray(bundled_local, monkeypatch, tmp_path):
    """Two workers; the one that starts shard 2 dies (os._exit) and Ray restarts it."""
    out, local = _fresh(bundled_local, tmp_path)
    marker = tmp_path / "killed"
    monkeypatch.setenv(FAULT_ENV, f"part-00002.parquet:{marker}")
    _embed_on_ray(out, "ray2.parquet", concurrency=2)
    assert marker.exists(), "the worker was killed"
    _assert_same_vectors(_vectors(out / "ray2.parquet"), local)


@pytest.mark.slow
@pytest.mark.ray
def test_a_shard_failing_for_good_is_one_line_then_the_rerun_resumes(
    bundled_local, monkeypatch, tmp_path, caplog
):
    """One worker, no retries: it dies on shard 2 and the stage stops naming the shard; the
    rerun embeds only the shards not written yet."""
    out, local = _fresh(bundled_local, tmp_path)
    config = write_config(
        tmp_path / "kill.yaml",
        BUNDLED,
        out,
        f"engine:\n  kind: ray\n  concurrency: 1\n  shard_papers: {SHARD}\n  max_retries: 0\n"
        "embed:\n  cache_dir: null\n  progress_bar: false",
    )
    target = out / "resumed.parquet"
    monkeypatch.setenv(FAULT_ENV, "part-00002.parquet:always")
    failed = run_main("embed", "--config", str(config), "--embeddings", str(target))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith("error: embedding shard ") and "part-00002.parquet" in last, last
    assert "after 0 retries" in last
    assert not target.exists() and not list(out.glob("*.tmp"))
    work = next((out / WORK_DIR).glob("embed-*"))
    assert sorted(p.name for p in work.glob("vectors-*")) == [
        "vectors-00000.parquet",
        "vectors-00001.parquet",
    ]  # fmt: skip  (one worker: the shards before the one that failed are written)
    monkeypatch.delenv(FAULT_ENV)
    caplog.set_level(logging.INFO, logger="pipeline")
    resumed = run_main("embed", "--config", str(config), "--embeddings", str(target))
    assert resumed.returncode == 0, resumed.stderr
    assert "ray: 2 of 4 shards already embedded (resuming)" in caplog.messages
    on_ray = ON_RAY.search(caplog.text)  # the resumed run embeds the 2 shards left
    assert on_ray.group(1, 2, 3) == ("36", "2", "1")
    assert 0 < float(on_ray[5]) < float(on_ray[4])  # the actors' embedding itself, in the whole
    assert "embedded 76 new papers (0 from the cache)" in caplog.text
    _assert_same_vectors(_vectors(target), local)

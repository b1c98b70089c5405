"""`engine: ray`: the per-paper stages on a real local Ray instance (started by each stage on
this machine's cores), the real model and real Parquet, against the local engine: the same
embeddings, topics, coordinates and labels; a worker killed mid-stage; an unreachable cluster;
a rerun resuming from the shards already written."""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.config import EmbedConfig, EngineConfig
from pipeline.engines import document_shards
from pipeline.engines.shards import (
    WORK_DIR,
    plan,
    read_vectors,
    shard_bounds,
    work_folder,
    write_vectors,
)
from pipeline.errors import PipelineError
from pipeline.stages import embed
from pipeline.stages.embed.ray_embed import (
    FAULT_ENV,
    WORKER_ERROR,
    EncoderActor,
    failed_shard,
    failure_message,
)
from tests.support import tables as make
from tests.support.paths import CORPORA, ROOT
from tests.support.runs import load_tool, run_main, write_config

BUNDLED = [str(ROOT / "data/raw/*.txt")]
NO_CACHE = EmbedConfig(cache_dir=None, progress_bar=False)
VENUES = ("iclr", "icml")
SHARD = 20  # the 76 bundled papers in 4 shards


@pytest.fixture(autouse=True)
def _workers_import_this_checkout(monkeypatch):
    """Ray's workers are new processes: they import the pipeline of this checkout."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv(FAULT_ENV, raising=False)


def test_the_local_engine_never_imports_ray():
    """`make all` does not need Ray: nothing on the local engine's way imports it."""
    code = (
        "import sys, pipeline.cli, pipeline.api\n"
        "import pipeline.stages.embed, pipeline.stages.cluster, pipeline.stages.label\n"
        "from pipeline.stages.cluster import engine_placer\n"
        "from pipeline.config import EngineConfig\n"
        "engine_placer(EngineConfig())\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_work_is_the_missing_papers_of_each_fixed_shard_named_by_the_work(tmp_path):
    keys = [f"k{i}" for i in range(5)]
    assert shard_bounds(5, 2) == [(0, 2), (2, 4), (4, 5)] and shard_bounds(0, 2) == []
    # k1 cached, k4 a repeat of k0, k3 of k2: shard 0 embeds k0, shard 1 k2, shard 2 nothing
    keys[4], keys[3] = "k0", "k2"
    groups = embed.missing_groups(keys, {"k1": None}, 2)
    assert groups == [[0], [2], []]
    folder = work_folder(tmp_path, "embed", "model bf16", keys, 2)
    assert folder == work_folder(tmp_path, "embed", "model bf16", keys, 2)
    assert folder != work_folder(tmp_path, "embed", "model fp32", keys, 2)
    assert folder != work_folder(tmp_path, "embed", "model bf16", keys[::-1], 2)
    sources = [tmp_path / f"part-{i:05d}.parquet" for i in range(3)]
    shards = plan(sources, groups, keys, 2, folder)
    assert [(s.index, s.rows, s.keys) for s in shards] == [
        (0, (0,), ("k0",)),
        (1, (0,), ("k2",)),
    ]
    assert shards[1].source == sources[1] and not any(s.done for s in shards)
    assert shards[1].attempts == folder / "part-00001.attempts"
    write_vectors(shards[0].result, ["k0"], np.eye(1, 3, dtype=np.float32))
    assert shards[0].done and read_vectors(shards[0], 3).tolist() == [[1, 0, 0]]
    write_vectors(shards[1].result, ["x"], np.eye(1, 3, dtype=np.float32))
    with pytest.raises(PipelineError, match="does not match part-00001.parquet"):
        read_vectors(shards[1], 3)


def test_the_work_of_the_smaller_tail_shards_is_found_at_their_rows(tmp_path):
    keys = [f"k{i}" for i in range(300)]  # shards of 75, 64, 64, 64 and 33 papers
    starts = [start for start, _ in shard_bounds(300, 100)]
    assert starts == [0, 75, 139, 203, 267]
    groups = embed.missing_groups(keys, {f"k{i}" for i in range(300) if i not in (5, 170, 299)},
                                  100)  # fmt: skip
    assert groups == [[5], [], [170], [], [299]]
    sources = [tmp_path / f"part-{i:05d}.parquet" for i in range(5)]
    shards = plan(sources, groups, keys, 100, tmp_path)
    assert [(s.index, s.rows, s.keys) for s in shards] == [
        (0, (5,), ("k5",)), (2, (31,), ("k170",)), (4, (32,), ("k299",))
    ]  # fmt: skip


def _finish_times(sizes: list[int], workers: int) -> list[int]:
    """When each worker is done, in papers embedded, taking shards in turn as it comes free."""
    done = [0] * workers
    for size in sizes:
        done[done.index(min(done))] += size
    return sorted(done)


def test_shards_are_cut_finer_at_the_tail_so_that_workers_finish_together():
    sizes = [stop - start for start, stop in shard_bounds(3401, 512)]
    assert sizes == [512, 512, 512, 467, 350, 262, 197, 148, 111, 83, 64, 64, 64, 55]
    # equal shards of 512 leave one of two workers alone with the last 329 papers
    assert np.ptp(_finish_times([512] * 6 + [329], 2)) == 329
    for n, size in [(3401, 512), (2000, 256), (9673, 512), (100_000, 512)]:
        bounds = shard_bounds(n, size)
        assert [b[0] for b in bounds[1:]] == [b[1] for b in bounds[:-1]]  # consecutive
        assert bounds[0][0] == 0 and bounds[-1][1] == n
        sizes = [stop - start for start, stop in bounds]
        assert max(sizes) == size and sorted(sizes[:-1], reverse=True) == sizes[:-1]
        for workers in (2, 3, 4):
            assert np.ptp(_finish_times(sizes, workers)) <= 64 * 2
    assert shard_bounds(7, 3) == [(0, 3), (3, 6), (6, 7)]  # below the tail's floor: even cuts


def test_document_shards_are_the_tables_rows_and_only_current_ones_are_used(tmp_path, caplog):
    papers = make.documents(
        [f"abstract {i}" for i in range(7)], titles=[f"Title {i}" for i in range(7)]
    )
    documents = tmp_path / "documents.parquet"
    folder = document_shards.folder_of(documents)
    assert folder == tmp_path / "documents.shards"
    (tmp_path / ".documents.shards.x1.tmp").mkdir()  # what a killed run leaves
    written = document_shards.write(papers, folder, 3, "fp1")
    assert [p.name for p in written] == [f"part-0000{i}.parquet" for i in range(3)]
    back = pd.concat([tables.read_table(p, schemas.DOCUMENTS) for p in written])
    assert back["doc_id"].tolist() == papers["doc_id"].tolist()
    assert back["abstract"].tolist() == papers["abstract"].tolist()
    assert document_shards.current(folder, 7, 3, "fp1") == written
    assert document_shards.current(folder, 7, 3, "fp2") is None  # another table's shards
    assert document_shards.current(folder, 7, 2, "fp1") is None  # another shard size
    assert document_shards.current(folder, 8, 3, "fp1") is None
    before = written[0].stat().st_mtime_ns
    caplog.set_level(logging.INFO, logger="pipeline")
    assert document_shards.ensure(papers, documents, 3, "fp1") == written
    assert written[0].stat().st_mtime_ns == before and not caplog.messages  # kept
    assert len(document_shards.ensure(papers, documents, 2, "fp1")) == 4  # written again
    assert "ray: writing documents.parquet as 4 shards of at most 2 papers" in caplog.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["documents.shards"]  # no temporaries
    old = {"documents": "fp1", "papers": "7", "shard_papers": "2"}  # an older version's cut
    tables.write_table(papers.iloc[:2], folder / "part-00000.parquet", schemas.DOCUMENTS, notes=old)
    assert document_shards.current(folder, 7, 2, "fp1") is None
    document_shards.drop(folder)
    assert not folder.exists()
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(PipelineError, match="holds files that are not document shards"):
        document_shards.write(papers, folder, 3, "fp1")
    assert (folder / "notes.txt").exists() and len(list(tmp_path.iterdir())) == 1


def test_a_worker_that_cannot_read_its_shard_says_which_host_and_path(tmp_path):
    """What an actor raises (Ray carries it to the driver, which prints the part after
    WORKER_ERROR) when the shared path is not there on its node."""
    missing = tmp_path / "documents.shards" / "part-00003.parquet"
    with pytest.raises(RuntimeError) as raised:
        EncoderActor._embed(
            None, missing, [0], tmp_path / "vectors-00003.parquet", tmp_path / "part-00003.attempts"
        )
    line = failure_message(raised.value, [], 3)
    assert line.startswith(f"{socket.gethostname()} cannot read {missing} ("), line
    assert not (tmp_path / "vectors-00003.parquet").exists()


def test_ingest_on_ray_writes_the_documents_as_shards_and_local_removes_them(tmp_path):
    out = tmp_path / "out"
    config = write_config(
        tmp_path / "ray.yaml", BUNDLED, out, "engine:\n  kind: ray\n  shard_papers: 20"
    )
    assert run_main("ingest", "--config", str(config)).returncode == 0
    documents = out / "documents.parquet"
    papers = tables.read_table(documents, schemas.DOCUMENTS)
    fingerprint = tables.read_lineage(documents).fingerprint
    shards = document_shards.current(out / "documents.shards", len(papers), 20, fingerprint)
    assert shards is not None and len(shards) == 4  # 76 papers
    assert not list(out.glob(".*.tmp"))
    local = write_config(tmp_path / "local.yaml", BUNDLED, out)
    assert run_main("ingest", "--config", str(local)).returncode == 0
    assert not (out / "documents.shards").exists()


def test_a_failure_names_the_shard_tried_most_or_the_workers_own_problem(tmp_path):
    sources = [tmp_path / f"part-{i:05d}.parquet" for i in range(3)]
    shards = plan(sources, [[0], [1], [2]], ["a", "b", "c"], 1, tmp_path)
    write_vectors(shards[0].result, ["a"], np.ones((1, 2), np.float32))
    shards[2].attempts.write_text("host 1\nhost 2\n", encoding="utf-8")
    shards[1].attempts.write_text("host 3\n", encoding="utf-8")
    assert failed_shard(shards) == shards[2]
    died = RuntimeError("ActorDiedError: The actor died unexpectedly\n\tclass_name: ...")
    message = failure_message(died, shards, 3)
    assert message.startswith(f"embedding shard {shards[2].source} failed on Ray after 3 retries")
    unreadable = RuntimeError(
        f"UserCodeException\n  {WORKER_ERROR}node7 cannot read /d/t.parquet (x)\n"
    )
    assert failure_message(unreadable, shards, 3) == "node7 cannot read /d/t.parquet (x)"


def _ingested(tmp_path: Path, inputs: list[str], name: str = "out") -> Path:
    out = tmp_path / name
    config = write_config(tmp_path / f"{name}.yaml", inputs, out)
    assert run_main("ingest", "--config", str(config)).returncode == 0
    return out


def test_a_fully_cached_ray_run_starts_no_ray_and_writes_no_shards(tmp_path):
    """The documents shards are for papers to embed: with every text cached there are none."""
    out = _ingested(tmp_path, BUNDLED)
    papers = tables.read_table(out / "documents.parquet", schemas.DOCUMENTS)
    config = EmbedConfig(cache_dir=str(tmp_path / "cache"), precision="fp32", progress_bar=False)
    cache = embed.EmbeddingCache(embed.cache_path(tmp_path / "cache", config.model, "fp32"), 384)
    texts = embed.embedding_texts(papers)
    cache.vectors = {embed.text_key(t): np.full(384, 0.05, np.float32) for t in texts}
    cache.save()
    embed.run(
        config, out / "documents.parquet", out / "embeddings.parquet", EngineConfig(kind="ray")
    )
    assert len(_vectors(out / "embeddings.parquet")) == len(papers)
    assert not (out / "documents.shards").exists() and not (out / WORK_DIR).exists()


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
    """An output folder of its own holding the bundled documents, and the local vectors."""
    source, local = bundled_local
    out = tmp_path / "out"
    out.mkdir()
    (out / "documents.parquet").write_bytes((source / "documents.parquet").read_bytes())
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
    settings = "engine: ray\nembed:\n  cache_dir: null"
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
    assert not (out / WORK_DIR).exists(), "the shards are removed once in the table"


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
        tmp_path / "kill.yaml", BUNDLED, out,
        f"engine:\n  kind: ray\n  concurrency: 1\n  shard_papers: {SHARD}\n  max_retries: 0\n"
        "embed:\n  cache_dir: null\n  progress_bar: false",
    )  # fmt: skip
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
    bench_ray = load_tool("bench_ray")  # reads these lines: they are the lines logged
    assert bench_ray.ON_RAY.search(caplog.text).group(1, 2) == ("36", "2")
    assert bench_ray.EMBEDDED.search(caplog.text)[1] == "76"
    working = float(bench_ray.WORKING.search(caplog.text)[2])  # the actors' embedding itself
    assert 0 < working < float(bench_ray.ON_RAY.search(caplog.text)[4])
    _assert_same_vectors(_vectors(target), local)


def _real_slice(folder: Path, per_venue: int = 1000) -> Path:
    """2,000 real papers: the first 1,000 of ICLR 2023 and of ICML 2023 (read from
    ../shared/corpora by path, written to a temporary file)."""
    parts = [pd.read_parquet(CORPORA / f"{v}2023.parquet").head(per_venue) for v in VENUES]
    path = folder / "slice2000.parquet"
    pd.concat(parts, ignore_index=True).to_parquet(path, index=False)
    return path


def _build(config: Path) -> None:
    for stage in ("ingest", "embed", "cluster", "label"):
        result = run_main(stage, "--config", str(config))
        assert result.returncode == 0, f"{stage}: {result.stderr[-2000:]}"


def _digest(frame: pd.DataFrame) -> str:
    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).values).hexdigest()


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.skipif(not CORPORA.exists(), reason="../shared/corpora is not present")
def test_2000_real_papers_same_results_on_ray_and_local_through_the_cli(tmp_path, caplog):
    """ingest, embed, cluster (fitted on a 1,000-paper sample on the driver, the other 1,000
    placed on Ray) and label (the terms counted on Ray) through the CLI: every table the same
    on both engines."""
    inputs = [str(_real_slice(tmp_path))]
    settings = (
        "embed:\n  cache_dir: null\n  progress_bar: false\n"
        "cluster:\n  fit_max_papers: 1000\n  n_epochs: 200\nlabel:\n  representation: ctfidf\n"
    )
    outs, printed = {}, {}
    caplog.set_level(logging.INFO, logger="pipeline")
    for kind in ("local", "ray"):
        outs[kind] = tmp_path / kind
        engine = f"engine:\n  kind: {kind}\n  concurrency: 2\n  shard_papers: 256\n"
        config = write_config(tmp_path / f"{kind}.yaml", inputs, outs[kind], settings + engine)
        _build(config)
        printed[kind] = caplog.text
        caplog.clear()
    assert "ray: counted the terms of 1000 papers in 4 chunks" in printed["ray"]
    # ingest wrote the documents shards the embed stage's actors read
    assert "ray: the documents as 13 shards of at most 256 papers" in printed["ray"]
    assert "ray: writing" not in printed["ray"]
    assert "ray:" not in printed["local"]
    bench_ray = load_tool("bench_ray")  # the local engine's embedding itself, as the bench reads it
    assert float(bench_ray.WORKING.search(printed["local"])[1]) > 0
    local, ray = outs["local"], outs["ray"]
    embeddings = [_vectors(o / "embeddings.parquet") for o in (ray, local)]
    _assert_same_vectors(*embeddings)
    clusters = [tables.read_table(o / "clusters.parquet", schemas.CLUSTERS) for o in (local, ray)]
    assert (clusters[0]["placed"] == "assigned").sum() == 1000
    pd.testing.assert_frame_equal(clusters[0], clusters[1])
    topics = [tables.read_table(o / "topics.parquet", schemas.TOPICS) for o in (local, ray)]
    columns = ["topic", "label", "size"]
    assert _digest(topics[0][columns]) == _digest(topics[1][columns])
    for column in ("terms", "term_weights"):
        assert [list(t) for t in topics[0][column]] == [list(t) for t in topics[1][column]]
    themes = [tables.read_table(o / "themes.parquet", schemas.THEMES) for o in (local, ray)]
    pd.testing.assert_frame_equal(themes[0], themes[1])

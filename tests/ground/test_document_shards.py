"""How the documents table is cut into shards (`pipeline.document_shards`): consecutive, the
tail cut finer so that workers finish together, and a manifest that says what is current."""

from __future__ import annotations

import json

import numpy as np

from pipeline.document_shards import current, folder_of, manifest, manifest_of, shard_bounds


def _finish_times(sizes: list[int], workers: int) -> list[int]:
    """When each worker is done, in papers embedded, taking shards in turn as it comes free."""
    done = [0] * workers
    for size in sizes:
        done[done.index(min(done))] += size
    return sorted(done)


def test_shards_are_cut_finer_at_the_tail_so_that_workers_finish_together():
    assert shard_bounds(5, 2) == [(0, 2), (2, 4), (4, 5)] and shard_bounds(0, 2) == []
    assert [start for start, _ in shard_bounds(300, 100)] == [0, 75, 139, 203, 267]
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


def test_only_the_shards_of_this_table_cut_this_way_and_all_there_are_current(tmp_path):
    documents = tmp_path / "documents.parquet"
    assert folder_of(documents) == tmp_path / "documents.shards"
    path = manifest_of(documents)
    assert current(path, 7, 3, "fp1") is None  # no manifest
    path.parent.mkdir()
    path.write_text(json.dumps(manifest("fp1", 7, 3)), encoding="utf-8")
    parts = [path.parent / f"part-0000{i}.parquet" for i in range(3)]
    assert [p["rows"] for p in manifest("fp1", 7, 3)["parts"]] == [[0, 3], [3, 6], [6, 7]]
    assert current(path, 7, 3, "fp1") is None  # the parts are missing
    for part in parts:
        part.write_bytes(b"")
    assert current(path, 7, 3, "fp1") == parts
    assert current(path, 7, 3, "fp2") is None  # another table's shards
    assert current(path, 7, 2, "fp1") is None  # another shard size
    assert current(path, 8, 3, "fp1") is None
    path.write_text("{not json", encoding="utf-8")
    assert current(path, 7, 3, "fp1") is None

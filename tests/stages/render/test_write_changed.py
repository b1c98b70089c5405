"""Render writes a file only where its text changed (papers added to a build rewrite only the
text shards whose papers changed); an unchanged file gets a new time, for Make. A shard whose
raw bytes an earlier build deflated is reused, unless its file was edited since."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from pipeline.stages.render import mapfiles, write_changed
from pipeline.stages.render.mapfiles import read_shard


def test_an_unchanged_file_is_kept_and_its_time_renewed(tmp_path):
    path = tmp_path / "text-000.js"
    write_changed(path, "shard(0);\n")
    os.utime(path, (1_000_000, 1_000_000))
    inode = path.stat().st_ino
    write_changed(path, "shard(0);\n")
    assert path.read_text(encoding="utf-8") == "shard(0);\n"
    assert path.stat().st_ino == inode  # not replaced
    assert path.stat().st_mtime > 1_000_000
    write_changed(path, "shard(1);\n")  # same size, other text
    assert path.read_text(encoding="utf-8") == "shard(1);\n"
    assert path.stat().st_ino != inode  # written anew, atomically


def _shards(abstracts: list[str], folder, monkeypatch) -> tuple[dict[str, str], int]:
    """shard_files of one-paper topics with `abstracts`, reusing what `folder` keeps; the files
    written there, and how many shards were deflated anew."""
    deflated = []
    script = mapfiles._script
    monkeypatch.setattr(mapfiles, "_script", lambda n, raw: deflated.append(n) or script(n, raw))
    frame = pd.DataFrame({"title": [f"t{i}" for i in range(len(abstracts))], "abstract": abstracts})
    n = len(abstracts)
    files, tokens = mapfiles.shard_files(
        frame,
        [None] * n,
        np.arange(n),
        np.zeros((n, 1), int),
        np.ones((n, 1)),
        mapfiles.read_kept(folder),
    )
    for name, text in files.items():
        write_changed(folder / name, text)
    assert [read_shard(files[mapfiles.shard_path(i)])["token"] for i in range(n)] == tokens
    return files, len(deflated)


def test_unchanged_shards_are_reused_not_deflated_again(tmp_path, monkeypatch):
    first, deflated = _shards(["a", "b", "c"], tmp_path, monkeypatch)
    assert deflated == 3
    again, deflated = _shards(["a", "b", "c"], tmp_path, monkeypatch)
    assert deflated == 0 and again == first
    changed, deflated = _shards(["a", "B", "c"], tmp_path, monkeypatch)
    assert deflated == 1 and read_shard(changed[mapfiles.shard_path(1)])["abstract"] == ["B"]
    assert {k: v for k, v in changed.items() if "001" not in k and "json" not in k} == {
        k: v for k, v in first.items() if "001" not in k and "json" not in k
    }


def test_a_shard_edited_or_half_written_is_deflated_again(tmp_path, monkeypatch):
    first, _ = _shards(["a", "b"], tmp_path, monkeypatch)
    (tmp_path / mapfiles.shard_path(0)).write_text("topicMapShard(0,", encoding="ascii")
    again, deflated = _shards(["a", "b"], tmp_path, monkeypatch)
    assert deflated == 1 and again == first
    (tmp_path / mapfiles.SHARD_MEMO).write_text("not json", encoding="utf-8")
    again, deflated = _shards(["a", "b"], tmp_path, monkeypatch)
    assert deflated == 2 and again == first

"""Render writes a file only where its text changed (papers added to a build rewrite only the
text shards whose papers changed); an unchanged file gets a new time, for Make."""

from __future__ import annotations

import os

from pipeline.stages.render import write_changed


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

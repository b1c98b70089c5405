"""The command line: one-line errors with the right exit codes, Make variables and stamps, the
`topicmap` console script and its overrides. Most tests call the CLI's `main` in this process
(`run_main`); a few run it as its own process, as Make and a user do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pipeline import schemas, tables
from pipeline.commands import COMMANDS, command_stamp
from pipeline.config import ClusterConfig, load_config
from tests.support import tables as make
from tests.support.runs import run_cli, run_main, write_config

STAMPED = [name for name, command in COMMANDS.items() if command.sections]

OLD = 1_000_000_000  # an mtime (2001) no rewrite can produce


def _single_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_misspelled_key_exits_2_with_one_line(tmp_path):
    config = write_config(
        tmp_path / "bad.yaml", ["x.txt"], tmp_path / "out", "cluster:\n  min_cluster_sise: 5"
    )
    result = run_cli("stamps", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 2
    line = _single_error_line(result.stderr)
    assert str(config) in line
    assert "cluster.min_cluster_sise" in line
    assert not (tmp_path / "out").exists()


def test_debug_shows_the_traceback(tmp_path):
    config = write_config(tmp_path / "bad.yaml", ["x.txt"], tmp_path / "out", "colour: red")
    result = run_cli("--debug", "stamps", "--config", str(config), cwd=tmp_path)
    assert result.returncode != 0
    assert "Traceback (most recent call last)" in result.stderr
    assert "ConfigError" in result.stderr
    assert "unknown key 'colour'" in result.stderr


@pytest.mark.parametrize(
    ("content", "expected_rc", "expected"),
    [
        pytest.param(None, 1, "{path}: input file not found", id="missing-input"),
        pytest.param(
            "A paper about graphs and sparse codes, with no venue line above it.\n",
            1,
            "{path}:1: no venue header",
            id="no-venue-header",
        ),
        pytest.param("ICML 2025 Papers\n", 1, "{path}: has a header", id="header-only"),
    ],
)
def test_ingest_input_errors_are_one_line(tmp_path, content, expected_rc, expected):
    path = tmp_path / "papers.txt"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    config = write_config(tmp_path / "c.yaml", [str(path)], tmp_path / "out")
    out = tmp_path / "out"
    result = run_main("ingest", "--config", str(config), cwd=tmp_path)  # default paths: out/
    assert result.returncode == expected_rc
    line = _single_error_line(result.stderr)
    assert line.startswith("error: " + expected.format(path=path))
    assert not (out / "documents.parquet").exists()


def test_an_output_that_cannot_be_written_is_one_line(tmp_path):
    path = tmp_path / "papers.txt"
    path.write_text("ICML 2025 Papers\nA paper about sparse graph codes.\n", encoding="utf-8")
    config = write_config(tmp_path / "c.yaml", [str(path)], tmp_path / "out")
    blocked = tmp_path / "outputs"  # a file where the output folder should be (root or not)
    blocked.write_text("not a folder", encoding="utf-8")
    result = run_main(
        "ingest",
        "--config",
        str(config),
        "--documents",
        str(blocked / "documents.parquet"),
        "--rejected",
        str(blocked / "rejected.parquet"),
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]  # after ingest's own count lines
    assert line == f"error: {blocked}: a file stands where a folder is needed"
    assert blocked.read_text(encoding="utf-8") == "not a folder"


def test_makevars_writes_variables_and_stamps(tmp_path):
    out = tmp_path / "out"
    inputs = [str(tmp_path / "a.csv"), str(tmp_path / "raw/*.txt"), str(tmp_path / "b.jsonl")]
    config = write_config(tmp_path / "c.yaml", inputs, Path(f"{out}/"))
    mk = tmp_path / "build" / "c.mk"
    result = run_main("makevars", "--config", str(config), "--out", str(mk), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert mk.read_text(encoding="utf-8").splitlines() == [
        f"OUT := {out}",
        f"INPUT_FILES := {inputs[0]} {inputs[2]}",
        f"INPUT_GLOBS := {inputs[1]}",
        f"EMBED_MODES := {load_config(config).embed.cache_dir}/modes.json",
        "ENGINE := local",
    ]
    loaded = load_config(config)
    params = out / ".params"
    assert sorted(p.name for p in params.iterdir()) == sorted(f"{s}.json" for s in STAMPED)
    for name in STAMPED:
        expected = command_stamp(loaded, COMMANDS[name])
        assert (params / f"{name}.json").read_text(encoding="utf-8") == expected


def test_stamps_rewrite_only_what_changed(tmp_path):
    out = tmp_path / "out"
    config = write_config(tmp_path / "c.yaml", ["x.txt"], out, "render:\n  title: First")
    assert run_main("stamps", "--config", str(config), cwd=tmp_path).returncode == 0
    stamps = {stage: out / ".params" / f"{stage}.json" for stage in STAMPED}
    for path in stamps.values():
        os.utime(path, (OLD, OLD))

    assert run_main("stamps", "--config", str(config), cwd=tmp_path).returncode == 0
    assert {s: p.stat().st_mtime for s, p in stamps.items()} == dict.fromkeys(STAMPED, OLD)

    write_config(config, ["x.txt"], out, "render:\n  title: Second")
    assert run_main("stamps", "--config", str(config), cwd=tmp_path).returncode == 0
    rewritten = {s for s, p in stamps.items() if p.stat().st_mtime != OLD}
    assert rewritten == {"render"}
    assert '"title": "Second"' in stamps["render"].read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("stage", "outputs"),
    [
        ("label", ["--topics", "topics.parquet", "--themes", "themes.parquet"]),
        ("metrics", ["--metrics", "metrics.json"]),
        ("compare", ["--venue-topics", "venue.parquet"]),
    ],
)
def test_stage_refuses_tables_from_different_builds(tmp_path, stage, outputs):
    """A stage reading documents from one build and clusters from another: one line, exit 1."""
    documents = make.documents(["An abstract long enough to count."], sources="a.txt:3")
    old, new = tmp_path / "old.parquet", tmp_path / "documents.parquet"
    tables.write_table(documents, old, schemas.DOCUMENTS, tables.make_lineage("old", {}))
    tables.write_table(documents, new, schemas.DOCUMENTS, tables.make_lineage("new", {}))
    clusters = tmp_path / "clusters.parquet"
    frame = make.clusters(["p1"], [0])
    lineage = tables.stage_lineage(ClusterConfig(), documents=old)
    tables.write_table(frame, clusters, schemas.CLUSTERS, lineage)
    config = write_config(tmp_path / "c.yaml", ["x.txt"], tmp_path)
    embeddings_lineage = tables.stage_lineage("embed", documents=new)
    vectors = np.ones((1, 384), dtype=np.float32) / np.sqrt(384)
    tables.write_embeddings(["p1"], vectors, tmp_path / "embeddings.parquet", embeddings_lineage)
    extra = []
    if stage != "label":  # they also read topics and themes; any table will do, checked first
        extra = ["--topics", str(clusters), "--themes", str(clusters)]
    written = [o if o.startswith("--") else str(tmp_path / o) for o in outputs]
    result = run_main(
        stage,
        "--config",
        str(config),
        "--documents",
        str(new),
        "--clusters",
        str(clusters),
        *extra,
        *written,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    line = _single_error_line(result.stderr.replace("\r", ""))
    assert line == f"error: {clusters} was built from a different {new}: rerun make"
    for name in outputs[1::2]:
        assert not (tmp_path / name).exists()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(None, "config file not found", id="missing"),
        pytest.param("inputs: [a.txt\n", "not valid YAML", id="broken"),
    ],
)
def test_config_file_missing_or_broken_exits_2(tmp_path, content, expected):
    config = tmp_path / "c.yaml"
    if content is not None:
        config.write_text(content, encoding="utf-8")
    for args in (["build"], ["stage", "cluster"], ["cluster"]):
        result = run_main(*args, "--config", str(config), cwd=tmp_path)
        assert result.returncode == 2, (args, result.stderr)
        line = _single_error_line(result.stderr)
        assert line.startswith(f"error: {config}: {expected}")


def test_console_script_runs_a_stage_with_an_override(tmp_path):
    """The installed `topicmap` script: `stage ingest` with `--set` and default paths."""
    script = Path(sys.executable).parent / "topicmap"
    assert script.exists(), "pip install -e . installs the topicmap console script"
    papers = tmp_path / "papers.txt"
    papers.write_text(
        "A paper about sparse graph codes and how to decode them.\n\n"
        "Another paper about diffusion models for molecule generation.\n",
        encoding="utf-8",
    )
    config = write_config(tmp_path / "c.yaml", [str(papers)], tmp_path / "out")
    override = ["--set", "ingest.venue=NeurIPS 2024"]
    result = subprocess.run(
        [str(script), "stage", "ingest", "--config", str(config), *override],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    documents = tables.read_table(tmp_path / "out" / "documents.parquet", schemas.DOCUMENTS)
    assert documents["venue"].tolist() == ["NeurIPS", "NeurIPS"]
    assert documents["year"].tolist() == [2024, 2024]
    helped = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0
    for name in ["build", "stage", *COMMANDS]:
        assert name in helped.stdout

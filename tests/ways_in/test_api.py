"""The Python API for notebooks: the README's example runs as written, a build from a DataFrame,
`topicmap build` gives what `make all` gives, and importing the package changes nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import pipeline
from pipeline import schemas, tables
from pipeline.encoder import OFFLINE_ENVIRONMENT
from pipeline.errors import PipelineError
from tests.support.paths import ROOT
from tests.support.runs import write_config


def readme_example() -> str:
    """The Python code blocks of the README's "Python API" section, joined."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Python API", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, "the README's Python API section has no example"
    return "\n".join(blocks)


@pytest.mark.slow
def test_readme_example_runs_as_written(tmp_path, monkeypatch):
    """Run in a folder that looks like the project (its configs and data), so that the example's
    outputs land in tmp_path."""
    for name in ("configs", "data"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    ours = [*OFFLINE_ENVIRONMENT, "NUMBA_CACHE_DIR"]  # (torch sets some of its own on import)
    for name in ours:
        monkeypatch.delenv(name, raising=False)
    namespace: dict = {}
    exec(compile(readme_example(), "README.md", "exec"), namespace)  # noqa: S102
    assert not [name for name in ours if name in os.environ]  # none left behind
    result = namespace["result"]
    assert result.report.exists() and result.map.exists()
    assert result.topics["label"].str.len().gt(0).all()
    papers = result.papers
    assert len(papers) == 76 and {"topic_label", "theme_label", "x", "y"} <= set(papers.columns)
    mine = namespace["mine"]  # the same papers, from a DataFrame: the same topics
    pd.testing.assert_frame_equal(mine.topics, result.topics)
    assert mine.documents["doc_id"].tolist() == result.documents["doc_id"].tolist()


@pytest.mark.slow
def test_topicmap_build_gives_what_make_all_gives(bundled_build: Path, tmp_path: Path):
    out = tmp_path / "out"
    config = write_config(tmp_path / "c.yaml", [str(ROOT / "data/raw/*.txt")], out)
    script = Path(sys.executable).parent / "topicmap"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    result = subprocess.run(
        [str(script), "build", "--config", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("documents", "clusters", "topics", "themes", "venue_topics"):
        schema = getattr(schemas, name.upper())
        file = f"{name}.parquet"
        pd.testing.assert_frame_equal(
            tables.read_table(out / file, schema), tables.read_table(bundled_build / file, schema)
        )
    for file in ("metrics.json", "index.html", "map.html"):
        # the report says when its topics were fitted: all else is the same
        ours, theirs = (
            (folder / file).read_text(encoding="utf-8") for folder in (out, bundled_build)
        )
        fitted = re.compile(r'<p class="note" id="fit-note">.*?</p>', flags=re.S)
        assert fitted.sub("", ours) == fitted.sub("", theirs), file
    assert (out / "bertopic" / "topics.json").exists()


def test_importing_the_package_changes_no_environment():
    script = (
        "import os; before = dict(os.environ); import pipeline; pipeline.build; "
        "import pipeline.cli, pipeline.encoder; assert dict(os.environ) == before, "
        "set(os.environ.items()) ^ set(before.items())"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["PYTHONPATH"] = str(ROOT)
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)


def test_a_build_needs_a_config_or_papers(tmp_path):
    with pytest.raises(PipelineError, match="needs a config, or papers"):
        pipeline.build()
    with pytest.raises(PipelineError, match="must be a pandas DataFrame"):
        pipeline.build(papers=[{"abstract": "x"}], output_dir=tmp_path)
    with pytest.raises(PipelineError, match="no build here"):
        pipeline.open_build(tmp_path)


@pytest.mark.slow
def test_open_build_reads_every_table(bundled_build: Path):
    built = pipeline.open_build(bundled_build)
    assert len(built.documents) == len(built.clusters) == len(built.embeddings) == 76
    assert set(built.themes["theme"]) == set(built.topics["theme"])
    assert built.metrics["papers"] == 76 and built.rejected.empty
    assert set(built.venue_topics["venue"]) == {"ICML", "ICLR"}

"""The real stack end to end: the 76 bundled abstracts given as four other files (other names,
other cuts, other row order: ../shared/seeds) give every paper the same vector, topic, label,
theme and map position as the bundled build, each build with an empty cache of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from tests.support.paths import SEEDS
from tests.support.runs import run_make, write_config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not SEEDS.exists(), reason="../shared/seeds is not present"),
]


def _papers(folder: Path) -> pd.DataFrame:
    """Per doc_id: vector, topic, position, label and theme."""
    clusters = tables.read_table(folder / "clusters.parquet", schemas.CLUSTERS)
    topics = tables.read_table(folder / "topics.parquet", schemas.TOPICS)
    doc_ids, vectors = tables.read_embeddings(folder / "embeddings.parquet")
    papers = clusters.merge(topics[["topic", "label", "theme"]], on="topic", how="left")
    papers["vector"] = list(vectors[[doc_ids.index(d) for d in papers["doc_id"]]])
    return papers.sort_values("doc_id").reset_index(drop=True)


@pytest.fixture(scope="module")
def seeds_build(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("seeds")
    config = write_config(
        work / "seeds.yaml",
        [str(SEEDS / "*.txt")],
        work / "out",
        f"embed:\n  cache_dir: {work / 'cache'}\n  progress_bar: false",
    )
    result = run_make("all", f"CONFIG={config}")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "embedded 76 new papers (0 from the cache)" in result.stderr
    return work / "out"


def test_other_files_and_row_order_give_the_same_map(bundled_build: Path, seeds_build: Path):
    bundled, seeds = _papers(bundled_build), _papers(seeds_build)
    documents = tables.read_table(seeds_build / "documents.parquet", schemas.DOCUMENTS)
    assert set(documents["source"].map(lambda s: Path(s).parent)) == {SEEDS}
    assert documents["doc_id"].tolist() != sorted(documents["doc_id"])  # not in doc_id order
    assert bundled["doc_id"].tolist() == seeds["doc_id"].tolist() and len(bundled) == 76
    assert np.array_equal(np.stack(bundled.pop("vector")), np.stack(seeds.pop("vector")))
    pd.testing.assert_frame_equal(bundled, seeds)
    for name in ("topics.parquet", "themes.parquet"):
        schema = schemas.TOPICS if name == "topics.parquet" else schemas.THEMES
        pd.testing.assert_frame_equal(
            tables.read_table(bundled_build / name, schema),
            tables.read_table(seeds_build / name, schema),
        )
    shards = sorted(p.name for p in (bundled_build / "map-data").iterdir())
    assert shards == sorted(p.name for p in (seeds_build / "map-data").iterdir())
    for name in shards:  # the papers' text on the map, shard for shard
        assert (bundled_build / "map-data" / name).read_bytes() == (
            seeds_build / "map-data" / name
        ).read_bytes()

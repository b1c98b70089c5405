"""The real stack end to end: a build on an embeddings cache that other corpora filled (some of
this corpus's papers embedded among them) gives every paper the same vector, topic and map
position as a cold build (the bundled build: an empty cache of its own)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import encoder as encoders
from pipeline import schemas, tables
from pipeline.config import EmbedConfig
from pipeline.stages.embed import make_embeddings
from pipeline.text import embedding_texts
from tests.support.paths import CORPORA, ROOT
from tests.support.runs import run_make, write_config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CORPORA.exists(), reason="../shared/corpora is not present"),
]
SHARED = 30  # bundled papers embedded first among other corpora's


def _fill(cache: Path, bundled_texts: list[str]) -> None:
    """The cache after a build of 90 ICLR 2023 papers with 30 of the bundled ones mixed in."""
    others = pd.read_parquet(CORPORA / "iclr2023.parquet").head(90)
    texts = embedding_texts(others.assign(abstract=others["abstract"].astype(str)))
    mixed = [t for pair in zip(texts, bundled_texts[:SHARED] + texts, strict=False) for t in pair]
    config = EmbedConfig(progress_bar=False, cache_dir=str(cache))
    precision = encoders.resolve_precision(config)
    _, n_new = make_embeddings(
        mixed, lambda: encoders.load_encoder(config), config, precision, cache
    )
    assert n_new == 90 + SHARED


def _papers(folder: Path) -> pd.DataFrame:
    clusters = tables.read_table(folder / "clusters.parquet", schemas.CLUSTERS)
    doc_ids, vectors = tables.read_embeddings(folder / "embeddings.parquet")
    clusters["vector"] = list(vectors[[doc_ids.index(d) for d in clusters["doc_id"]]])
    return clusters.sort_values("doc_id").reset_index(drop=True)


def test_a_cache_filled_by_other_corpora_gives_the_cold_builds_map(bundled_build, tmp_path):
    documents = tables.read_table(bundled_build / "documents.parquet", schemas.DOCUMENTS)
    _fill(tmp_path / "cache", embedding_texts(documents)[::-1])
    config = write_config(
        tmp_path / "warm.yaml",
        [str(ROOT / "data/raw/*.txt")],
        tmp_path / "out",
        f"embed:\n  cache_dir: {tmp_path / 'cache'}\n  progress_bar: false",
    )
    result = run_make("all", f"CONFIG={config}")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"embedded {76 - SHARED} new papers ({SHARED} from the cache)" in result.stderr
    cold, warm = _papers(bundled_build), _papers(tmp_path / "out")
    assert np.array_equal(np.stack(cold.pop("vector")), np.stack(warm.pop("vector")))
    pd.testing.assert_frame_equal(cold, warm)
    for name, schema in (("topics.parquet", schemas.TOPICS), ("themes.parquet", schemas.THEMES)):
        pd.testing.assert_frame_equal(
            tables.read_table(bundled_build / name, schema),
            tables.read_table(tmp_path / "out" / name, schema),
        )

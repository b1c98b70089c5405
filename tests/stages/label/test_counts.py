"""The papers' term counts by topic (pipeline.stages.label.counts): per paper, summed by group,
the same whatever the chunks, and on a real local Ray instance the same as here."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from pipeline.config import EngineConfig
from pipeline.stages.label.counts import count_chunk, count_terms, summed
from pipeline.text import term_analyzer
from tests.support.paths import ROOT

TEXTS = [
    "Graph neural networks for molecules. Message passing on graphs",
    "Diffusion models for images; score matching and denoising",
    "Graph neural networks: over-smoothing in deep message passing",
    "Offline reinforcement learning with conservative value functions",
    "Score matching for diffusion models. Denoising diffusion",
    "the of and",  # no term at all
    "Reinforcement learning from human feedback. Offline reinforcement learning",
]
GROUPS = np.array([3, 1, 3, -1, 1, 3, -1])


def _same(a, b) -> None:
    assert a.groups.tolist() == b.groups.tolist()
    assert a.vocabulary.tolist() == b.vocabulary.tolist()
    assert (a.uses != b.uses).nnz == 0 and (a.papers != b.papers).nnz == 0
    assert a.sizes.tolist() == b.sizes.tolist()


def test_a_groups_counts_are_its_papers_counts_summed():
    counts = count_chunk(TEXTS, GROUPS, 3)
    vectorizer = CountVectorizer(analyzer=term_analyzer(3))
    per_paper = vectorizer.fit_transform(TEXTS).toarray()
    assert counts.vocabulary.tolist() == vectorizer.get_feature_names_out().tolist()
    assert counts.groups.tolist() == [-1, 1, 3] and counts.sizes.tolist() == [2, 2, 3]
    for row, group in enumerate(counts.groups):
        mine = per_paper[GROUPS == group]
        np.testing.assert_array_equal(counts.uses.toarray()[row], mine.sum(axis=0))
        np.testing.assert_array_equal(counts.papers.toarray()[row], (mine > 0).sum(axis=0))
    assert counts.papers_using(-1)["offline reinforcement learning"] == 2
    assert counts.uses.toarray()[0, counts.vocabulary.tolist().index("reinforcement learning")] == 3


def test_chunks_sum_to_the_counts_of_the_whole():
    whole = count_chunk(TEXTS, GROUPS, 3)
    for chunk in (1, 2, 3, 100):
        _same(count_terms(TEXTS, GROUPS, 3, EngineConfig(shard_papers=chunk)), whole)
    _same(
        summed([count_chunk(TEXTS[4:], GROUPS[4:], 3), count_chunk(TEXTS[:4], GROUPS[:4], 3)]),
        whole,
    )  # fmt: skip  (the order of the chunks does not matter)


def test_groups_merge_into_themes():
    counts = count_chunk(TEXTS, GROUPS, 3)
    themes = counts.merged({1: 0, 3: 0})
    assert themes.groups.tolist() == [-1, 0] and themes.sizes.tolist() == [2, 5]
    np.testing.assert_array_equal(themes.uses.toarray()[1], counts.uses.toarray()[1:].sum(axis=0))


def test_no_terms_and_no_papers():
    nothing = count_chunk(["the of", "and"], np.array([0, 1]), 3)
    assert nothing.vocabulary.tolist() == [] and nothing.sizes.tolist() == [1, 1]
    assert count_terms([], np.zeros(0, np.int64), 3, EngineConfig()).groups.tolist() == []


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.parametrize("workers", [1, 2])
def test_ray_tasks_count_as_the_local_engine(monkeypatch, workers):
    """On a real local Ray instance, 1 or 2 workers: the bundled papers' counts, identical."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "data/raw").glob("*.txt"))]
    texts = [t for text in texts for t in text.split("\n\n") if t.strip()]
    groups = np.arange(len(texts)) % 5 - 1
    engine = EngineConfig(kind="ray", concurrency=workers, shard_papers=16)
    _same(
        count_terms(texts, groups, 3, engine),
        count_terms(texts, groups, 3, EngineConfig(shard_papers=16)),
    )

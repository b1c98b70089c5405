"""Nearest neighbours by cosine similarity: exact, and pynndescent's above a size."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.neighbours import nearest_neighbours, similar_papers, unit_rows


def test_nearest_neighbours_are_the_most_cosine_similar_others():
    vectors = np.array([[1, 0], [0.9, 0.1], [0, 1], [-1, 0], [0.6, 0.8]], dtype=np.float32)
    indices, sims = nearest_neighbours(vectors, k=2)
    assert indices.tolist() == [[1, 4], [0, 4], [4, 1], [2, 4], [2, 1]]
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.allclose(sims[0], [unit[0] @ unit[1], unit[0] @ unit[4]])


def test_nearest_neighbour_ties_go_to_the_lower_index():
    vectors = np.array([[1, 0]] * 4 + [[0, 1]], dtype=np.float32)  # four identical papers
    indices, sims = nearest_neighbours(vectors, k=2)
    assert indices.tolist() == [[1, 2], [0, 2], [0, 1], [0, 1], [0, 1]]
    assert np.allclose(sims[:4], 1)


def test_nearest_neighbours_do_not_depend_on_the_block_size():
    vectors = np.random.default_rng(1).normal(size=(300, 16)).astype(np.float32)
    whole, whole_sims = nearest_neighbours(vectors, 5, block_rows=300)
    for block_rows in (1, 7, 64):
        indices, sims = nearest_neighbours(vectors, 5, block_rows=block_rows)
        assert (indices == whole).all()
        assert np.allclose(sims, whole_sims, atol=1e-6)
    assert whole.shape == (300, 5)
    assert not (whole == np.arange(300)[:, None]).any()


def test_unit_rows_are_used_as_they_are_and_others_scaled():
    rows = np.random.default_rng(2).normal(size=(50, 8)).astype(np.float32)
    scaled = unit_rows(rows)
    assert scaled is not rows and np.allclose(np.linalg.norm(scaled, axis=1), 1)
    assert unit_rows(scaled) is scaled  # no copy of vectors that are unit already
    assert unit_rows(np.zeros((2, 3), np.float32)).tolist() == [[0] * 3] * 2


@pytest.mark.parametrize(("n", "k"), [(0, 0), (1, 0), (2, 1), (6, 5)])
def test_tiny_corpora_have_fewer_neighbours(n, k):
    indices, sims = nearest_neighbours(np.ones((n, 3), dtype=np.float32), 5)
    assert indices.shape == sims.shape == (n, k)


def _blobs(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(20, 32))
    return (centres[rng.integers(0, 20, n)] + 0.3 * rng.normal(size=(n, 32))).astype(np.float32)


def test_similar_papers_search_exactly_up_to_the_threshold():
    vectors = _blobs(400)
    exact = nearest_neighbours(vectors, 5)
    found = similar_papers(vectors, 5, exact_max=400)
    assert (found[0] == exact[0]).all() and np.allclose(found[1], exact[1])


@pytest.mark.slow  # pynndescent's numba code compiles for about 40 s on 2 cores
def test_similar_papers_above_the_threshold_are_approximate_seeded_and_close():
    vectors = _blobs(2000)
    exact, exact_sims = nearest_neighbours(vectors, 5)
    indices, sims = similar_papers(vectors, 5, exact_max=1000, random_state=3)
    again = similar_papers(vectors, 5, exact_max=1000, random_state=3)
    assert (indices == again[0]).all()  # the same seed, the same neighbours
    assert indices.shape == sims.shape == (2000, 5)
    assert not (indices == np.arange(2000)[:, None]).any()  # never your own neighbour
    assert (np.diff(sims, axis=1) <= 1e-6).all()  # best first
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.allclose(sims, np.einsum("nd,nkd->nk", unit, unit[indices]), atol=1e-5)
    recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(indices, exact, strict=True)])
    assert recall > 0.9, recall
    assert (sims[:, 0] >= exact_sims[:, 0] - 0.05).mean() > 0.95

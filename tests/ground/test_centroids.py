"""Topic centres (pipeline/centroids.py): the weighted sums equal np.add.at's, bit for bit, so
that a faster sum moves no saved model's centre; an all-zero-weight topic takes its plain mean."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.centroids import _row_sums, weighted_centroids


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_are_np_add_at_sums_bit_for_bit(dtype):
    rng = np.random.default_rng(7)
    values = rng.normal(size=(3000, 24)).astype(dtype)
    rows = rng.integers(0, 40, size=3000)
    expected = np.zeros((41, 24))
    np.add.at(expected, rows, values)
    assert np.array_equal(_row_sums(rows, values, 41), expected)  # row 40: no paper, zeros


def test_weighted_centres_are_unit_and_a_weightless_topic_takes_its_plain_mean():
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(60, 8)).astype(np.float32)
    topics = np.repeat([0, 2, -1], 20)
    weights = np.where(topics == 2, 0.0, rng.random(60))
    ids, centres = weighted_centroids(vectors, topics, weights)
    assert ids.tolist() == [0, 2]
    assert np.allclose(np.linalg.norm(centres, axis=1), 1)
    plain = vectors[20:40].mean(axis=0)
    assert np.allclose(centres[1], plain / np.linalg.norm(plain), atol=1e-6)
    firm = (vectors[:20] * weights[:20, None]).sum(axis=0)
    assert np.allclose(centres[0], firm / np.linalg.norm(firm), atol=1e-6)

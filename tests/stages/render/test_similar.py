"""The map's similar papers kept between builds (render/similar.py): papers added, removed or
changed give what a search of all papers gives, searching only what changed; the kept table
round-trips and an unreadable one is searched afresh."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from pipeline.errors import PipelineError
from pipeline.neighbours import similar_papers
from pipeline.stages.render import similar

K = 5


def _papers(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 24)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [f"p{i:04d}" for i in range(n)], vectors


def _placed(ids: list[str], added: tuple[str, ...] = ()) -> pd.DataFrame:
    """The clusters table's doc_id and placed: every paper fitted but those `added`."""
    return pd.DataFrame({"doc_id": ids, "placed": ["added" if i in added else "fit" for i in ids]})


def _sorted(ids: list[str], vectors: np.ndarray) -> tuple[list[str], np.ndarray]:
    order = np.argsort(np.asarray(ids, dtype=object), kind="stable")
    return [ids[i] for i in order], vectors[order]


def _as_full_search(kept: similar.Kept, vectors: np.ndarray) -> None:
    neighbours, values = similar_papers(vectors, K)
    np.testing.assert_array_equal(kept.neighbours, neighbours)
    np.testing.assert_allclose(kept.similarities, values, atol=1e-6)


def test_nothing_kept_searches_all():
    ids, vectors = _papers(120)
    kept = similar.update(ids, vectors, None, K)
    _as_full_search(kept, vectors)
    assert kept.prints.dtype == np.uint64 and len(set(kept.prints)) == 120


def test_papers_added_to_a_kept_build_give_what_a_full_search_gives(caplog):
    ids, vectors = _papers(400)
    before = similar.update(ids[:380], vectors[:380], None, K)
    extra_ids = [f"q{i}" for i in range(12)] + ["p0000a"]  # sorts among the earlier papers
    extra = _papers(13, seed=1)[1] * 0.5 + vectors[:13] * 0.5  # near earlier papers
    extra /= np.linalg.norm(extra, axis=1, keepdims=True)
    all_ids, all_vectors = _sorted(ids[:380] + extra_ids, np.vstack([vectors[:380], extra]))
    with caplog.at_level(logging.INFO, logger="pipeline.render"):
        after = similar.update(all_ids, all_vectors, before, K)
    _as_full_search(after, all_vectors)
    assert "kept for" in caplog.text and "(13 searched afresh)" in caplog.text
    # the same papers again: every list kept as it was, nothing searched
    assert similar.update(all_ids, all_vectors, after, K) is after


def test_papers_removed_or_changed_are_searched_afresh_with_those_next_to_them():
    ids, vectors = _papers(300)
    before = similar.update(ids, vectors, None, K)
    changed = vectors.copy()
    changed[7] = -changed[7]  # the same doc_id, another vector
    keep = np.array([i for i in range(300) if i not in (3, 150)])  # two papers removed
    after = similar.update([ids[i] for i in keep], changed[keep], before, K)
    _as_full_search(after, changed[keep])
    assert after.prints[list(keep).index(7)] != before.prints[7]


def test_too_much_changed_searches_all(caplog):
    ids, vectors = _papers(100)
    before = similar.update(ids[:50], vectors[:50], None, K)
    with caplog.at_level(logging.INFO, logger="pipeline.render"):
        after = similar.update(ids, vectors, before, K)
    assert "searched (50 of 100 papers new" in caplog.text
    _as_full_search(after, vectors)


def test_the_kept_table_round_trips_and_an_unreadable_one_is_searched_afresh(tmp_path, caplog):
    ids, vectors = _papers(60)
    kept = similar.update(ids, vectors, None, K)
    similar.write(tmp_path, kept)
    back = similar.read(tmp_path)
    assert back is not None and back.doc_ids == ids
    np.testing.assert_array_equal(back.prints, kept.prints)
    np.testing.assert_array_equal(back.neighbours, kept.neighbours)
    np.testing.assert_array_equal(back.similarities, kept.similarities)
    (tmp_path / similar.FOLDER / similar.FILE).write_bytes(b"not parquet")
    with caplog.at_level(logging.INFO, logger="pipeline.render"):
        assert similar.read(tmp_path) is None
    assert "not readable" in caplog.text
    assert similar.read(tmp_path / "elsewhere") is None


@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_builds(tmp_path, n):
    ids, vectors = _papers(n)
    got = similar.similar_for(tmp_path, ids[::-1], vectors[::-1], _placed(ids))
    assert got.doc_ids == ids
    assert got.neighbours.shape == (n, min(K, max(n - 1, 0)))


def test_the_kept_table_is_written_only_when_it_changes(tmp_path):
    ids, vectors = _papers(40)
    similar.similar_for(tmp_path, ids, vectors, _placed(ids))
    path = tmp_path / similar.FOLDER / similar.FILE
    written = path.stat().st_mtime_ns
    path.touch()
    touched = path.stat().st_mtime_ns
    assert similar.similar_for(tmp_path, ids[::-1], vectors[::-1], _placed(ids)).doc_ids == ids
    assert path.stat().st_mtime_ns == touched >= written
    more_ids, more = _papers(41)
    similar.similar_for(tmp_path, more_ids, more, _placed(more_ids))
    assert similar.read(tmp_path).doc_ids == more_ids


def test_papers_added_to_the_model_come_after_the_fitted_ones_which_keep_their_places(tmp_path):
    ids, vectors = _papers(60)
    fitted = ids[::2]  # the added papers' doc_ids fall between the fitted ones'
    before = similar.similar_for(tmp_path, fitted, vectors[::2], _placed(fitted))
    added = tuple(ids[1:7:2])
    now = [*fitted, *added]
    rows = [ids.index(i) for i in now]
    after = similar.similar_for(tmp_path, now[::-1], vectors[rows][::-1], _placed(now, added))
    assert after.doc_ids == [*fitted, *added]  # the fitted papers first, each at its place
    assert (after.neighbours < len(now)).all()
    unchanged = (after.neighbours[: len(fitted)] < len(fitted)).all(axis=1)
    assert unchanged.sum() >= len(fitted) // 2  # most keep their list, row for row
    assert (after.neighbours[: len(fitted)][unchanged] == before.neighbours[unchanged]).all()
    refit = similar.similar_for(tmp_path, now, vectors[rows], _placed(now))  # all fitted now
    assert refit.doc_ids == sorted(now)
    expected = similar_papers(_sorted(now, vectors[rows])[1], K)
    assert np.array_equal(refit.neighbours, expected[0])


def test_a_paper_the_clusters_table_lacks_is_refused(tmp_path):
    ids, vectors = _papers(5)
    with pytest.raises(PipelineError, match="rerun make"):
        similar.similar_for(tmp_path, ids, vectors, _placed(ids[:4]))

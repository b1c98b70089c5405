"""Topic identity across a refit: new clusters matched to old topics by shared papers, and each
transition typed (survived, split, merged, new, retired)."""

from __future__ import annotations

import numpy as np

from pipeline.stages.cluster.identity import best_kept_share, kept_share, match_topics


def _papers(*pairs: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(old topic, new cluster, how many papers) -> per paper arrays."""
    old = np.concatenate([np.full(n, o) for o, _, n in pairs])
    new = np.concatenate([np.full(n, c) for _, c, n in pairs])
    return old, new


def test_the_same_topics_keep_their_numbers_whatever_the_fit_numbered_them():
    old, new = _papers((4, 0, 50), (7, 1, 30), (9, 2, 20), (4, 1, 3))
    found = match_topics(old, new, next_number=12)
    assert found.numbers == {0: 4, 1: 7, 2: 9}
    assert set(found.kind.values()) == {"survived"}
    assert found.counts() == {"survived": 3, "split": 0, "merged": 0, "retired": 0, "new": 0}


def test_a_split_topics_largest_child_keeps_its_number_and_the_other_is_new():
    old, new = _papers((0, 0, 60), (0, 1, 40), (1, 2, 50))
    found = match_topics(old, new, next_number=5)
    assert found.kind[0] == "split" and found.numbers[0] == 0
    assert found.numbers[1] == 5 and found.made[1] == "split" and found.parents[1] == [0]
    assert found.numbers[2] == 1


def test_a_split_without_a_majority_child_gives_every_part_a_new_number():
    old, new = _papers((0, 0, 40), (0, 1, 35), (0, 2, 25), (1, 3, 50))
    found = match_topics(old, new, next_number=2)
    assert found.kind[0] == "split"
    assert sorted(found.numbers[c] for c in (0, 1, 2)) == [2, 3, 4]
    assert found.successors[0] == [found.numbers[0], found.numbers[1], found.numbers[2]]


def test_a_merge_keeps_the_largest_old_topics_number():
    old, new = _papers((3, 0, 60), (8, 0, 40), (5, 1, 30))
    found = match_topics(old, new, next_number=10)
    assert found.numbers == {0: 3, 1: 5}
    assert found.kind[3] == "survived" and found.kind[8] == "merged"
    assert found.made[0] == "merged" and found.parents[0] == [3, 8]
    assert found.successors[8] == [3]


def test_two_old_topics_mostly_in_one_cluster_merge_into_the_larger_ones_number():
    old, new = _papers((3, 0, 30), (3, 1, 10), (8, 0, 25), (8, 2, 10), (5, 3, 40))
    found = match_topics(old, new, next_number=10)
    assert found.numbers[0] == 3 and found.made[0] == "merged" and found.parents[0] == [3, 8]
    assert found.kind[3] == "survived" and found.kind[8] == "merged"
    assert found.numbers[3] == 5 and {found.numbers[1], found.numbers[2]} == {10, 11}


def test_a_topic_whose_papers_scatter_is_retired_and_clusters_of_new_papers_are_new():
    old, new = _papers((0, 0, 50), (1, 1, 50), (2, 0, 5), (2, 1, 5), (2, 2, 5), (2, 3, 5))
    found = match_topics(old, new, next_number=3, clusters=[0, 1, 2, 3, 4])
    assert found.kind[2] == "retired"
    assert found.numbers[0] == 0 and found.numbers[1] == 1
    assert sorted(found.numbers[c] for c in (2, 3, 4)) == [3, 4, 5]  # 4: new papers only


def test_kept_share_is_measured_against_the_best_one_to_one_numbering():
    old, new = _papers((0, 0, 60), (0, 1, 40), (1, 2, 50))
    found = match_topics(old, new, next_number=5)
    renumbered = np.array([found.numbers[c] for c in new])
    assert kept_share(old, renumbered) == best_kept_share(old, new) == 110 / 150
    assert kept_share(old, np.full(len(old), -1)) == 0.0

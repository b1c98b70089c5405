"""The rules that tell a new area among the emergence pool from the existing topics' papers
(novelty.py), on small synthetic vectors: where a paper's nearest neighbours are, which groups
are parts of one area, and the settling of the pool among old and new topics' centres."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from pipeline.stages.cluster import emerge, novelty


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _blob(centre: np.ndarray, n: int, scale: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return _unit(centre + rng.normal(scale=scale, size=(n, len(centre))))


def test_papers_of_a_field_beside_a_topic_stand_apart_and_more_of_the_topic_do_not():
    rng = np.random.default_rng(0)
    topic = _unit(rng.normal(size=(1, 64)))[0]
    beside = _unit(topic + 0.6 * _unit(rng.normal(size=(1, 64)))[0][None])[0]
    assert 0.75 < float(topic @ beside) < 0.9  # a centre "near" the topic's
    fitted = _blob(topic, 300, 0.12, 1)
    duplicate = _blob(topic, 30, 0.12, 2)  # more papers of the topic's own field
    field = _blob(beside, 30, 0.05, 3)  # a tight field of its own next to it
    assert novelty.apart(field, fitted).all()
    assert not novelty.apart(duplicate, fitted).any()
    # with no fitted papers to compare with, every pool paper stands apart; alone, none
    assert novelty.apart(field, fitted[:0]).all()
    assert not novelty.apart(field[:1], fitted).any()


def test_groups_nearer_each_other_than_to_any_topic_are_joined_in_chains():
    topics = np.array([0, 0, 1, 1, 2, 3, -1])
    parts = _unit(np.array([[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.2, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    # 0-1 at cosine 0.8 and 1-2 at 0.73, each above both groups' nearest topic (0.7), 0-2 not;
    # 3 is nearer a topic (0.95) than to any group
    nearest = np.array([0.7, 0.7, 0.7, 0.95])
    linked = novelty.linked_groups(topics, parts, nearest)
    assert linked.tolist() == [0, 0, 0, 0, 0, 3, -1]
    # groups whose nearest topic is nearer than they are to each other stay apart
    assert novelty.linked_groups(topics, parts, np.full(4, 0.99)).tolist() == topics.tolist()


def test_settling_moves_papers_to_the_nearest_centre_among_old_and_new_topics():
    old = _unit(np.array([[1.0, 0.0, 0.0]]))
    pool = _unit(
        np.array(
            [
                [0.0, 1.0, 0.0],  # the new topic's
                [0.1, 1.0, 0.1],  # the new topic's
                [0.3, 1.0, 0.0],  # placed in the old topic by placing: nearer the new one
                [1.0, 0.2, 0.0],  # nearer the old topic: stays as placed (-1 here)
                [0.0, 0.0, 1.0],  # near no topic: none
            ]
        )
    )
    start = np.array([5, 5, -1, 5, -1], dtype=np.int32)
    assert novelty.settled(pool, start, old, 0.42, 2).tolist() == [5, 5, 5, -1, -1]
    # a new topic left smaller than the smallest size is dropped
    assert novelty.settled(pool, start, old, 0.42, 4).tolist() == [-1] * 5


def test_a_group_near_a_topics_centre_is_a_topic_when_its_papers_stand_apart(caplog):
    rng = np.random.default_rng(0)
    topic = _unit(rng.normal(size=(1, 64)))[0]
    beside = _unit(topic + 0.6 * _unit(rng.normal(size=(1, 64)))[0][None])[0]
    fitted = _blob(topic, 300, 0.12, 1)
    pool = np.vstack([_blob(beside, 30, 0.05, 3), _blob(topic, 30, 0.12, 2)])
    groups = np.repeat([0, 1], 30)
    existing = emerge.Existing(topic[None], fitted, 0.42)
    alone = novelty.apart(pool, fitted)
    with caplog.at_level(logging.INFO, "pipeline.cluster"):
        kept = emerge.judged(pool, groups, np.ones(60), existing, alone, 25)
    assert kept == [0]
    assert "100% of its papers apart: a new topic" in caplog.text
    assert "of its papers apart: most papers nearer to existing topics' papers" in caplog.text
    assert emerge.judged(pool, groups, np.ones(60), existing, alone, 31) == []  # too small


def test_a_pool_with_too_few_papers_apart_is_not_clustered(monkeypatch, caplog):
    from pipeline.config import ClusterConfig

    rng = np.random.default_rng(0)
    topic = _unit(rng.normal(size=(1, 64)))[0]
    fitted = _blob(topic, 300, 0.12, 1)
    duplicate = _blob(topic, 40, 0.12, 2)  # more papers of the topic's own field
    existing = emerge.Existing(topic[None], fitted, 0.42)
    assert 2 * novelty.apart(duplicate, fitted).sum() <= 25  # the precondition of the shortcut

    def no_fit(*_):
        raise AssertionError("the pool was clustered")

    monkeypatch.setattr(emerge, "fit_topics", no_fit)
    with caplog.at_level(logging.INFO, "pipeline.cluster"):
        found = emerge.find_topics(duplicate, np.arange(40), ClusterConfig(), existing, 1, 25)
    assert found.numbers == [] and (found.topics == -1).all()
    assert "stand apart from the existing topics' papers, too few for a topic of 25" in caplog.text
    # papers of a field of their own are clustered (and the fit reached)
    field = _blob(_unit(topic + 0.6 * _unit(rng.normal(size=(1, 64)))[0][None])[0], 40, 0.05, 3)
    with pytest.raises(AssertionError, match="clustered"):
        emerge.find_topics(field, np.arange(40), ClusterConfig(), existing, 1, 25)

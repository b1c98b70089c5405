"""What the label stage keeps of its previous tables when the topics carried on (a step after
naming): topic numbers are the saved model's registry numbers, never reused, so a number seen
before is the same topic.

- A topic whose fitted papers are those it had (new topics emerged beside it) keeps its whole
  row: label, terms, theme and representative papers.
- A topic that survived a refit with other papers keeps its label while the label still
  describes its papers: at least KEEP_WORDS of the label's words are among the words of the
  topic's TERMS_CHECKED best fresh terms. Else it takes its fresh label.
- A new topic takes its fresh label (made unique against the labels kept).
- Themes: when no earlier topic changed its papers, the earlier themes stay and a new topic
  joins the theme whose centre is nearest, or a theme of its own when it is further from every
  theme than any earlier topic is from its own. After a refit the fresh themes are matched to
  the earlier ones by the topics they hold (Hungarian on shared topics): a theme sharing
  Jaccard >= 0.5 of its topics keeps the earlier number and label; others are numbered above.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline import schemas

log = logging.getLogger("pipeline.label")

KEEP_WORDS = 0.5
TERMS_CHECKED = 10
SAME_THEME = 0.5  # Jaccard of shared topics for a fresh theme to be an earlier one


@dataclass(frozen=True)
class Earlier:
    """The label stage's previous tables and each topic's fitted papers' digest then."""

    topics: pd.DataFrame
    themes: pd.DataFrame
    papers: dict[int, str]


def paper_digests(doc_ids: np.ndarray, topics: np.ndarray) -> dict[int, str]:
    """topic -> a digest of its fitted papers' doc_ids (sorted)."""
    found = {}
    for topic in sorted(set(topics.tolist()) - {schemas.UNASSIGNED}):
        members = sorted(str(d) for d in doc_ids[topics == topic])
        found[int(topic)] = hashlib.sha256("\n".join(members).encode()).hexdigest()[:16]
    return found


def _words(text: str) -> set[str]:
    return {w for w in str(text).lower().replace("-", " ").split() if w}


def still_describes(label: str, terms: list[str]) -> bool:
    """Whether at least KEEP_WORDS of the label's words are among its topic's best terms."""
    words = _words(label)
    vocabulary = set().union(*(_words(t) for t in list(terms)[:TERMS_CHECKED]))
    return bool(words) and len(words & vocabulary) >= KEEP_WORDS * len(words)


def _unique(label: str, terms: list[str], taken: set[str]) -> str:
    for candidate in [label, *(t for t in terms if t)]:
        if candidate.lower() not in taken:
            return candidate
    return f"{label} ({len(taken)})"


def kept_topics(
    fresh: pd.DataFrame, earlier: Earlier, digests: dict[int, str]
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The fresh topics table with the earlier rows and labels kept as the module says, and
    how many topics were kept whole, kept their label, were relabelled and were new."""
    before = earlier.topics.set_index(earlier.topics["topic"].astype(int))
    rows, how = [], {"kept": 0, "label kept": 0, "relabelled": 0, "new": 0}
    for row in fresh.to_dict("records"):
        topic = int(row["topic"])
        if topic == schemas.UNASSIGNED or topic not in before.index:
            how["new"] += topic != schemas.UNASSIGNED
            rows.append((row, False))
        elif earlier.papers.get(topic) == digests.get(topic):
            how["kept"] += 1
            rows.append(({**before.loc[topic].to_dict(), "topic": topic}, True))
        elif still_describes(before.at[topic, "label"], row["terms"]):
            how["label kept"] += 1
            rows.append(({**row, "label": before.at[topic, "label"]}, True))
        else:
            how["relabelled"] += 1
            rows.append((row, False))
    taken = {r["label"].lower() for r, kept in rows if kept}
    out = []
    for row, kept in rows:
        if not kept and int(row["topic"]) != schemas.UNASSIGNED:
            row = {**row, "label": _unique(row["label"], list(row["terms"]), taken)}
            taken.add(row["label"].lower())
        out.append(row)
    return pd.DataFrame(out, columns=fresh.columns), how


def _theme_centres(themes: dict[int, int], centres: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    members: dict[int, list] = {}
    for topic, theme in themes.items():
        if topic in centres and theme != schemas.UNASSIGNED:
            members.setdefault(theme, []).append(centres[topic])
    found = {}
    for theme, vectors in members.items():
        mean = np.mean(vectors, axis=0)
        found[theme] = mean / max(np.linalg.norm(mean), 1e-12)
    return found


def joined_themes(
    topics: pd.DataFrame, earlier: Earlier, centres: dict[int, np.ndarray]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """No earlier topic changed: the earlier themes, each new topic in the nearest (or its own)."""
    theme_of = {int(t): int(h) for t, h in zip(topics["topic"], topics["theme"], strict=True)}
    earlier_ids = set(earlier.topics["topic"].astype(int))
    old = {t: h for t, h in theme_of.items() if t in earlier_ids}
    theme_centres = _theme_centres(old, centres)
    own = [float(centres[t] @ theme_centres[h]) for t, h in old.items() if h in theme_centres]
    loosest = min(own) if own else 1.0
    ids = sorted(theme_centres)
    matrix = np.stack([theme_centres[h] for h in ids]) if ids else np.zeros((0, 1))
    members = {int(r.theme): [int(t) for t in r.topics] for r in earlier.themes.itertuples()}
    rows = earlier.themes.to_dict("records")
    for topic in sorted(set(theme_of) - earlier_ids - {schemas.UNASSIGNED}):
        similarity = matrix @ centres[topic] if ids else np.zeros(0)
        if len(ids) and similarity.max() >= loosest:
            theme = ids[int(similarity.argmax())]
        else:  # a theme of its own, named as its topic (in the nearest theme's groups above)
            theme = max([*members, -1]) + 1
            row = topics[topics["topic"] == topic].iloc[0]
            nearest = ids[int(similarity.argmax())] if len(ids) else None
            like = next((r for r in rows if r["theme"] == nearest), rows[0] if rows else {})
            new = {"theme": theme, "label": row["label"], "terms": list(row["terms"])}
            rows.append({**like, **new})
            members[theme] = []
        theme_of[topic] = theme
        members[theme].append(topic)
    themes = pd.DataFrame(rows, columns=earlier.themes.columns)
    themes["size"] = 0
    themes["topics"] = [members[int(h)] for h in themes["theme"]]
    topics = topics.assign(theme=[theme_of[int(t)] for t in topics["topic"]])
    return topics, themes.reset_index(drop=True)


def matched_themes(
    topics: pd.DataFrame, fresh_themes: pd.DataFrame, earlier: Earlier
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """After a refit: the fresh themes numbered by the earlier themes they match."""
    from scipy.optimize import linear_sum_assignment

    held_before = {
        int(r.theme): set(int(t) for t in r.topics)
        for r in earlier.themes.itertuples()
        if r.theme != schemas.UNASSIGNED
    }
    held_now = {
        int(r.theme): set(int(t) for t in r.topics)
        for r in fresh_themes.itertuples()
        if r.theme != schemas.UNASSIGNED
    }
    old_ids, new_ids = sorted(held_before), sorted(held_now)
    shared = np.array([[len(held_before[o] & held_now[n]) for n in new_ids] for o in old_ids])
    number, label_of = {}, dict(zip(earlier.themes["theme"], earlier.themes["label"], strict=True))
    if shared.size:
        for r, c in zip(*linear_sum_assignment(shared, maximize=True), strict=True):
            o, n = old_ids[r], new_ids[c]
            if shared[r, c] / len(held_before[o] | held_now[n]) >= SAME_THEME:
                number[n] = o
    following = max([*held_before, -1]) + 1
    for n in new_ids:
        if n not in number:
            number[n], following = following, following + 1
    number[schemas.UNASSIGNED] = schemas.UNASSIGNED
    themes = fresh_themes.assign(theme=[number[int(h)] for h in fresh_themes["theme"]])
    kept = {n for n, o in number.items() if o in held_before and n != schemas.UNASSIGNED}
    themes["label"] = [
        label_of[number[int(h)]] if int(h) in kept else label
        for h, label in zip(fresh_themes["theme"], fresh_themes["label"], strict=True)
    ]
    topics = topics.assign(theme=[number[int(h)] for h in topics["theme"]])
    return topics, themes


def carried_over(
    fresh_topics: pd.DataFrame,
    fresh_themes: pd.DataFrame,
    earlier: Earlier | None,
    digests: dict[int, str],
    centres: dict[int, np.ndarray],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pure core: the fresh (topics, themes) with what carries over from `earlier` kept."""
    if earlier is None:
        return fresh_topics, fresh_themes
    topics, how = kept_topics(fresh_topics, earlier, digests)
    log.info("labels carried over: %s", ", ".join(f"{v} {k}" for k, v in how.items()))
    still = set(earlier.topics["topic"].astype(int)) & set(topics["topic"].astype(int))
    if all(earlier.papers.get(t) == digests.get(t) for t in still - {schemas.UNASSIGNED}):
        return joined_themes(topics, earlier, centres)
    topics = topics.assign(theme=fresh_topics["theme"].to_numpy())
    return matched_themes(topics, fresh_themes, earlier)

"""Themes: the topics grouped (Ward on their mean embeddings) and each theme named by the terms
that tell its papers from the rest of the corpus.

A theme's terms are ranked by how many of its papers use them times how much more often they do
than the other papers: share x log(share / share elsewhere), the informativeness (one term's part
in the Kullback-Leibler divergence of the theme from the corpus) that LDAvis-style relevance
builds on. Our own few lines, not BERTopic's c-TF-IDF: c-TF-IDF counts term frequency in the
theme's pooled text, which favours its largest topic's vocabulary, and a theme is named by what
its topics share. Measured on the 9,749 ICML/ICLR 2020-2025 papers: theme NPMI 0.128 -> 0.184,
diversity 0.86 -> 0.99 (docs/quality.md has the 3,401-paper figures).
"""

from __future__ import annotations

import re
from itertools import combinations, product

import numpy as np
import pandas as pd

from pipeline import schemas
from pipeline.config import LabelConfig
from pipeline.phrases import ADJECTIVES, head_phrase, is_noun_phrase, singular
from pipeline.schemas import UNASSIGNED_LABEL
from pipeline.stages.label.contrast import WordEvidence, contrast_terms, label_words
from pipeline.stages.label.counts import TermCounts
from pipeline.stages.label.matching import matched_labels, read_words
from pipeline.stages.label.names import CANDIDATES, Label
from pipeline.stages.label.terms import distinct_terms
from pipeline.text import term_words

# the words papers use, and each member's papers (rows of it)
Evidence = tuple[WordEvidence, dict[int, np.ndarray]]

CANDIDATE_SHARE = 0.05  # a group's candidate terms are used by at least this share of it
PARTS = 4  # parts of a composite label at most (three: see `label_options`)
SHARED_CHOICES = 10  # shared phrases weighed per group
MEMBERS_TRIED = 6  # a group's largest members whose heads its label may name
OWN_PHRASES = 4  # a group's own candidate phrases its label may add to its members'
FRAGMENT = 0.7  # a phrase is cut short where a longer one holding it has this share of its papers


def telling_terms(
    counts: TermCounts, min_share: float, n_terms: int
) -> dict[int, list[tuple[str, float]]]:
    """Each group's (theme's) `n_terms` best terms with their scores, best first, from the
    papers' term counts by group (`counts.py`): terms that at least `min_share` of its papers
    use (and two, where it has two), used more often there than elsewhere, ranked by share x
    log(share / share elsewhere); ties by term. A term a better one already says is left out
    (`distinct_terms`)."""
    ids, vocabulary = counts.groups.tolist(), counts.vocabulary
    papers = counts.papers.toarray().astype(float)  # group x term: papers using it
    sizes = counts.sizes.astype(float)
    everywhere, n_papers = papers.sum(axis=0), float(sizes.sum())
    found = {}
    for g, group in enumerate(ids):
        inside, outside = papers[g], everywhere - papers[g]
        share = inside / sizes[g]
        elsewhere = (outside + 1) / (n_papers - sizes[g] + 1)  # +1: never 0
        keep = (inside >= max(min_share * sizes[g], min(2, sizes[g]))) & (share > elsewhere)
        score = np.where(keep, share * np.log(np.maximum(share, 1e-12) / elsewhere), -np.inf)
        order = [i for i in np.lexsort((vocabulary, -score)) if keep[i]]
        terms = distinct_terms([str(vocabulary[i]) for i in order])[:n_terms]
        index = {str(vocabulary[i]): i for i in order}
        found[group] = [(term, round(float(score[index[term]]), 6)) for term in terms]
    return found


def shared_phrases(
    terms: list[str], members: list[int], counts: TermCounts, min_share: float
) -> list[str]:
    """The first SHARED_CHOICES of a group's readable candidate `terms` (best first) that
    describe at least two of its `members` (used by `min_share` of each one's papers in
    `counts`; half of them was asked before: 0.572 -> 0.585 of the 3,401 papers matched to
    their theme's label) and of two or more words (single words that several topics share are
    the generic ones: setting, information); none for a single member."""
    if len(members) < 2:
        return []
    uses = {m: counts.papers_using(m) for m in members}
    size = {m: int(counts.sizes[counts.row(m)]) for m in members}
    found = []
    for term in terms:
        covered = sum(uses[m].get(term, 0) >= max(min_share * size[m], 1) for m in members)
        several = len(term_words(term)) >= 2  # single words shared widely are generic
        if several and covered >= 2:
            found.append(term)
        if len(found) == SHARED_CHOICES:
            break
    return found


def composite_label(shared: str | None, heads: list[str], limit: int | None = None) -> str:
    """`shared: part, part, part`, the parts being the members' heads (largest member first),
    less the shared phrase's words where they hold them all (`robustness: adversarial,
    distribution shift`; under `contrastive learning`, `reinforcement learning` stays whole) or
    less a run of two or more words they share with it (`time series data: forecasting`, not
    `time series forecasting`); the heads alone, joined, where nothing is shared."""
    said, run = (label_words(shared), _run(shared)) if shared else (set(), ())
    limit = limit or PARTS
    parts: list[str] = []
    for head in heads:
        part = _less_shared(head, said, run)
        if part in ADJECTIVES and part != head:  # `language models: large` names nothing
            return ""
        if part and part not in parts:
            parts.append(part)
        if len(parts) == limit:
            break
    if not shared:
        return ", ".join(parts)
    return f"{shared}: {', '.join(parts)}" if parts else shared


def _less_shared(head: str, said: set[str], run: tuple[str, ...]) -> str:
    """A part's phrase (`head`) less the shared phrase's words (`said`, its words in order
    `run`, plurals folded) where it holds them all (empty where it is that phrase), else less
    the longest run of two or more of them it holds, never all its words."""
    words = term_words(head)
    folded = [singular(w) for w in words]
    if said <= set(folded):  # `reinforcement learning` under `contrastive learning` stays whole
        return " ".join(w for w, f in zip(words, folded, strict=True) if f not in said)
    for size in range(min(len(run), len(words) - 1), 1, -1):
        for start in range(len(words) - size + 1):
            if _within(tuple(folded[start : start + size]), run):
                return " ".join(words[:start] + words[start + size :])
    return head


def member_phrases(label: Label) -> list[str]:
    """The phrases a group label may name a member by: its head, and its second phrase where
    the label is `head, second` and that phrase has two or more words (a single word, as
    `document` or `entities`, reads as a fragment out of its topic's label). Naming members by
    either phrase: 0.585 -> 0.610 of the 3,401 papers matched to their theme's label, 0.524 ->
    0.581 of the 9,672 (docs/quality.md)."""
    second = label.text[len(label.head) + 2 :] if label.text.startswith(f"{label.head}, ") else ""
    several = second and "," not in second and ":" not in second and len(term_words(second)) >= 2
    return [label.head, second] if several else [label.head]


def fragments(terms: list[str], uses: dict[str, int]) -> set[str]:
    """The `terms` that are a longer phrase cut short: a run of the words (plurals folded) of
    a phrase that at least FRAGMENT as many of the group's papers use (`uses`: term -> the
    group's papers using it), as `large language` of `large language models` or `ordinary
    differential` of `ordinary differential equations` (its plural counted with it)."""
    if not terms:
        return set()
    folded: dict[tuple, int] = {}
    for term, n in uses.items():
        key = _run(term)
        folded[key] = folded.get(key, 0) + n
    found = set()
    for term in terms:
        key = _run(term)
        floor = FRAGMENT * folded.get(key, 0)
        size = len(key)
        for longer, n in folded.items():
            if len(longer) > size and n >= floor and _within(key, longer):
                found.add(term)
                break
    return found


def _run(term: str) -> tuple[str, ...]:
    """A term's words in order, plurals folded."""
    return tuple(singular(w) for w in term_words(term))


def _within(piece: tuple[str, ...], run: tuple[str, ...]) -> bool:
    """Whether the words `piece` stand together, in order, in the words `run`."""
    size = len(piece)
    return any(run[i : i + size] == piece for i in range(len(run) - size + 1))


def own_phrases(terms: list[str], taken: set[str]) -> list[str]:
    """The first OWN_PHRASES of a group's candidate `terms` (noun phrases not cut short, best
    first) of two or more words that are not `taken` (its shared phrases, its members'
    phrases): phrases a group label may name beside its members' (`object detection` in a
    vision theme whose topics are named `vision transformers` and `vision-language models`)."""
    return [t for t in terms if len(term_words(t)) >= 2 and t not in taken][:OWN_PHRASES]


def label_options(
    shared: list[str], labels: list[Label], own: list[str] | None = None
) -> list[tuple[str, frozenset]]:
    """A group's labels to weigh, with their head phrases, fewest words first (ties: in the
    order made): two to PARTS parts, at least two of them its members' (`labels`: the
    members' Labels, largest member first; MEMBERS_TRIED of them), each named by one of its
    `member_phrases`, the rest phrases of its `own` (`own_phrases`), largest member first and
    its own phrases last (the map shows a theme by its first part: a phrase of its largest
    topic, not of one with a tenth of its papers); after each `shared` phrase, then alone (of
    two labels with as many words, the one after a shared phrase: the map shows `reinforcement
    learning` rather than `embodied agents`; its words are not counted, `_length`); a single
    member's own label. Four parts and the group's own phrases rather than three of its
    members': 0.629 -> 0.652 of the 3,401 papers matched to their theme's label, 0.602 ->
    0.631 of the 9,672 (docs/quality.md)."""
    if len(labels) == 1:
        return [(labels[0].text, head_phrase(labels[0].head or labels[0].text))]
    named = {label.head: label for label in labels if label.head}
    members = [member_phrases(label) for label in named.values()][:MEMBERS_TRIED]
    entries = members + [[phrase] for phrase in own or []]
    least = min(2, len(members))
    found: dict[str, frozenset] = {}
    for phrase in [*shared, None]:
        for size in range(least, PARTS + 1):
            for chosen in combinations(range(len(entries)), size):
                if sum(k < len(members) for k in chosen) < least:
                    continue
                for parts in product(*[entries[k] for k in chosen]):
                    text = composite_label(phrase, list(parts), size)
                    if text:
                        found.setdefault(text, head_phrase(phrase or parts[0]))
    return sorted(found.items(), key=lambda item: _length(item[0]))


def _length(text: str) -> int:
    """A group label's words less its shared phrase's (which names the group rather than adds a
    part): of two labels naming the same parts, the one after a shared phrase is weighed first."""
    return len(term_words(re.sub(r",", " ", text.split(": ")[-1])))


def group_labels(
    counts: TermCounts,
    title_counts: TermCounts,
    members: dict[int, list[int]],
    member_labels: dict[int, Label],
    evidence: Evidence,
    min_share: float,
    name: str = "Theme",
) -> dict[int, Label]:
    """Labels of groups of topics (themes) or of themes (areas), chosen together
    (matching.py) among each group's `label_options`: its members' phrases (`members` largest
    first) and its own (`own_phrases`), alone or after a phrase its members share
    (`shared_phrases`), from the candidates that tell it from its siblings (contrast.py) less
    those cut short (`fragments`), so that each paper's words pick its own group's label
    (`evidence`: the words papers use and each member's papers). `counts` are by member; a
    Label's head is its shared phrase or its first member's head."""
    words, papers_of = evidence
    into = {m: g for g, ms in members.items() for m in ms}
    grouped, titled = counts.merged(into), title_counts.merged(into)
    ids = sorted(members)
    siblings = {g: [h for h in ids if h != g] for g in ids}
    scored = contrast_terms(grouped, titled, siblings, CANDIDATE_SHARE)
    rows = {g: _rows([papers_of.get(m) for m in members[g]]) for g in ids}
    options = {}
    for group in ids:
        terms = [t for t, _ in scored.get(group, [])[:CANDIDATES] if is_noun_phrase(t)]
        pieces = fragments(terms, _common(grouped, group, terms))
        whole = [t for t in terms if t not in pieces]
        shared = shared_phrases(whole, members[group], counts, min_share)
        labels = [member_labels[m] for m in members[group] if m in member_labels]
        taken = set(shared) | {p for label in labels for p in member_phrases(label)}
        found = label_options(shared, labels, own_phrases(whole, taken))
        options[group] = found or [(f"{name} {group}", frozenset())]
    chosen = matched_labels(
        {g: [text for text, _ in options[g]] for g in ids},
        {g: [head for _, head in options[g]] for g in ids},
        words,
        rows,
        read_words,
    )
    return {g: Label(options[g][chosen[g]][0], _head(options[g][chosen[g]][0])) for g in ids}


def _head(text: str) -> str:
    """A group label's head: its shared phrase (before the colon) or its first part."""
    return re.split(r"[:,]", text)[0].strip()


def _common(counts: TermCounts, group: int, terms: list[str]) -> dict[str, int]:
    """term -> the group's papers using it, for the terms at least FRAGMENT as many of its
    papers use as the least used of `terms` (the longer phrases that may hold one of them)."""
    if not terms:
        return {}
    line = counts.papers.getrow(counts.row(group))
    line.sort_indices()
    if not line.nnz:
        return {}
    columns = np.searchsorted(counts.vocabulary, terms)  # the vocabulary is sorted
    at = np.minimum(np.searchsorted(line.indices, columns), line.nnz - 1)
    floor = FRAGMENT * np.where(line.indices[at] == columns, line.data[at], 0).min()
    keep = line.data >= floor
    pairs = zip(line.indices[keep].tolist(), line.data[keep].tolist(), strict=True)
    return {str(counts.vocabulary[i]): n for i, n in pairs}


def _rows(parts: list) -> np.ndarray:
    found = [p for p in parts if p is not None and len(p)]
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def theme_labels(
    counts: TermCounts,
    title_counts: TermCounts,
    topic_terms: dict[int, list[str]],
    topic_labels: dict[int, Label],
    themes: dict[int, int],
    evidence: Evidence,
    config: LabelConfig,
) -> tuple[dict[int, Label], dict[int, list[str]]]:
    """(theme -> Label, theme -> terms). A real second level is named by `group_labels` and
    its terms are its telling terms (the unassigned papers' group's too); with one level a
    theme is its topic, with the topic's label and terms. `counts`: the papers' term counts
    by topic, `title_counts` their titles'."""
    if len(set(themes.values())) == len(themes):
        labels = {themes[t]: topic_labels[t] for t in themes}
        return labels, {themes.get(t, t): terms for t, terms in topic_terms.items()}
    into = {int(t): themes.get(int(t), schemas.UNASSIGNED) for t in counts.groups}
    weighted = telling_terms(counts.merged(into), config.theme_term_share, config.n_terms)
    theme_terms = {h: [term for term, _ in pairs] for h, pairs in weighted.items()}
    size = dict(zip(counts.groups.tolist(), counts.sizes.tolist(), strict=True))
    members = {
        h: sorted((t for t in themes if themes[t] == h), key=lambda t: (-size[t], t))
        for h in set(themes.values())
    }
    labels = group_labels(
        counts, title_counts, members, topic_labels, evidence, config.min_term_share
    )
    return labels, theme_terms


def theme_rows(
    themes: dict[int, int],
    labels: dict[int, str],
    terms: dict[int, list[str]],
    areas: dict[int, int] | None = None,
    area_labels: dict[int, str] | None = None,
) -> pd.DataFrame:
    """One row per theme (themes.parquet) with its label, terms, topics and area (-1 and ""
    without areas), and the unassigned papers' row where they have terms; sizes are set by
    `sized`."""
    areas, area_labels = areas or {}, area_labels or {}
    members = {h: sorted(t for t, g in themes.items() if g == h) for h in set(themes.values())}
    if schemas.UNASSIGNED in terms:
        members[schemas.UNASSIGNED] = [schemas.UNASSIGNED]
    rows = [
        {
            "theme": theme,
            "label": labels.get(theme, UNASSIGNED_LABEL),
            "terms": terms.get(theme, []),
            "size": 0,
            "topics": topics,
            "area": areas.get(theme, -1),
            "area_label": area_labels.get(areas.get(theme, -1), ""),
        }
        for theme, topics in sorted(members.items(), key=lambda item: (item[0] < 0, item[0]))
    ]
    return pd.DataFrame(rows, columns=schemas.THEMES.columns)

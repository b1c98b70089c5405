"""Topic labels: noun phrases that tell a topic's papers from its nearest topics' papers.

A label is a head phrase, alone or followed by a second phrase (`offline reinforcement
learning, optimal policy`), at most `max_words` words in all. Both come from the
topic's candidate terms (contrast.py: terms of its titles and abstracts that its nearest topics
use less), kept where they read as noun phrases (phrases.py) and a longer phrase replaces the
words it holds. The head is one of the best few phrases of two or more words that no larger
topic's label already has as its head; of the heads and second phrases on offer the label is
the one whose words the topic's papers use most and its nearest topics' papers least
(`WordEvidence.score`), not the most frequent. A second phrase never abbreviates the head
(`dp` beside `differential privacy`) nor repeats one of its word roots.

Then the labels are chosen again together (`matched_topic_labels`, matching.py): each topic
keeps its label unless another of its options matches more papers, all topics' labels held, a
paper being matched when its own topic's label holds the rarest words of its text (a reader's
words, every word) of all labels. Measured on the 3,401 ICLR + ICML 2023 papers: 0.513 -> 0.565
of the papers matched to their own topic's label by the metrics stage's check (docs/quality.md).

Labels are only made here: a later step may keep a surviving topic's previous label.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.phrases import head_phrase, is_acronym_of, is_noun_phrase
from pipeline.stages.label.contrast import WordEvidence, label_words
from pipeline.stages.label.terms import distinct_terms
from pipeline.text import term_words

HEAD_CHOICES = 3  # heads tried per topic
SECOND_CHOICES = 20  # second phrases tried per head
CANDIDATES = 40  # candidate terms read per topic, best first
HEAD_SHARE = 0.4  # a head of several words scores at least this share of the best candidate's


@dataclass(frozen=True)
class Label:
    """A label's text and its head phrase (the first term: no two topics share one)."""

    text: str
    head: str


def _roots(term: str) -> set[str]:
    """Crude word roots (first five letters of each hyphen part): 'robot' ~ 'robotic'."""
    return {part[:5] for word in term_words(term) for part in word.split("-") if part}


def readable_terms(scored: list[tuple[str, float]]) -> list[str]:
    """The candidates (best first) that read as noun phrases, a phrase replacing the words it
    holds ('domain adaptation', not 'adaptation' and 'domain')."""
    return [t for t in distinct_terms([t for t, _ in scored[:CANDIDATES]]) if is_noun_phrase(t)]


def heads_of(scored: list[tuple[str, float]], terms: list[str], taken: set) -> list[str]:
    """The head phrases to try: the best phrases of several words scoring at least HEAD_SHARE
    of the best candidate, else the best terms; none that a taken head already is."""
    score = dict(scored)
    free = [t for t in terms if head_phrase(t) not in taken]
    best = max((score[t] for t in free), default=0.0)
    several = [t for t in free if len(term_words(t)) >= 2 and score[t] >= HEAD_SHARE * best]
    return (several or free)[:HEAD_CHOICES]


def fits_beside(second: str, head: str, max_words: int) -> bool:
    """Whether `second` may follow `head` in a label."""
    return (
        second != head
        and len(term_words(head)) + len(term_words(second)) <= max_words
        and not _roots(second) & _roots(head)
        and not is_acronym_of(second, head)
        and not is_acronym_of(head, second)
    )


def options_for(terms: list[str], heads: list[str], max_words: int) -> list[tuple[str, ...]]:
    """The labels to weigh: each head alone (of two words or more) and with each second."""
    options: list[tuple[str, ...]] = []
    for head in heads:
        if len(term_words(head)) >= 2:
            options.append((head,))
        seconds = [t for t in terms[:SECOND_CHOICES] if fits_beside(t, head, max_words)]
        options.extend((head, second) for second in seconds)
    return options


def topic_labels(
    scored: dict[int, list[tuple[str, float]]],
    evidence: WordEvidence,
    papers_of: dict[int, np.ndarray],
    neighbours: dict[int, list[int]],
    order: list[int],
    max_words: int,
    name: str = "Topic",
    taken: set | None = None,
) -> dict[int, Label]:
    """group -> its Label, chosen in `order` (largest first: it gets first pick of a head).
    `scored`: each group's candidate terms with their contrast scores, best first;
    `papers_of`: each group's papers (rows of `evidence`); `neighbours`: the groups each is
    told apart from; `taken`: head phrases no group may have (other groups' labels). A group
    with no candidate is '<name> <id>'."""
    labels: dict[int, Label] = {}
    taken = set(taken or ())
    for group in order:
        terms = readable_terms(scored.get(group, []))
        options = options_for(terms, heads_of(scored.get(group, []), terms, taken), max_words)
        inside = papers_of.get(group, np.zeros(0, np.int64))
        near = [papers_of[n] for n in neighbours.get(group, []) if n in papers_of]
        outside = np.concatenate(near) if near else np.zeros(0, np.int64)
        weighed = [(evidence.score(label_words(*o), inside, outside), o) for o in options]
        weighed = [(s, o) for s, o in weighed if np.isfinite(s)]
        if not weighed:
            labels[group] = Label(f"{name} {group}", "")
            continue
        best = max(weighed, key=lambda pair: (pair[0], " ".join(pair[1])))[1]
        labels[group] = Label(", ".join(best), best[0])
        taken.add(head_phrase(best[0]))
    return labels


def matched_topic_labels(
    labels: dict[int, Label],
    scored: dict[int, list[tuple[str, float]]],
    reader: WordEvidence,
    papers_of: dict[int, np.ndarray],
    max_words: int,
    fixed: dict[int, Label] | None = None,
) -> dict[int, Label]:
    """The topics' labels chosen again together (matching.py), so that each paper's words
    (`reader`: a reader's words) pick its own topic's label: each topic's options are its label
    (`labels`, first: kept unless another matches more papers) and the heads and seconds of
    `options_for` (any head of its best few, as no two labels may share one: the matching
    keeps them apart). `scored`: each topic's candidates, as `topic_labels` takes them;
    `fixed`: topics whose label is only a rival (kept from an earlier build), never changed."""
    from pipeline.stages.label.matching import matched_labels

    options: dict[int, list[str]] = {g: [label.text] for g, label in (fixed or {}).items()}
    labels = {**labels, **(fixed or {})}
    for group, label in labels.items():
        if group in options:
            continue
        terms = readable_terms(scored.get(group, []))
        made = options_for(terms, heads_of(scored.get(group, []), terms, set()), max_words)
        options[group] = list(dict.fromkeys([label.text, *(", ".join(o) for o in made)]))
    heads = {g: [head_phrase(text.split(",")[0]) for text in texts] for g, texts in options.items()}
    # words read as terms (whole hyphenated words): read as the papers' words, fragments won
    # (`correlation clustering, lower`, `reasoning tasks, chain`; docs/quality.md)
    chosen = matched_labels(options, heads, reader, papers_of)
    found = {}
    for group, texts in options.items():
        text = texts[chosen[group]]
        found[group] = labels[group] if chosen[group] == 0 else Label(text, text.split(",")[0])
    return found

"""Labels from terms: the best terms that fit in 2 to `label_words` words, unique across the
topics (or themes)."""

from __future__ import annotations

from pipeline.text import term_words


def _roots(term: str) -> set[str]:
    """Crude word roots (first five letters of each hyphen part): 'robot' ~ 'robotic'."""
    return {part[:5] for word in term_words(term) for part in word.split("-") if part}


def make_label(terms: list[str], max_words: int) -> str:
    """The best terms that fit, joined: 2 to `max_words` words, at most two terms once three
    words are reached, no root said twice; '' when the terms hold fewer than two words."""
    picked, n_words, roots = [], 0, set()
    for term in terms:
        size = len(term_words(term))
        if n_words + size > max_words or _roots(term) & roots:
            continue
        picked.append(term)
        n_words += size
        roots |= _roots(term)
        if n_words >= 3 or (n_words >= 2 and len(picked) >= 2):
            break
    return ", ".join(picked) if n_words >= 2 else ""


def unique_labels(terms: dict[int, list[str]], max_words: int, name: str) -> dict[int, str]:
    """A label per id (ids in order: the largest topic first gets its best label). Where the
    best label repeats an earlier one's words or one of its terms, the next terms are tried,
    then '<name> <id>'."""
    labels, taken, used_terms = {}, set(), set()
    for key in sorted(terms):
        candidates = [t for t in terms[key] if t not in used_terms]
        options = [make_label(candidates[i:], max_words) for i in range(len(candidates))]
        label = next((o for o in options if o and _words(o) not in taken), f"{name} {key}")
        taken.add(_words(label))
        used_terms |= set(label.split(", "))
        labels[key] = label
    return labels


def _words(label: str) -> frozenset[str]:
    return frozenset(w for term in label.lower().split(",") for w in term_words(term))

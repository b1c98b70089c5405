"""Which terms read as noun phrases: a label is 2-5 words a researcher would write, so its terms
end in a noun (`offline reinforcement learning`, not `collaboratively` or `pre-trained`) and
hold no adverb.

Our own rules by word endings and short word lists, not a part-of-speech tagger: none is in the
lock, spaCy's English models reach PyPI only as third-party uploads (Explosion publishes them on
GitHub, which this machine cannot reach), and NLTK's tagger loads its data from a hub at run
time. A label's last word is its head: it may not be an adverb (-ly), a participle or adjective
by its ending (-ed, -ive, -ous, -able, -ful, -less, -al, -ic, ...) unless it is a noun with such
an ending (signal, objective, variable, metric), nor a modifier compound (`zero-shot`,
`multi-view`, `model-based`). Words of other scripts pass: the rules are English ones.
"""

from __future__ import annotations

import re

from pipeline.text import term_words

# nouns with an ending that usually marks an adjective, adverb or participle
NOUNS_WITH_ADJECTIVE_ENDINGS = frozenset(
    """
    family anomaly assembly supply monopoly poly butterfly speed seed feed need bed breed red
    hundred shed embed signal interval retrieval proposal removal arrival trial animal journal
    terminal material tutorial manual potential individual original survival hospital metal
    crystal portal goal deal total principal criminal ritual residual marginal integral
    polynomial diagonal normal differential functional rival capital canal medal pedal
    professional official editorial commercial mineral topic logic music metric clinic traffic
    arithmetic rhetoric magic fabric heuristic critic tactic mimic relic tonic republic physic
    objective alternative derivative incentive representative perspective primitive initiative
    narrative directive archive detective executive relative native explosive adjective
    collective motive table variable cable observable syllable timetable vegetable size prize
    maize noise exercise expertise promise premise enterprise paradise
    """.split()
)
ADJECTIVES = frozenset(
    """
    robust sparse convex nonconvex dense deep shallow fast slow accurate fair unfair safe private
    public open closed hard soft linear nonlinear similar particular regular molecular cellular
    modular circular granular tabular popular polar bilinear rectangular triangular angular
    singular familiar nuclear clear bayesian gaussian euclidean riemannian boolean invariant
    equivariant efficient scalable latent real whole main better best good large small high low
    long short multiple single complex simple general specific generic common unknown human
    multimodal uniform random discrete continuous standard partial unseen noisy
    """.split()
)
# verbs and prepositions that abstracts use and labels never end in (`normalizing flows,
# overcome` on the bundled corpus), whose endings say nothing
NOT_NOUNS = frozenset(
    """
    overcome validate outperform propose improve achieve demonstrate enable leverage suffer
    mitigate alleviate tackle enhance facilitate incorporate investigate introduce obtain
    require remain reveal select identify ensure employ evaluate explore extend reduce derive
    solve predict perform provide apply allow consider develop
    unlike despite via whereas towards toward without within across among beyond
    """.split()
)
# endings of adjectives, adverbs and participles (the head's last hyphen part is checked)
_NOT_A_HEAD = re.compile(r"(ly|ed|ive|ous|able|ible|ful|less|al|ic|ize|ise|ify|wise)$")
# a hyphenated head is a noun when its last part has a noun's ending or is one of these
_NOUN_ENDING = re.compile(r"(tion|sion|ment|ness|ity|ism|ing|ance|ence|ure|er|or|ist|ogy|phy|ics)$")
HYPHEN_NOUNS = frozenset("attention box head network graph model loop play".split())


def singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def is_adverb(word: str) -> bool:
    """An English word ending in -ly that is no noun or adjective we know (`collaboratively`)."""
    return word.endswith("ly") and word not in NOUNS_WITH_ADJECTIVE_ENDINGS


def is_head_noun(word: str) -> bool:
    """Whether `word` can end a noun phrase: no adjective, adverb or participle by its ending
    (nouns with such endings excepted), no verb or preposition we know (NOT_NOUNS), no
    modifier compound (`zero-shot`, `test-time`)."""
    if not word.isascii():
        return True
    word = word.lower()
    parts = [p for p in word.split("-") if p]
    if not parts:
        return False
    last = singular(parts[-1])
    if len(parts) > 1:
        return bool(_NOUN_ENDING.search(last)) or last in HYPHEN_NOUNS
    if word in ADJECTIVES or last in ADJECTIVES or word in NOT_NOUNS or last in NOT_NOUNS:
        return False
    if word in NOUNS_WITH_ADJECTIVE_ENDINGS or last in NOUNS_WITH_ADJECTIVE_ENDINGS:
        return True
    return not _NOT_A_HEAD.search(last)


def is_noun_phrase(term: str) -> bool:
    """A term a label may hold: its last word a head noun, no word an adverb."""
    words = term_words(term)
    if not words:
        return False
    return is_head_noun(words[-1]) and not any(is_adverb(w.lower()) for w in words)


def head_phrase(term: str) -> frozenset[str]:
    """What two labels may not share: the words of the label's main phrase, plurals folded."""
    return frozenset(singular(w.lower()) for w in term_words(term))


def _initials(term: str) -> str:
    return "".join(part[0] for word in term_words(term) for part in word.split("-") if part)


def is_acronym_of(short: str, long: str) -> bool:
    """Whether `short` (one word) abbreviates `long` (`dp`: differential privacy, `marl`:
    multi-agent reinforcement learning): its letters are the initials of `long`'s words and
    hyphen parts, in order, starting with the first."""
    if " " in short or len(short) > 6 or not short.isascii():
        return False
    letters, initials = singular(short.lower()), _initials(long.lower())
    if len(letters) < 2 or not initials or letters[0] != initials[0]:
        return False
    rest = iter(initials)
    return all(letter in rest for letter in letters)


def readability_faults(labels: dict[int, str], max_words: int = 5) -> dict[str, list[str]]:
    """label -> what keeps it from reading as a researcher's noun phrases (labels without a
    fault left out): fewer than 2 or more than `max_words` words, a phrase (between commas)
    that ends in no noun or holds an adverb, a head phrase (the first) another label has."""
    heads: dict[frozenset[str], str] = {}
    faults: dict[str, list[str]] = {}
    for key in sorted(labels):
        label = labels[key]
        phrases = [p.strip() for p in label.split(",") if p.strip()]
        found = []
        n_words = sum(any(c.isalpha() for c in w) for p in phrases for w in term_words(p))
        if not 2 <= n_words <= max_words:
            found.append(f"{n_words} words")
        found += [f"not a noun phrase: {p}" for p in phrases if not is_noun_phrase(p)]
        head = head_phrase(phrases[0]) if phrases else frozenset()
        if head in heads:
            found.append(f"head shared with: {heads[head]}")
        heads.setdefault(head, label)
        if found:
            faults[label] = found
    return faults

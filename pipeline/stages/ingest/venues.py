"""Venue strings as people write them -> one canonical venue, a year and a track.

`icml`, `ICML 2025` and `International Conference on Machine Learning 2025` are one venue,
ICML; `NIPS 2017` and `NeurIPS'23` are NeurIPS. A venue name is matched case- and
space-insensitively to the user's `ingest.venue_aliases`, then to the major ML venues below,
then to the first spelling seen in the inputs. A year (`2023`, `'23`) is found anywhere in the
string; what follows the venue and year is the track (`Workshop`, `Datasets & Benchmarks
Track`, `Oral`). Presentation formats (`Oral`, `Spotlight`, `Poster`, `notable top 5%`) are
main-conference papers and keep the venue as their comparison group; other tracks are compared
as their own group (`ICLR Workshop`) or left out, as `ingest.tracks` says.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pipeline.stages.ingest.repair import normalise_space

# The canonical spelling of the major ML venues, and the other names they go by.
KNOWN_VENUES: dict[str, tuple[str, ...]] = {
    "ICML": ("International Conference on Machine Learning",),
    "ICLR": ("International Conference on Learning Representations",),
    "NeurIPS": (
        "NIPS",
        "Neural Information Processing Systems",
        "Conference on Neural Information Processing Systems",
        "Advances in Neural Information Processing Systems",
    ),
    "AISTATS": (
        "Artificial Intelligence and Statistics",
        "International Conference on Artificial Intelligence and Statistics",
    ),
    "COLT": ("Conference on Learning Theory",),
    "UAI": (
        "Uncertainty in Artificial Intelligence",
        "Conference on Uncertainty in Artificial Intelligence",
    ),
    "AAAI": ("AAAI Conference on Artificial Intelligence",),
    "IJCAI": ("International Joint Conference on Artificial Intelligence",),
    "ACL": ("Annual Meeting of the Association for Computational Linguistics",),
    "EMNLP": (
        "Empirical Methods in Natural Language Processing",
        "Conference on Empirical Methods in Natural Language Processing",
    ),
    "NAACL": ("North American Chapter of the Association for Computational Linguistics",),
    "CVPR": (
        "Computer Vision and Pattern Recognition",
        "Conference on Computer Vision and Pattern Recognition",
        "IEEE/CVF Conference on Computer Vision and Pattern Recognition",
    ),
    "ICCV": ("International Conference on Computer Vision",),
    "ECCV": ("European Conference on Computer Vision",),
    "KDD": (
        "SIGKDD",
        "Knowledge Discovery and Data Mining",
        "ACM SIGKDD Conference on Knowledge Discovery and Data Mining",
    ),
    "TMLR": ("Transactions on Machine Learning Research",),
}
# A four-digit year (also glued on: ICML2025), or two digits after an apostrophe (NeurIPS'23)
# or a hyphen right after a name (AAAI-23).
YEAR = re.compile(
    r"(?<!\d)(?P<full>(?:19|20)\d{2})(?!\d)|(?:['’‘`]|(?<=[^\W\d_])-)(?P<short>\d{2})(?!\d)"
)
# "Proceedings of the 40th ...", "Advances in ...": words before a venue's name
LEAD = re.compile(
    r"^(?:(?:proceedings|proc\.?)\s+(?:of\s+)?)?(?:the\s+)?(?:\d+(?:st|nd|rd|th)\s+)?",
    re.IGNORECASE,
)
EDGE_PUNCTUATION = " \t,;:.-–—/|()[]{}"
# "Workshop Papers", "Oral (accepted papers)": the words saying these are papers go after a
# track or format word ("Tiny Papers" is a track of its own)
PAPERS_SUFFIX = re.compile(
    r"\b(workshop|track|oral|spotlight|poster|main|conference)[\s(]*(?:accepted\s+)?papers\W*$",
    re.IGNORECASE,
)
# A track made of these words only says "the main conference": no track at all.
MAIN_WORDS = frozenset("papers paper accepted proceedings main conference track the".split())
# Presentation formats of main-conference papers: kept as the track, compared with the venue.
PRESENTATION_WORDS = MAIN_WORDS | frozenset(
    """oral orals spotlight spotlights poster posters presentation presentations highlight
    highlights notable top award awards best outstanding honorable mention contributed talk
    talks long short""".split()
)
UNKNOWN_VENUE = "Unknown"


def name_key(text: str) -> str:
    """What two spellings of a name must share: case, spaces and width forms ignored."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def _words(track: str) -> set[str]:
    return {w for w in re.split(r"[^\w]+", track.casefold()) if w and not w.isdigit()}


def is_main_track(track: str) -> bool:
    """'' and presentation formats (Oral, Spotlight, notable top 5%) are the main conference."""
    return _words(track) <= PRESENTATION_WORDS


def split_year(text: str) -> tuple[str, int | None, str]:
    """(the name before the year, the year, what follows it); without a year, (text, None, '').

    A string starting with its year ('2023 ICML Workshop') is read as year + name; width forms
    are folded first ('ＩＣＭＬ ２０２５').
    """
    text = unicodedata.normalize("NFKC", text)
    match = YEAR.search(text)
    if not match:
        return text, None, ""
    if match.group("full"):
        year = int(match.group("full"))
    else:
        short = int(match.group("short"))
        year = 2000 + short if short < 50 else 1900 + short
    before = text[: match.start()].strip(EDGE_PUNCTUATION)
    after = text[match.end() :].strip(EDGE_PUNCTUATION)
    return (before, year, after) if before else (after, year, "")


def _clean_track(text: str) -> str:
    text = PAPERS_SUFFIX.sub(r"\1", normalise_space(text)).strip(EDGE_PUNCTUATION)
    if not text or _words(text) <= MAIN_WORDS:
        return ""
    return text


@dataclass(frozen=True)
class Venue:
    """What a venue string became. `group` is what comparisons group by: the venue itself for
    main-conference papers, venue + track (`ICLR Workshop`) for other tracks."""

    venue: str
    year: int | None
    track: str
    main: bool

    @property
    def group(self) -> str:
        return self.venue if self.main else f"{self.venue} {self.track}"


class VenueNames:
    """Resolves the venue strings of one corpus; every spelling of a venue gets one name.

    `aliases` (ingest.venue_aliases) map other names to a venue: {'Neural Information
    Processing Systems': 'NeurIPS'}. `resolve` needs every string of the corpus first (`seen`),
    so that a name written with a year ('Foo 2023') is recognised before a track in strings
    without one ('Foo Workshop').
    """

    def __init__(self, aliases: dict[str, str] | None = None):
        self._canonical: dict[str, str] = {}  # name key -> canonical spelling
        for venue, others in KNOWN_VENUES.items():
            for name in (venue, *others):
                self._canonical[name_key(name)] = venue
        for name, venue in (aliases or {}).items():
            target = normalise_space(venue)
            self._canonical[name_key(name)] = self._canonical.get(name_key(target), target)
        self._anchors = set(self._canonical)  # names that may stand before a track
        self._first: dict[str, str] = {}  # name key -> the first spelling seen
        self._tracks: dict[str, str] = {}  # track key -> the first spelling seen

    def seen(self, texts: list[str]) -> None:
        """Note every venue string of the corpus, in input order."""
        for text in texts:
            name, year, _ = split_year(normalise_space(text))
            key = name_key(name)
            if key:
                self._first.setdefault(key, name)
            if year is not None and key:
                self._anchors.add(key)

    def _name(self, name: str) -> tuple[str, str]:
        """(canonical venue, the words after its name: a track written before the year).

        A known name or alias first, then the longest known or seen name the words start
        with ('ICLR Workshop' is ICLR + Workshop), then the name itself as first spelt.
        """
        for candidate in (name, LEAD.sub("", name)):
            if name_key(candidate) in self._canonical:
                return self._canonical[name_key(candidate)], ""
        words = name.split()
        for n in range(len(words) - 1, 0, -1):
            key = name_key(" ".join(words[:n]))
            if key in self._anchors:
                venue = self._canonical.get(key) or self._first.get(key, " ".join(words[:n]))
                return venue, " ".join(words[n:])
        return self._first.get(name_key(name), name), ""

    def resolve(self, text: str | None) -> Venue:
        """'NeurIPS 2024 (Datasets & Benchmarks Track)' -> NeurIPS, 2024, that track."""
        name, year, after = split_year(normalise_space(text or ""))
        if not name:
            return Venue(UNKNOWN_VENUE, year, "", True)
        venue, before_year = self._name(name)
        track = _clean_track(f"{before_year} {after}")
        if track:
            track = self._tracks.setdefault(name_key(track), track)
        return Venue(venue, year, track, is_main_track(track))

    def track(self, text: str) -> str:
        """A track given in its own column, spelt as the first spelling of it seen."""
        track = _clean_track(text)
        return self._tracks.setdefault(name_key(track), track) if track else ""

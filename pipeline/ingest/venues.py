"""Venue strings as inputs write them: 'ICLR 2023' is venue ICLR of year 2023."""

from __future__ import annotations

import re

from pipeline.ingest.repair import normalise_space

VENUE_YEAR = re.compile(r"^(?P<venue>.*?)[\s,]*\b(?P<year>(?:19|20)\d{2})\b.*$")


def split_venue(value: str) -> tuple[str, int | None]:
    """'ICLR 2023' -> ('ICLR', 2023); 'ICML' -> ('ICML', None)."""
    value = normalise_space(value)
    match = VENUE_YEAR.match(value)
    if match and match.group("venue").strip():
        return match.group("venue").strip(), int(match.group("year"))
    return value, None

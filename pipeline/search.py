"""Search by meaning: the papers whose embeddings are most cosine-similar to a query's, and the
limits a query is held to (`topicmap serve`'s /api/search and /api/place use them).

A query is embedded as the build embeds a paper without a title (pipeline.text's rule: its
text, spaces normalised), with the build's model and precision. The search is exact: one
matrix-vector product over the papers' unit vectors and a partial sort, linear in the papers:
about 16 ms at 100,000 papers and 0.2 s at 1,000,000 on two busy cores (docs/benchmarks.md),
well inside the 300 ms a search may take at 100,000, so no approximate index is needed for a
single query (render's pynndescent graph is for every paper's neighbours at once, n x n).
"""

from __future__ import annotations

import numpy as np

from pipeline.errors import PipelineError
from pipeline.neighbours import top_k

MAX_QUERY_CHARS = 1_000  # a search query longer than this is refused
MAX_ABSTRACT_CHARS = 20_000  # an abstract (or title) to place longer than this is refused
MAX_K = 100  # the most papers one search or placing returns
DEFAULT_K = 10


class BadQuery(PipelineError):
    """A query the limits refuse; its message is one line for the person who sent it."""


def query_text(query: object, limit: int = MAX_QUERY_CHARS, what: str = "q") -> str:
    """The query as embedded: its whitespace runs made single spaces, ends stripped; refused
    when empty or longer than `limit` characters."""
    if not isinstance(query, str):
        raise BadQuery(f"{what} must be text")
    if len(query) > limit:
        raise BadQuery(f"{what} is {len(query):,} characters long; at most {limit:,} are allowed")
    text = " ".join(query.split())
    if not text:
        raise BadQuery(f"{what} is empty")
    return text


def result_count(k: object, default: int = DEFAULT_K) -> int:
    """`k` as a count of results (1..MAX_K); None: `default`."""
    if k is None or k == "":
        return default
    try:
        count = int(str(k).strip())
    except ValueError:
        raise BadQuery(f"k must be a whole number from 1 to {MAX_K}, not {str(k)[:20]!r}") from None
    if not 1 <= count <= MAX_K:
        raise BadQuery(f"k must be from 1 to {MAX_K}, not {count}")
    return count


def best_matches(vectors: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The `k` rows of `vectors` (unit rows) most cosine-similar to the unit vector `query`:
    (indices, similarities), best first, ties to the lower index (neighbours.top_k's rule)."""
    k = min(k, len(vectors))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    scores = vectors @ np.asarray(query, dtype=np.float32)
    top, values = top_k(scores[None, :], k)
    return top[0].astype(np.int64), values[0].astype(np.float32)

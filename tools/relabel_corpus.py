"""Corpora of many venues and years made from the real ones in ../shared/corpora (9,673 ICML and
ICLR 2020-2023 papers), for the map's and the report's checks at scale (issue 33):

    .venv/bin/python tools/relabel_corpus.py --venues 25 --out /tmp/tree/v25/papers.parquet
    .venv/bin/python tools/relabel_corpus.py --venues 8 --years 1985-2023 --papers 21000 ...

Each paper goes to a venue by what it is about (a k-means cluster of its words, so venues differ
in topics as real ones do) for `--focus` of the papers, the rest at random; its year is kept, or
drawn from --years (a venue's papers spread over them, more in later years). Papers beyond the
9,673 are copies with a new id and a marked title (`... [copy 2]`): their text differs, so ingest
keeps them and the embedding cache does not hold them. Writes ingest's parquet input (id, title,
abstract, venue "Name Year", year, url). Developer code, deterministic for a --seed.
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
# venue names: plain words (ingest reads the year from "Name Year"), distinct first words
NAMES = (
    "Atlas Aurora Beacon Cascade Cedar Comet Delta Ember Fjord Glacier Harbor Horizon Juniper "
    "Lantern Meadow Nimbus Orchard Prism Quartz Ridge Summit Tundra Vertex Willow Zephyr "
    "Basalt Coral Dune Estuary Falcon"
).split()


def real_papers() -> pd.DataFrame:
    """The shared corpora's papers (id, title, abstract, year, url), in file order."""
    files = sorted(glob.glob(str(CORPORA / "*.parquet")))
    if not files:
        raise SystemExit(f"no corpora in {CORPORA}")
    columns = ["id", "title", "abstract", "year", "url"]
    return pd.concat([pd.read_parquet(f, columns=columns) for f in files], ignore_index=True)


def content_groups(texts: pd.Series, k: int, seed: int) -> np.ndarray:
    """Each text's k-means cluster (k of them) over TF-IDF vectors reduced to 50 dimensions."""
    from sklearn.cluster import KMeans
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    words = TfidfVectorizer(stop_words="english", min_df=3, max_features=20000)
    counts = words.fit_transform(texts)
    dimensions = min(50, counts.shape[1] - 1)  # a small corpus has fewer words
    reduced = TruncatedSVD(dimensions, random_state=seed).fit_transform(counts)
    return KMeans(k, n_init=3, random_state=seed).fit_predict(reduced)


def relabel(
    papers: pd.DataFrame,
    n_venues: int,
    n_papers: int | None = None,
    years: list[int] | None = None,
    focus: float = 0.7,
    seed: int = 0,
) -> pd.DataFrame:
    """ingest's input rows: `papers` (real_papers) repeated up to n_papers, dealt to n_venues
    venues (by content for `focus` of them), years kept or drawn from `years`."""
    if not 1 <= n_venues <= len(NAMES):
        raise SystemExit(f"--venues must be 1 to {len(NAMES)}")
    rng = np.random.default_rng(seed)
    n_papers = n_papers or len(papers)
    source = np.arange(n_papers) % len(papers)
    copy = np.arange(n_papers) // len(papers)
    texts = papers["title"].fillna("") + ". " + papers["abstract"].fillna("")
    group = content_groups(texts, n_venues, seed) if n_venues > 1 else np.zeros(len(papers), int)
    venue = np.where(
        rng.random(n_papers) < focus, group[source], rng.integers(0, n_venues, n_papers)
    )
    out = papers.iloc[source].reset_index(drop=True)
    out["id"] = [f"{i}-c{c}" if c else i for i, c in zip(out["id"], copy, strict=True)]
    out["title"] = [
        f"{t} [copy {c + 1}]" if c else t for t, c in zip(out["title"], copy, strict=True)
    ]
    if years:
        weights = np.linspace(1, 4, len(years))  # later years hold more papers, as fields grow
        out["year"] = rng.choice(years, size=n_papers, p=weights / weights.sum())
    out["year"] = out["year"].astype("int64")
    names = [NAMES[v] for v in venue]
    out["venue"] = [f"{n} {y}" for n, y in zip(names, out["year"], strict=True)]
    return out[["id", "title", "abstract", "venue", "year", "url"]]


def _years(text: str) -> list[int] | None:
    if not text:
        return None
    first, last = (int(part) for part in text.split("-"))
    return list(range(first, last + 1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="tools/relabel_corpus.py", description=__doc__)
    parser.add_argument("--venues", type=int, required=True)
    parser.add_argument("--papers", type=int, default=None, help="default: the 9,673")
    parser.add_argument("--years", default="", help="e.g. 1985-2023 (default: each paper's own)")
    parser.add_argument("--focus", type=float, default=0.7, help="share dealt by content")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    rows = relabel(
        real_papers(), args.venues, args.papers, _years(args.years), args.focus, args.seed
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows.to_parquet(args.out, index=False)
    counts = rows["venue"].str.rsplit(" ", n=1).str[0].value_counts()
    print(
        f"wrote {args.out}: {len(rows):,} papers, {len(counts)} venues, "
        f"{rows['year'].nunique()} years"
    )


if __name__ == "__main__":
    main()

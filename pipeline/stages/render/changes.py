"""The report's "What changed" section, as plain data: since the fit of the topics (the topics
that fit made against the previous fit's, split, merged or retired ones and where their papers
went, and those born since among added papers), since the previous build (model/snapshots.parquet,
cluster/snapshots.py), and in the latest year against the earlier ones (venue_years.parquet).

A topic grew or shrank beyond chance when its share of the papers now differs from its share
then by |z| >= compare's z_threshold, z being compare's weighted log-odds (log_odds.log_odds_z)
of the two counts (now, then) of every topic, the unassigned papers included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.log_odds import log_odds_z

TOP = 3  # topics listed as rising, and as falling, most in the latest year
GONE = ("split", "merged", "retired")
HOW = {  # how a topic made at or since the fit came to be (the registry's `made`)
    "new": "new at the fit",
    "split": "split off at the fit from",
    "merged": "merged at the fit from",
    "emerged": "born since the fit",
}


@dataclass(frozen=True)
class Odds:
    """compare's log-odds settings: the prior's scale and the |z| that marks a difference."""

    prior_scale: float
    z_threshold: float


@dataclass(frozen=True)
class Fit:
    """What the clusters table's notes say of the model that placed it."""

    fit_id: str
    fitted_at: str | None = None
    papers_at_fit: int | None = None

    @classmethod
    def of(cls, notes: dict | None) -> Fit | None:
        if not notes or not notes.get("fit_id"):
            return None
        papers = notes.get("papers_at_fit")
        return cls(
            str(notes["fit_id"]), notes.get("fitted_at"), None if papers is None else int(papers)
        )


def growth(then: pd.Series, now: pd.Series, odds: Odds) -> pd.DataFrame:
    """Per topic (every one of either, unassigned included): its papers then and now, their
    shares of all papers then and now, and z, the log-odds of its share now against then."""
    ids = sorted(set(then.index) | set(now.index))
    counts = np.column_stack(
        [then.reindex(ids, fill_value=0).to_numpy(), now.reindex(ids, fill_value=0).to_numpy()]
    ).astype(float)
    z = log_odds_z(counts, odds.prior_scale)[:, 1]
    totals = counts.sum(axis=0)
    totals[totals == 0] = 1
    return pd.DataFrame(
        {
            "topic": ids,
            "then": counts[:, 0].astype(int),
            "now": counts[:, 1].astype(int),
            "then_share": counts[:, 0] / totals[0],
            "now_share": counts[:, 1] / totals[1],
            "z": np.nan_to_num(z, nan=0.0),
        }
    )


def _moved(table: pd.DataFrame, labels: dict[int, str]) -> list[dict]:
    return [
        {
            "id": int(r.topic),
            "label": labels.get(int(r.topic), f"Topic {int(r.topic)}"),
            "then": int(r.then),
            "now": int(r.now),
            "then_share": float(r.then_share),
            "now_share": float(r.now_share),
            "z": float(r.z),
        }
        for r in table.itertuples()
    ]


def beyond_chance(table: pd.DataFrame, labels: dict[int, str], odds: Odds) -> dict[str, list]:
    """The topics (held then and now: those born or gone are listed as such) whose share grew,
    and shrank, beyond chance, the largest |z| first."""
    held = table[(table["topic"] >= 0) & (table["then"] > 0) & (table["now"] > 0)]
    grew = held[held["z"] >= odds.z_threshold].sort_values("z", ascending=False)
    shrank = held[held["z"] <= -odds.z_threshold].sort_values("z")
    return {"grew": _moved(grew, labels), "shrank": _moved(shrank, labels)}


def editions(papers: pd.DataFrame) -> str:
    """Where a topic's papers appeared: 'ICLR 2026 (3), ICML 2025 (1)', most first."""
    year = papers["year"].map(lambda y: "" if pd.isna(y) else f" {int(y)}")
    counts = (papers["venue"] + year).value_counts()
    order = sorted(counts.index, key=lambda e: (-counts[e], e))
    return ", ".join(f"{e} ({counts[e]})" for e in order)


def _born_row(topic: int, frame: pd.DataFrame, labels: dict, registry: pd.DataFrame | None) -> dict:
    """A topic born: its label, papers, where they appeared and how the registry says it was
    made (`made`: its registry's `made`, "" where it has none)."""
    papers = frame[frame["topic"] == topic]
    row = _registry_row(registry, topic)
    made = "" if row is None else str(row["made"])
    how = ""
    if row is not None and made != "fit":
        parents = ", ".join(f"#{int(p)}" for p in row["parents"])
        how = f"{HOW.get(made, made)} {parents}".strip()
    return {
        "id": topic,
        "label": labels.get(topic, f"Topic {topic}"),
        "papers": len(papers),
        "editions": editions(papers),
        "made": made,
        "how": how,
    }


def _registry_row(registry: pd.DataFrame | None, topic: int) -> pd.Series | None:
    if registry is None or not (registry["topic"] == topic).any():
        return None
    return registry[registry["topic"] == topic].iloc[0]


def _gone_row(topic: int, registry: pd.DataFrame | None, labels: dict) -> dict:
    """A topic no longer held: how it ended and where its papers went (the registry's)."""
    row = _registry_row(registry, topic)
    label = (row["label"] if row is not None else "") or labels.get(topic, f"Topic {topic}")
    successors = [] if row is None else [int(s) for s in row["successors"]]
    return {
        "id": topic,
        "label": label,
        "status": "gone" if row is None else str(row["status"]),
        "successors": [{"id": s, "label": labels.get(s, f"Topic {s}")} for s in successors],
    }


def _part(key: str, added: int, born: list, gone: list, moved: dict) -> dict:
    return {"key": key, "added": added, "born": born, "gone": gone, **moved}


def made_since(
    registry: pd.DataFrame | None, fitted_as: str, at_fit: pd.Series | None, now: pd.Index
) -> list[int]:
    """The topics held now that the fit made against the previous fit's (the registry's `made`
    new, split or merged by the model `fitted_as`) or that were born since (held now, not at
    the fit: numbers are never reused; without the fit's snapshot, those the registry says
    emerged in the model `fitted_as`)."""
    found = set()
    if registry is not None:
        active = registry[(registry["status"] == "active") & registry["topic"].isin(now)]
        found |= set(
            active.loc[(active["made"] != "fit") & (active["made_in"] == fitted_as), "topic"]
        )
    if at_fit is not None:
        found |= {t for t in now if t >= 0 and t not in at_fit.index}
    return sorted(int(t) for t in found)


def since_fit(
    frame: pd.DataFrame,
    labels: dict[int, str],
    registry: pd.DataFrame | None,
    fit: Fit,
    at_fit: tuple[pd.Series | None, str],
    odds: Odds,
) -> dict | None:
    """What the fit made against the previous fit's topics and what changed since: the topics
    it made (new, split, merged) or that were born since, those it ended, the topics that grew
    or shrank beyond chance since it and the papers added since. `at_fit`: each topic's papers
    at the fit (None when not known) and the fit_id the model had then. None when nothing
    changed."""
    then, fitted_as = at_fit
    now = frame["topic"].astype(int).value_counts()
    made = made_since(registry, fitted_as, then, now.index)
    born = [_born_row(t, frame, labels, registry) for t in made]
    gone = []
    if registry is not None:
        ended = registry[(registry["changed_in"] == fitted_as) & registry["status"].isin(GONE)]
        gone = [_gone_row(int(t), registry, labels) for t in sorted(ended["topic"])]
    papers_then = fit.papers_at_fit if fit.papers_at_fit is not None else len(frame)
    moved = {"grew": [], "shrank": []}
    if then is not None:
        papers_then = int(then.sum())
        moved = beyond_chance(growth(then, now, odds), labels, odds)
    added = len(frame) - papers_then
    if not (born or gone or added or moved["grew"] or moved["shrank"]):
        return None
    return _part("fit", added, born, gone, moved)


def since_build(
    frame: pd.DataFrame,
    labels: dict[int, str],
    registry: pd.DataFrame | None,
    then: pd.Series,
    odds: Odds,
) -> dict | None:
    """What changed since the previous build whose topics differed (`then`: each topic's
    papers in it): the topics born and gone since, those that grew or shrank beyond chance and
    the papers added. None when its topics held what they hold now."""
    now = frame["topic"].astype(int).value_counts()
    if then.sort_index().equals(now.sort_index()):
        return None
    new = [int(t) for t in sorted(now.index) if t >= 0 and t not in then.index]
    born = [_born_row(t, frame, labels, registry) for t in new]
    ended = [int(t) for t in sorted(then.index) if t >= 0 and t not in now.index]
    gone = [_gone_row(t, registry, labels) for t in ended]
    moved = beyond_chance(growth(then, now, odds), labels, odds)
    return _part("build", len(frame) - int(then.sum()), born, gone, moved)


def _marked(moved: list[dict], odds: Odds) -> list[dict]:
    """`moved` with `beyond`: whether each one's |z| reaches the threshold."""
    return [{**m, "beyond": abs(m["z"]) >= odds.z_threshold} for m in moved]


def latest_year(
    venue_years: pd.DataFrame | None, labels: dict[int, str], odds: Odds
) -> dict | None:
    """The latest year against the earlier ones together (venue_years' topic rows, every venue):
    the topics whose share rose, and fell, most (by z; `beyond`: |z| >= the threshold) and
    those first seen in it. None with fewer than two years."""
    if venue_years is None:
        return None
    rows = venue_years[venue_years["level"] == "topic"]
    years = sorted(int(y) for y in rows["year"].unique())
    if len(years) < 2:
        return None
    latest = years[-1]
    then = rows[rows["year"] < latest].groupby("id")["count"].sum()
    now = rows[rows["year"] == latest].groupby("id")["count"].sum()
    table = growth(then, now, odds)
    table = table[table["topic"] >= 0]
    rose = table[(table["z"] > 0) & (table["now"] > 0)].sort_values(
        ["z", "topic"], ascending=[False, True]
    )
    fell = table[table["z"] < 0].sort_values(["z", "topic"])
    first = table[(table["then"] == 0) & (table["now"] > 0)].sort_values("topic")
    return {
        "latest": latest,
        "earlier": f"{years[0]}" if len(years) == 2 else f"{years[0]}–{years[-2]}",
        "papers": int(now.sum()),
        "earlier_papers": int(then.sum()),
        "rose": _marked(_moved(rose.head(TOP), labels), odds),
        "fell": _marked(_moved(fell.head(TOP), labels), odds),
        "first_seen": _moved(first, labels),
    }


def snapshot(snapshots: pd.DataFrame | None, kind: str) -> tuple[pd.Series | None, str]:
    """(topic -> papers, the model's fit_id then) of one snapshot, or (None, "")."""
    rows = None if snapshots is None else snapshots[snapshots["snapshot"] == kind]
    if rows is None or rows.empty:
        return None, ""
    papers = pd.Series(rows["papers"].astype(int).to_numpy(), index=rows["topic"].astype(int))
    return papers, str(rows["fit_id"].iloc[0])


def _key(part: dict) -> tuple:
    lists = (tuple(r["id"] for r in part[k]) for k in ("born", "gone", "grew", "shrank"))
    return (part["added"], *lists)


def changes_context(
    frame: pd.DataFrame,
    topics: pd.DataFrame,
    registry: pd.DataFrame | None,
    snapshots: pd.DataFrame | None,
    notes: dict | None,
    venue_years: pd.DataFrame | None,
    odds: Odds,
) -> dict | None:
    """The section's data: `parts` (since the fit, since the previous build: the latter left
    out when it says what the former says), the latest year's lines, a one-line `note` where
    nothing changed, and `new`, the topics born in either part. None without a fit (the
    clusters table's `notes`) and without several years."""
    labels = dict(zip(topics["topic"].astype(int), topics["label"], strict=True))
    fit = Fit.of(notes)
    years = latest_year(venue_years, labels, odds)
    if fit is None and years is None:
        return None
    part = None
    if fit is not None:
        at_fit, fitted_as = snapshot(snapshots, "fit")
        then = (at_fit, fitted_as or fit.fit_id)
        part = since_fit(frame, labels, registry, fit, then, odds)
    before, _ = snapshot(snapshots, "build")
    build = None if before is None else since_build(frame, labels, registry, before, odds)
    if part is not None and build is not None and _key(part) == _key(build):
        part, build = {**part, "also_build": True}, None
    parts = [p for p in (part, build) if p is not None]
    note = None
    if not parts and fit is not None:
        earlier = before is not None or (
            registry is not None and (registry["change"] != "fit").any()
        )
        note = "nothing" if earlier else "first"
    return {
        "fit": fit,
        "parts": parts,
        "years": years,
        "note": note,
        "new": sorted({r["id"] for p in parts for r in p["born"]}),
    }


def gone_topics(registry: pd.DataFrame | None, labels: dict[int, str]) -> list[dict]:
    """The map's topics no longer held (split, merged, retired): label, how it ended and the
    topics its papers went to (ids), so a link to one says where its papers are now."""
    if registry is None:
        return []
    ended = registry[registry["status"].isin(GONE)].sort_values("topic")
    return [
        {
            "id": int(row.topic),
            "label": row.label or labels.get(int(row.topic), f"Topic {int(row.topic)}"),
            "status": str(row.status),
            "successors": [int(s) for s in row.successors],
        }
        for row in ended.itertuples()
    ]

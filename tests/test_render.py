"""Render stage: the report and map pages, nearest neighbours, venue shares, escaping, size."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from synthetic_corpus import corpus

from pipeline import render, tables
from pipeline.config import RenderConfig
from pipeline.errors import PipelineError
from pipeline.render import (
    Extras,
    comparison_order,
    render_pages,
    script_json,
    short_title,
    venue_chart,
    venue_marks,
    venue_shares,
    venue_totals,
)

HOSTILE_TITLE = "<script>alert(1)</script>"
HOSTILE_ABSTRACT = "An abstract that ends early </script><img src=x onerror=alert(1)> and goes on"
# plotly.js's convertEntities decodes only these named entities (plus numeric ones)
PLOTLY_ENTITIES = {"mu", "amp", "lt", "gt", "nbsp", "times", "plusmn", "deg"}
LOCAL_FILES = {"plotly.min.js", "map.js", "report.js", "style.css", "index.html", "map.html"}


def _embeddings(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    vectors = np.random.default_rng(seed).normal(size=(n, 8)).astype(np.float32)
    return [f"p{i}" for i in range(n)], vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _pages(*frames, **kwargs) -> dict[str, str]:
    documents = frames[0]
    kwargs.setdefault("embeddings", _embeddings(len(documents)))
    return render_pages(*frames, RenderConfig(), **kwargs)


def _map_json(page: str) -> dict:
    match = re.search(
        r'<script type="application/json" id="paper-data">(.*?)</script>', page, flags=re.S
    )
    assert match, "map page lacks its paper data"
    return json.loads(match.group(1))


def _frames(titles=None, abstracts=None):
    venues = ["ICML", "ICML", "ICML", "ICLR", "ICLR"]
    n = len(venues)
    titles = titles or ["Sliced Wasserstein", None, "Message passing", "GNN depth", None]
    abstracts = abstracts or [f"Abstract number {i} with a few words in it." for i in range(n)]
    documents = pd.DataFrame(
        {
            "doc_id": [f"p{i}" for i in range(n)],
            "venue": venues,
            "year": [2025] * n,
            "title": pd.Series(titles, dtype=object),
            "abstract": abstracts,
            "source": ["a.txt"] * n,
            "source_id": pd.Series([None] * n, dtype=object),
            "url": pd.Series([None] * n, dtype=object),
        }
    )
    clusters = pd.DataFrame(
        {
            "doc_id": [f"p{i}" for i in range(n)][::-1],
            "topic": np.array([-1, 1, 0, 0, 1][::-1], dtype=np.int32),
            "x": np.array([0.0, 1.0, 2.0, 10.0, 4.0], dtype=np.float32),
            "y": np.array([0.5, 1.5, 2.5, 3.5, -4.5], dtype=np.float32),
        }
    )
    topics = pd.DataFrame(
        {
            "topic": np.array([-1, 0, 1], dtype=np.int32),
            "label": ["Unassigned", "optimal transport, wasserstein", "graph, message passing"],
            "terms": [["noise"], ["optimal transport", "wasserstein"], ["graph", "message"]],
            "size": np.array([1, 2, 2], dtype=np.int32),
            "count_ICLR": np.array([0, 1, 1], dtype=np.int32),
            "count_ICML": np.array([1, 1, 1], dtype=np.int32),
        }
    )
    return documents, clusters, topics


# ---------------------------------------------------------------- the pages


def _references(page: str) -> list[str]:
    return re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]+)""", page, flags=re.I)


def test_pages_load_only_files_from_their_folder():
    pages = _pages(*_frames())
    assert sorted(pages) == ["index.html", "map.html"]
    for name, page in pages.items():
        scripts = re.findall(r"<script\b[^>]*\bsrc\s*=\s*\"([^\"]+)\"", page, flags=re.I)
        expected = ["plotly.min.js", "report.js" if name == "index.html" else "map.js"]
        assert scripts == expected, name
        for ref in _references(page):
            local = ref.split("#")[0]
            assert not re.match(r"^[a-z][a-z0-9+.-]*:|^//", ref, flags=re.I), (name, ref)
            assert local in LOCAL_FILES | {""}, (name, ref)
    index = pages["index.html"]
    assert '<div id="venue-chart"' in index and '<table id="topics"' in index
    assert 'href="map.html"' in index and 'href="map.html#view=combined"' in index
    assert '<div id="topic-map">' in pages["map.html"]


def test_map_page_embeds_every_paper_once_with_five_neighbours():
    documents, clusters, topics = _frames()
    data = _map_json(_pages(documents, clusters, topics)["map.html"])
    papers = data["papers"]
    assert papers["id"] == sorted(documents["doc_id"])
    assert data["venues"] == ["ICLR", "ICML"]
    by_id = clusters.set_index("doc_id")
    assert papers["x"] == [round(float(by_id.loc[d, "x"]), 3) for d in papers["id"]]
    assert papers["topic"] == [int(by_id.loc[d, "topic"]) for d in papers["id"]]
    venue_of = dict(zip(documents["doc_id"], documents["venue"], strict=True))
    assert [data["venues"][v] for v in papers["venue"]] == [venue_of[d] for d in papers["id"]]
    # five papers only: each has the four others as neighbours, best first, never itself
    for i, (nn, sims) in enumerate(zip(papers["nn"], papers["nn_sim"], strict=True)):
        assert sorted(nn) == sorted(set(range(5)) - {i})
        assert sims == sorted(sims, reverse=True)
    assert [t["id"] for t in data["topics"]] == [0, 1, -1]  # unassigned last
    assert data["themes"] == []


def test_untitled_papers_fall_back_to_opening_words():
    abstract = " ".join(f"w{i}" for i in range(1, 41))
    assert short_title(None, abstract, 16).split() == [f"w{i}" for i in range(1, 17)] + ["…"]
    assert short_title("  ", abstract, 16) == short_title(None, abstract, 16)
    assert short_title(None, "one two three", 3) == "one two three"  # exactly n: no ellipsis
    assert short_title("A & B", abstract, 16) == "A & B"  # plain text: escaped where shown


def test_hostile_title_and_abstract_stay_text_in_both_pages():
    documents, clusters, topics = _frames(
        titles=["Sliced Wasserstein", None, HOSTILE_TITLE, "GNN depth", None],
        abstracts=[
            "Plain abstract.",
            HOSTILE_ABSTRACT,  # p1 and p2 are in topic 1 and 0: both are representatives
            "Another plain abstract.",
            "Third plain abstract.",
            "Fourth plain abstract.",
        ],
    )
    topics.loc[topics["topic"] == 0, "label"] = "<b onmouseover=alert(1)>label</b>"
    pages = _pages(documents, clusters, topics)
    for name, page in pages.items():
        assert HOSTILE_TITLE not in page, name
        assert "alert(1)</script>" not in page and "<img src=x" not in page, name
        assert "<b onmouseover" not in page, name
        # every </script> closes one of the page's own script elements
        assert page.count("</script>") == len(re.findall(r"<script\b", page)), name
    data = _map_json(pages["map.html"])  # and the JSON still holds the text unchanged
    assert HOSTILE_TITLE in data["papers"]["title"]
    assert HOSTILE_ABSTRACT in data["papers"]["abstract"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages["index.html"]  # a representative


def test_script_json_cannot_close_its_element():
    text = script_json({"a": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}


def test_only_web_urls_become_links():
    documents, clusters, topics = _frames()
    documents["url"] = [
        "https://openreview.net/forum?id=1",
        "javascript:alert(1)",
        " data:text/html,<b>x</b>",
        None,
        "HTTP://example.org/paper",
    ]
    papers = _map_json(_pages(documents, clusters, topics)["map.html"])["papers"]
    assert dict(zip(papers["id"], papers["url"], strict=True)) == {
        "p0": "https://openreview.net/forum?id=1",
        "p1": None,
        "p2": None,
        "p3": None,
        "p4": "HTTP://example.org/paper",
    }


def test_without_embeddings_papers_have_no_neighbours_but_the_pages_render():
    pages = render_pages(*_frames(), RenderConfig())
    assert _map_json(pages["map.html"])["papers"]["nn"] == [[]] * 5
    assert '<table id="topics"' in pages["index.html"]


def test_embeddings_missing_a_paper_is_refused():
    doc_ids, vectors = _embeddings(5)
    with pytest.raises(PipelineError, match="embeddings lack 1 clustered paper"):
        _pages(*_frames(), embeddings=(doc_ids[:4], vectors[:4]))


def test_smallest_allowed_point_size_renders():
    page = render_pages(*_frames(), RenderConfig(point_size=1))["map.html"]
    assert _map_json(page)["point_size"] == 1


def test_topics_missing_a_clustered_topic_is_refused():
    documents, clusters, topics = _frames()
    with pytest.raises(PipelineError, match=r"lacks topic\(s\) \[1\]"):
        _pages(documents, clusters, topics[topics["topic"] != 1])


def test_same_inputs_give_identical_html():
    first = _pages(*_frames())
    second = _pages(*_frames())
    assert first == second
    for page in first.values():
        assert "5 papers (ICLR 2, ICML 3) in 2 topics; 1 papers (20.0%) left unassigned." in page


def test_one_paper_and_one_venue_still_render():
    documents, clusters, topics = _frames()
    keep = documents["doc_id"] == "p2"
    documents = documents[keep].reset_index(drop=True)
    clusters = clusters[clusters["doc_id"] == "p2"].reset_index(drop=True)
    topics = pd.DataFrame(
        {
            "topic": np.array([0], dtype=np.int32),
            "label": ["message passing"],
            "terms": [["message passing"]],
            "size": np.array([1], dtype=np.int32),
            "count_ICML": np.array([1], dtype=np.int32),
        }
    )
    pages = render_pages(documents, clusters, topics, RenderConfig(), (["p2"], np.ones((1, 4))))
    assert _map_json(pages["map.html"])["papers"]["nn"] == [[]]
    assert "One venue only" in pages["index.html"]


# ---------------------------------------------------------------- venue comparison


def test_venue_shares_are_normalised_by_venue_size_and_sorted_by_difference():
    _, _, topics = _frames()
    totals = venue_totals(topics)
    assert totals == {"ICLR": 2, "ICML": 3}
    shares = venue_shares(topics[topics["topic"] >= 0], totals)
    by = {(r["id"], r["venue"]): r["share"] for r in shares.to_dict("records")}
    assert by[(0, "ICLR")] == pytest.approx(1 / 2) and by[(0, "ICML")] == pytest.approx(1 / 3)
    assert set(shares["mark"]) == {0} and shares["z"].isna().all()
    skewed = pd.DataFrame(
        {
            "topic": [0, 1, 2],
            "label": ["a", "b", "c"],
            "count_ICLR": [10, 50, 40],
            "count_ICML": [60, 20, 20],
        }
    )
    shares = venue_shares(skewed, {"ICLR": 100, "ICML": 100})
    assert comparison_order(shares) == [1, 2, 0]  # most ICLR-leaning first


def test_venue_marks_read_the_usual_layouts():
    long = pd.DataFrame(
        {
            "level": ["topic", "topic", "theme"],
            "id": [0, 1, 0],
            "venue": ["ICLR", "ICLR", "ICLR"],
            "z": [3.2, -0.5, -2.5],
        }
    )
    assert venue_marks(long, "topic") == {(0, "ICLR"): (3.2, 1), (1, "ICLR"): (-0.5, 0)}
    assert venue_marks(long, "theme") == {(0, "ICLR"): (-2.5, -1)}
    flagged = pd.DataFrame(
        {"topic": [4, 5], "venue": ["ICML", "ICML"], "z_score": [1.0, 5.0], "flag": ["under", ""]}
    )
    assert venue_marks(flagged) == {(4, "ICML"): (1.0, -1), (5, "ICML"): (5.0, 1)}
    tested = pd.DataFrame(
        {"topic": [1, 2], "venue": ["A", "A"], "z": [2.5, -3.0], "significant": [False, True]}
    )
    assert venue_marks(tested) == {(1, "A"): (2.5, 0), (2, "A"): (-3.0, -1)}
    assert venue_marks(None) == {} and venue_marks(pd.DataFrame({"venue": ["A"]})) == {}


def test_venue_chart_marks_significant_differences():
    _, _, topics = _frames()
    marks = {(0, "ICLR"): (3.0, 1), (0, "ICML"): (-3.0, -1)}
    shares = venue_shares(topics[topics["topic"] >= 0], venue_totals(topics), marks)
    fig = venue_chart(shares).to_dict()
    names = [t.get("name") for t in fig["data"]]
    venues = [t for t in fig["data"] if t.get("name") in ("ICLR", "ICML")]
    assert [t["name"] for t in venues] == ["ICLR", "ICML"]
    for trace in venues:
        outlined = dict(zip(trace["y"], trace["marker"]["line"]["width"], strict=True))
        assert sorted(outlined.values()) == [0, 2]  # the marked topic's dot is outlined
    assert "significant difference" in names
    assert any(text.startswith("<b>") for text in fig["layout"]["yaxis"]["ticktext"])


# ---------------------------------------------------------------- themes, figures, marks


def test_report_shows_themes_figures_and_marks_when_present():
    documents, clusters, topics = _frames()
    topics["theme"] = np.array([-1, 0, 0], dtype=np.int32)
    topics["theme_label"] = [None, "learning <theory>", "learning <theory>"]
    extras = Extras(
        metrics={"n_topics": 2, "outlier_share": 0.2, "npmi": {"0": 0.1, "1": 0.3}},
        baseline={"n_topics": 5, "outlier_share": 0.238},
        stability={"ari": 0.91},
        venue_topics=pd.DataFrame(
            {"level": ["topic", "topic"], "id": [0, 0], "venue": ["ICLR", "ICML"], "z": [2.5, -2.5]}
        ),
    )
    pages = _pages(documents, clusters, topics, extras=extras)
    index = pages["index.html"]
    assert '<table id="themes"' in index and "learning &lt;theory&gt;" in index
    assert '<div id="theme-chart"' in index and '<div id="venue-chart"' in index
    assert '<table id="quality"' in index and "BERTopic defaults" in index
    assert "npmi (mean of 2)" in index and "stability · ari" in index
    assert "<td class='num'>20.0%</td><td class='num'>23.8%</td>" in index  # shares as percents
    assert 'class="mark over"' in index and 'class="mark under"' in index
    assert "in 2 topics (1 themes)" in index
    data = _map_json(pages["map.html"])
    # the theme's label sits at the median of its four papers
    theme = {"id": 0, "label": "learning <theory>", "size": 4, "x": 1.5, "y": 2.0}
    assert data["themes"] == [theme]
    assert {t["id"]: t["theme"] for t in data["topics"]} == {0: 0, 1: 0, -1: None}


def test_report_without_optional_files_has_no_marks_themes_or_figures():
    index = _pages(*_frames())["index.html"]
    assert '<table id="themes"' not in index and '<table id="quality"' not in index
    assert "mark over" not in index and "No significance test in this build" in index


def test_representative_papers_link_to_the_map():
    documents, clusters, topics = _frames()
    index = _pages(documents, clusters, topics)["index.html"]
    for doc_id in clusters.loc[clusters["topic"] >= 0, "doc_id"]:
        assert f'href="map.html#paper={doc_id}"' in index
    topics["representative_docs"] = [[], ["p2", "not an id"], ["p3"]]
    index = _pages(documents, clusters, topics)["index.html"]
    assert 'href="map.html#paper=p2"' in index and "<li>not an id</li>" in index
    assert 'href="map.html#paper=p0"' not in index


# ---------------------------------------------------------------- size and run()


def test_3401_papers_fit_in_12_mb():
    """The real corpus's size: the pages, plotly.js and the assets stay within 12 MB."""
    from plotly.offline import get_plotlyjs

    synthetic = corpus(3401, themes=True)
    extras = Extras(synthetic.metrics, synthetic.baseline, None, synthetic.venue_topics)
    pages = render_pages(
        synthetic.documents,
        synthetic.clusters,
        synthetic.topics,
        RenderConfig(),
        synthetic.embeddings,
        extras,
    )
    total = sum(len(p.encode()) for p in pages.values())
    total += len(get_plotlyjs().encode())
    total += sum((render.ASSETS_DIR / name).stat().st_size for name in render.ASSETS)
    assert total <= 12_000_000, f"{total / 1e6:.1f} MB"
    assert len(pages["index.html"].encode()) < 500_000  # abstracts live in the map page only
    assert len(_map_json(pages["map.html"])["papers"]["id"]) == 3401


def test_run_writes_pages_assets_and_reads_optional_files(tmp_path: Path):
    documents, clusters, topics = _frames()
    doc_ids, vectors = _embeddings(5)
    tables.write_table(documents, tmp_path / "documents.parquet", tables.DOCUMENTS)
    tables.write_embeddings(doc_ids, vectors, tmp_path / "embeddings.parquet")
    tables.write_table(clusters, tmp_path / "clusters.parquet", tables.CLUSTERS)
    tables.write_table(topics, tmp_path / "topics.parquet", tables.TOPICS)
    out = tmp_path / "out"
    out.mkdir()
    (out / "metrics.json").write_text(json.dumps({"topic_diversity": 0.875}), encoding="utf-8")
    render.run(
        RenderConfig(),
        tmp_path / "documents.parquet",
        tmp_path / "embeddings.parquet",
        tmp_path / "clusters.parquet",
        tmp_path / "topics.parquet",
        out / "index.html",
    )
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(LOCAL_FILES | {"metrics.json"})
    assert (out / "map.js").read_bytes() == (render.ASSETS_DIR / "map.js").read_bytes()
    assert "topic diversity" in (out / "index.html").read_text(encoding="utf-8")
    (out / "metrics.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(PipelineError, match="metrics.json: not readable JSON"):
        render.run(
            RenderConfig(),
            tmp_path / "documents.parquet",
            tmp_path / "embeddings.parquet",
            tmp_path / "clusters.parquet",
            tmp_path / "topics.parquet",
            out / "index.html",
        )

"""Render stage: the offline report page, the per-venue map and escaping of paper text."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from pipeline.config import RenderConfig
from pipeline.errors import PipelineError
from pipeline.render import hover_title, map_figure, map_frame, render_page

HOSTILE_TITLE = "<script>alert(1)</script>"
HOSTILE_ABSTRACT = "An abstract that ends early </script><img src=x onerror=alert(1)> and goes on"
# plotly.js's convertEntities decodes only these named entities (plus numeric ones)
PLOTLY_ENTITIES = {"mu", "amp", "lt", "gt", "nbsp", "times", "plusmn", "deg"}


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


def _scatter_traces(fig) -> list[dict]:
    return [t for t in fig.to_dict()["data"] if t["type"] == "scatter"]


def test_page_loads_only_local_plotly():
    page = render_page(*_frames(), RenderConfig())
    scripts = re.findall(r"<script\b[^>]*>", page, flags=re.I)
    with_src = [s for s in scripts if re.search(r"\bsrc\s*=", s, flags=re.I)]
    assert with_src == ['<script src="plotly.min.js">']
    srcs = re.findall(r"""\bsrc\s*=\s*["']?([^"'\s>]+)""", page, flags=re.I)
    assert srcs == ["plotly.min.js"]
    assert not any(s.startswith(("http://", "https://", "//")) for s in srcs)
    assert not any("cdn" in s.lower() for s in with_src)
    assert '<div id="topic-map"' in page and '<div id="venue-chart"' in page
    assert '<table id="topics">' in page


def test_map_has_one_panel_per_venue_and_every_paper():
    documents, clusters, topics = _frames()
    fig = map_figure(map_frame(documents, clusters, topics, RenderConfig()), RenderConfig())
    layout = fig.to_dict()["layout"]
    assert sorted(k for k in layout if k.startswith("xaxis")) == ["xaxis", "xaxis2"]
    titles = [a["text"] for a in layout["annotations"]]
    assert titles == ["ICLR (2 papers)", "ICML (3 papers)"]
    traces = _scatter_traces(fig)
    assert sum(len(t["x"]) for t in traces) == len(documents)
    per_panel = {}
    for t in traces:
        per_panel[t["xaxis"]] = per_panel.get(t["xaxis"], 0) + len(t["x"])
    assert per_panel == {"x": 2, "x2": 3}  # ICLR first (sorted), then ICML
    # coordinates are the cluster table's, not re-derived
    xs = sorted(x for t in traces for x in t["x"])
    assert xs == sorted(clusters["x"].round(4).tolist())


def test_legend_lists_each_topic_once():
    documents, clusters, topics = _frames()
    fig = map_figure(map_frame(documents, clusters, topics, RenderConfig()), RenderConfig())
    traces = _scatter_traces(fig)
    shown = [t["legendgroup"] for t in traces if t.get("showlegend", True)]
    assert sorted(shown) == ["-1", "0", "1"]
    names = [t["name"] for t in traces if t.get("showlegend", True)]
    assert names[-1] == "Unassigned"  # unassigned last
    # every trace of a topic shares its legend group, so one click hides it in every panel
    for t in traces:
        assert t["name"].startswith(f"{t['legendgroup']}:") or t["legendgroup"] == "-1"


def test_venue_panels_share_both_axes():
    documents, clusters, topics = _frames()
    layout = map_figure(
        map_frame(documents, clusters, topics, RenderConfig()), RenderConfig()
    ).to_dict()["layout"]
    for axis in ("x", "y"):
        others = [layout[k] for k in layout if k.startswith(f"{axis}axis") and k != f"{axis}axis"]
        assert others
        for other in others:
            assert other.get("matches") == axis or (
                other.get("range") is not None
                and other.get("range") == layout[f"{axis}axis"].get("range")
            )


def test_hostile_title_and_abstract_are_escaped():
    documents, clusters, topics = _frames(
        titles=[HOSTILE_TITLE, None, "Message passing", "GNN depth", None],
        abstracts=[
            "Plain abstract.",
            HOSTILE_ABSTRACT,
            "Another plain abstract.",
            "Third plain abstract.",
            "Fourth plain abstract.",
        ],
    )
    page = render_page(documents, clusters, topics, RenderConfig())
    assert HOSTILE_TITLE not in page
    assert "alert(1)</script>" not in page
    assert "<img src=x" not in page
    assert "onerror=alert(1)>" not in page
    assert page.count("</script>") == 3  # plotly.min.js + the two figure scripts
    fig = map_figure(map_frame(documents, clusters, topics, RenderConfig()), RenderConfig())
    hovers = [c[0] for t in _scatter_traces(fig) for c in t["customdata"]]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in hovers


def test_hover_title_falls_back_to_opening_words():
    abstract = " ".join(f"w{i}" for i in range(1, 41))
    text = hover_title(None, abstract, 16)
    assert text.replace("<br>", " ").split() == [f"w{i}" for i in range(1, 17)] + ["…"]
    assert hover_title("", abstract, 16) == text
    # exactly n words: no ellipsis; a title wins over the abstract
    assert hover_title(None, "one two three", 3) == "one two three"
    assert hover_title("A & B", abstract, 16) == "A &amp; B"
    # long titles wrap onto lines of at most 60 characters
    long_title = "word " * 30
    assert all(len(line) <= 60 for line in hover_title(long_title, "", 16).split("<br>"))


def test_hover_text_uses_only_entities_plotly_decodes():
    text = hover_title('The "lottery ticket" hypothesis & <pruning>', "", 16)
    for entity in re.findall(r"&(#?\w+);", text):
        assert entity.startswith("#") or entity in PLOTLY_ENTITIES, entity


def test_smallest_allowed_point_size_renders():
    page = render_page(*_frames(), RenderConfig(point_size=1))
    assert "topic-map" in page


def test_topics_missing_a_clustered_topic_is_refused():
    documents, clusters, topics = _frames()
    with pytest.raises(PipelineError, match=r"lacks topic\(s\) \[1\]"):
        render_page(documents, clusters, topics[topics["topic"] != 1], RenderConfig())


def test_same_inputs_give_identical_html():
    first = render_page(*_frames(), RenderConfig())
    second = render_page(*_frames(), RenderConfig())
    assert first.encode() == second.encode()
    assert "5 papers (ICLR 2, ICML 3) in 2 topics; 1 papers (20.0%) left unassigned." in first

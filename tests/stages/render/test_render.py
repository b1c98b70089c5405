"""Render stage: the pages from the stage tables, their data islands, nearest neighbours,
escaping, size, run(). The report's venue figures and themes: test_report.py."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import schemas, tables
from pipeline.colours import MAP_COLOURS
from pipeline.config import CompareConfig, RenderConfig
from pipeline.errors import PipelineError
from pipeline.stages import compare, metrics, quality, render
from pipeline.stages.render import make_pages, mapfiles, templating
from pipeline.stages.render.mapfiles import (
    decode_typed_array,
    read_shard,
    smallest_int,
    typed_array,
)
from pipeline.stages.render.shaping import paper_vectors, short_title
from tests.support import tables as make
from tests.support.build_folder import write_build
from tests.support.map_files import map_papers, shard_names
from tests.support.render_frames import island, rendered, tiny_tables
from tests.support.synthetic_corpus import corpus

HOSTILE_TITLE = "<script>alert(1)</script>"
HOSTILE_ABSTRACT = "An abstract that ends early </script><img src=x onerror=alert(1)> and goes on"
HOSTILE_VENUE = "<b onclick=alert(1)>ICLR</b>"
HOSTILE_PAGE_TITLE = "<i>maps</i> & <script>alert(1)</script>"
LOCAL_FILES = {render.PLOTLY_JS, render.MAP_PLOTLY_JS, *render.ASSETS} | {
    "style.css",
    "index.html",
    "map.html",
}


def _pages(found: dict[str, str]) -> dict[str, str]:
    """The HTML pages among make_pages' files (the rest are the map's text shards)."""
    return {name: text for name, text in found.items() if name.endswith(".html")}


def _references(page: str) -> list[str]:
    return re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]+)""", page, flags=re.I)


# ---------------------------------------------------------------- the pages


def test_pages_load_only_files_from_their_folder():
    found = rendered(tiny_tables())
    assert sorted(_pages(found)) == ["index.html", "map.html"]
    assert sorted(found) == [".render/shards.json", "index.html", "map-data/text-000.js"] + [
        "map-data/text-001.js",  # a shard per topic: 1 unassigned paper, topics 0 and 1
        "map-data/text-002.js",
        "map.html",
    ]  # .render/shards.json: the shards' digests, so a later build reuses unchanged ones
    for name, page in _pages(found).items():
        scripts = re.findall(r"<script\b[^>]*\bsrc\s*=\s*\"([^\"]+)\"", page, flags=re.I)
        expected = (
            ["plotly.min.js", "report.js"]
            if name == "index.html"
            else ["plotly-gl2d.min.js", *render.MAP_SCRIPTS]  # the map: plotly's gl2d bundle
        )
        assert scripts == expected, name
        # no inline code: every other script element is a JSON data island
        others = re.findall(r"<script\b(?![^>]*\bsrc=)([^>]*)>", page)
        assert all('type="application/json"' in o for o in others), (name, others)
        for ref in _references(page):
            assert not re.match(r"^[a-z][a-z0-9+.-]*:|^//", ref, flags=re.I), (name, ref)
            assert ref.split("#")[0] in LOCAL_FILES | {""}, (name, ref)
    index = found["index.html"]
    assert '<div id="venue-chart" class="plot">' in index and '<table id="topics"' in index
    assert 'href="map.html"' in index and 'href="map.html#view=combined"' in index
    assert '<div id="topic-map">' in found["map.html"]


def test_charts_travel_as_figure_data_for_report_js():
    frames = tiny_tables(grouped=True)
    figures = island(rendered(frames)["index.html"], "chart-data")
    assert [f["id"] for f in figures] == ["theme-chart", "venue-chart", "treemap"]
    topic_chart = figures[1]["figure"]
    venues = [t for t in topic_chart["data"] if t.get("name") in ("ICLR", "ICML")]
    assert [len(t["x"]) for t in venues] == [2, 2]  # a dot per assigned topic and venue
    assert topic_chart["layout"]["height"] >= 260
    assert "Plotly.newPlot" in (render.ASSETS_DIR / "report.js").read_text(encoding="utf-8")


def test_map_page_embeds_every_paper_once_with_five_neighbours():
    frames = tiny_tables()
    found = rendered(frames)
    data = island(found["map.html"], "paper-data")
    papers = map_papers(found)
    assert papers["id"] == sorted(frames["documents"]["doc_id"])
    assert data["venues"] == ["ICLR", "ICML"]
    assert data["colours"] == MAP_COLOURS  # the scripts draw with Python's colours only
    by_id = frames["clusters"].set_index("doc_id")
    assert papers["x"] == [float(np.float32(by_id.loc[d, "x"])) for d in papers["id"]]
    assert papers["y"] == [float(np.float32(by_id.loc[d, "y"])) for d in papers["id"]]
    abstracts = frames["documents"].set_index("doc_id")["abstract"]
    assert papers["abstract"] == [abstracts[d] for d in papers["id"]]
    assert papers["topic"] == [int(by_id.loc[d, "topic"]) for d in papers["id"]]
    documents = frames["documents"]
    venue_of = dict(zip(documents["doc_id"], documents["venue"], strict=True))
    assert [data["venues"][v] for v in papers["venue"]] == [venue_of[d] for d in papers["id"]]
    # five papers only: each has the four others as neighbours, best first, never itself
    for i, (nn, sims) in enumerate(zip(papers["nn"], papers["nn_sim"], strict=True)):
        assert sorted(nn) == sorted(set(range(5)) - {i})
        assert sims == sorted(sims, reverse=True)
    assert [t["id"] for t in data["topics"]] == [0, 1, -1]  # unassigned last
    assert [t["size"] for t in data["topics"]] == [2, 2, 1]  # topics.parquet's sizes
    assert data["themes"] == []  # each topic its own theme: no theme level


def test_untitled_papers_fall_back_to_opening_words():
    abstract = " ".join(f"w{i}" for i in range(1, 41))
    assert short_title(None, abstract, 16).split() == [f"w{i}" for i in range(1, 17)] + ["…"]
    assert short_title("  ", abstract, 16) == short_title(None, abstract, 16)
    assert short_title(None, "one two three", 3) == "one two three"  # exactly n: no ellipsis
    assert short_title("A & B", abstract, 16) == "A & B"  # plain text: escaped where shown


def test_hostile_titles_abstracts_labels_and_venues_stay_text():
    frames = tiny_tables(
        titles=["Sliced Wasserstein", None, HOSTILE_TITLE, "GNN depth", None],
        abstracts=[
            "Plain abstract.",
            HOSTILE_ABSTRACT,  # p1 and p2 are representatives of topics 1 and 0
            "Another plain abstract.",
            "Third plain abstract.",
            "Fourth plain abstract.",
        ],
        venues=["ICML", "ICML", "ICML", HOSTILE_VENUE, HOSTILE_VENUE],
        grouped=True,
    )
    frames["topics"].loc[frames["topics"]["topic"] == 0, "label"] = "<i onmouseover=x>t</i>"
    found = rendered(frames, config=RenderConfig(title=HOSTILE_PAGE_TITLE))
    for name, page in found.items():  # the pages and the shards
        assert HOSTILE_TITLE not in page, name
        assert "alert(1)</script>" not in page and "<img src=x" not in page, name
        assert "<b onclick" not in page and "<i onmouseover" not in page, name
        # every </script> closes one of the page's own script elements
        assert page.count("</script>") == len(re.findall(r"<script\b", page)), name
    papers = map_papers(found)  # the shards still hold the text unchanged
    assert HOSTILE_TITLE in papers["title"]
    assert HOSTILE_ABSTRACT in papers["abstract"]
    assert HOSTILE_VENUE in island(found["map.html"], "paper-data")["venues"]
    index = found["index.html"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in index  # a representative paper
    assert "&lt;b onclick=alert(1)&gt;ICLR&lt;/b&gt;" in index  # venue columns, summary
    assert "learning &lt;theory&gt;" in index  # the theme's label
    assert '<th class="num sortable">&lt;b onclick=alert(1)&gt;ICLR&lt;/b&gt;</th>' in index
    title = "&lt;i&gt;maps&lt;/i&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;"  # render.title
    assert f"<title>{title}</title>" in index and f"<h1>{title}</h1>" in index
    assert f"<title>{title} · map</title>" in found["map.html"]
    chart_names = [t.get("name") for c in island(index, "chart-data") for t in c["figure"]["data"]]
    assert "&lt;b onclick=alert(1)&gt;ICLR&lt;/b&gt;" in chart_names  # escaped for plotly


def test_json_islands_cannot_close_their_element():
    text = "</script><!-- & ' \u2028 é"
    island = templating.environment().from_string("{{ value|tojson }}").render(value={"a": text})
    assert "<" not in island and ">" not in island and "&" not in island
    assert json.loads(island) == {"a": text}
    assert "é" in island  # UTF-8 as it is: abstracts keep their size


def test_templates_autoescape_and_python_writes_no_markup():
    env = templating.environment()
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    tag = re.compile(r"<(?:td|tr|th|div|span|a|li|ul|p|table|script|h\d)\b")
    for path in Path(render.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and id(node) not in docstrings:
                text = str(node.value)
                assert not tag.search(text), f"{path.name}:{node.lineno} writes HTML: {text[:60]}"


def test_only_web_urls_become_links():
    frames = tiny_tables()
    frames["documents"]["url"] = [
        "https://openreview.net/forum?id=1",
        "javascript:alert(1)",
        " data:text/html,<b>x</b>",
        None,
        "HTTP://example.org/paper",
    ]
    papers = map_papers(rendered(frames))
    assert dict(zip(papers["id"], papers["url"], strict=True)) == {
        "p0": "https://openreview.net/forum?id=1",
        "p1": None,
        "p2": None,
        "p3": None,
        "p4": "HTTP://example.org/paper",
    }


def test_embeddings_missing_a_paper_is_refused():
    frames = tiny_tables()
    doc_ids, vectors = frames["embeddings"]
    frames["embeddings"] = (doc_ids[:4], vectors[:4])
    with pytest.raises(PipelineError, match="embeddings lack 1 clustered paper"):
        rendered(frames)


def test_smallest_allowed_point_size_renders():
    page = rendered(tiny_tables(), config=RenderConfig(point_size=1))["map.html"]
    assert island(page, "paper-data")["point_size"] == 1


def test_topics_missing_a_clustered_topic_is_refused():
    frames = tiny_tables()
    frames["topics"] = frames["topics"][frames["topics"]["topic"] != 1]
    with pytest.raises(PipelineError, match=r"lacks topic\(s\) \[1\]"):
        rendered(frames)


def test_same_inputs_give_identical_html():
    first = rendered(tiny_tables())
    assert first == rendered(tiny_tables())
    for page in _pages(first).values():
        assert "5 papers (ICLR 2, ICML 3) in 2 topics; 1 papers (20.0%) left unassigned." in page


def test_one_paper_and_one_venue_still_render():
    frames = tiny_tables()
    documents = frames["documents"]
    documents = documents[documents["doc_id"] == "p2"].reset_index(drop=True)
    clusters = frames["clusters"]
    clusters = clusters[clusters["doc_id"] == "p2"].reset_index(drop=True)
    topics = frames["topics"][frames["topics"]["topic"] == 0].assign(size=np.int32(1))
    topics["representative_docs"] = [["p2"]]
    themes = make.themes_of(topics, labels={0: topics["label"].iloc[0]})
    found = make_pages(
        documents,
        (["p2"], np.ones((1, 4), dtype=np.float32)),
        clusters,
        topics,
        themes,
        compare.make_venue_topics(documents, clusters, topics, themes, CompareConfig()),
        metrics.make_metrics(documents, clusters, topics, themes),
        RenderConfig(),
    )
    assert map_papers(found)["nn"] == [[]]
    index = found["index.html"]
    assert "One venue only" in index and "no differences are marked" in index
    assert "1 papers (ICML 1) in 1 topics; 0 papers (0.0%) left unassigned." in index


# ---------------------------------------------------------------- size and run()


@pytest.mark.slow  # renders a corpus the size of the real one (about 10 s on 2 cores)
def test_3401_papers_fit_in_12_mb():
    """The real corpus's size: the pages, plotly.js and the assets stay within 12 MB."""
    from plotly.offline import get_plotlyjs

    synthetic = corpus(3401)
    found = rendered(vars(synthetic))
    total = sum(len(p.encode()) for p in found.values())
    total += len(get_plotlyjs().encode())
    total += sum((render.ASSETS_DIR / name).stat().st_size for name in render.ASSETS)
    assert total <= 12_000_000, f"{total / 1e6:.1f} MB"
    assert len(found["index.html"].encode()) < 500_000  # abstracts live in the map page only
    assert len(map_papers(found)["id"]) == 3401


def _write_inputs(folder: Path, frames: dict) -> dict[str, Path]:
    names = ("documents", "clusters", "topics", "themes")
    years = compare.make_venue_years(*(frames[n] for n in names), CompareConfig())
    written = {n: frames[n] for n in (*names, "venue_topics", "embeddings")}
    paths = write_build(folder, **written, venue_years=years)
    paths["metrics"] = folder / "metrics.json"
    tables.write_json(frames["metrics"], paths["metrics"])
    return paths


def test_run_writes_pages_and_assets_and_reads_the_optional_figures(tmp_path: Path):
    paths = _write_inputs(tmp_path, tiny_tables())
    out = tmp_path / "out"
    stability = tmp_path / "stability.json"
    runs = {1: np.array([0, 0, 1, 1, -1]), 2: np.array([0, 1, 1, 1, -1])}
    tables.write_json(quality.seed_agreement(runs), stability)  # as the stability run writes it
    render.run(RenderConfig(), **paths, report=out / "index.html", stability=stability)
    # the site's files, and the similar papers kept for the next build (render/similar.py)
    assert sorted(p.name for p in out.iterdir()) == sorted(LOCAL_FILES | {"map-data", ".render"})
    assert sorted(f"map-data/{p.name}" for p in (out / "map-data").iterdir()) == shard_names(
        make_pages(**tiny_tables(), config=RenderConfig())
    )
    assert (out / "map.js").read_bytes() == (render.ASSETS_DIR / "map.js").read_bytes()
    # Make's targets (render.PAGE_FILES) are every file written, map-data/ as its first shard
    assert {p.name for p in out.iterdir() if p.is_file()} == {
        name for name in render.PAGE_FILES if "/" not in name
    }
    assert all((out / name).is_file() for name in render.PAGE_FILES)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "topic diversity" in index and "stability · ari min" in index
    stability.write_text("{not json", encoding="utf-8")
    with pytest.raises(PipelineError, match="stability.json: not readable JSON"):
        render.run(RenderConfig(), **paths, report=out / "index.html", stability=stability)


def test_run_refuses_tables_from_different_builds(tmp_path: Path):
    paths = _write_inputs(tmp_path, tiny_tables())
    lineage = tables.make_lineage("cluster", {"documents": "not these documents"})
    clusters = tables.read_table(paths["clusters"], schemas.CLUSTERS)
    tables.write_table(clusters, paths["clusters"], schemas.CLUSTERS, lineage)
    with pytest.raises(PipelineError, match="built from a different"):
        render.run(RenderConfig(), **paths, report=tmp_path / "out" / "index.html")


# ---------------------------------------------------------------- the map's data files


def test_the_map_page_holds_typed_arrays_and_no_paper_text():
    frames = tiny_tables()
    found = rendered(frames)
    page = found["map.html"]
    for abstract in frames["documents"]["abstract"]:
        assert abstract not in page
    papers = island(page, "paper-data")["papers"]
    assert {papers[name]["dtype"] for name in ("x", "y")} == {"float32"}
    assert papers["topic"]["dtype"] == "int16" and papers["venue"]["dtype"] == "uint8"
    assert decode_typed_array(typed_array(np.array([-1, 70_000]), "int32")).tolist() == [
        -1,
        70_000,
    ]
    assert smallest_int(np.array([0, 300])) == "uint16" and smallest_int([-1, 5]) == "int16"


def test_shards_are_scripts_no_text_can_break_out_of():
    frames = tiny_tables(titles=[HOSTILE_TITLE, None, "<!--", "a", "b"])
    found = rendered(frames)
    tokens = island(found["map.html"], "paper-data")["shard_tokens"]
    for number, name in enumerate(shard_names(found)):
        script = found[name]
        assert re.fullmatch(r'topicMapShard\(\d+,"[0-9a-f]{12}","[A-Za-z0-9+/=]*"\);\n', script)
        assert (
            read_shard(script)["number"] == number and read_shard(script)["token"] == tokens[number]
        )
    assert HOSTILE_TITLE in map_papers(found)["title"]


def test_a_separator_inside_a_text_becomes_a_space_and_splits_no_paper():
    frame = pd.DataFrame({"title": ["a\x1fb", None], "abstract": ["one\x1etwo", "three"]})
    files, _ = mapfiles.shard_files(
        frame, [None, None], np.array([0, 0]), np.zeros((2, 1), int), np.zeros((2, 1))
    )
    shard = read_shard(files[mapfiles.shard_path(0)])
    assert shard["title"] == ["a b", None] and shard["abstract"] == ["one two", "three"]


def test_a_topic_is_cut_into_shards_of_at_most_shard_papers(monkeypatch):
    monkeypatch.setattr(mapfiles, "SHARD_PAPERS", 2)
    topics = np.array([1, 1, -1, 1, 0, 1, 1])
    shards = mapfiles.shard_of(topics)
    # unassigned first, then topic 0, then topic 1's five papers in two-paper shards
    assert shards.tolist() == [2, 2, 0, 3, 1, 3, 4]


def test_a_rerun_removes_the_shards_an_earlier_bigger_build_left(tmp_path: Path):
    synthetic = corpus(60, n_topics=6, n_themes=2)
    bigger = rendered(vars(synthetic))
    render.write_files(tmp_path, bigger, "/* plotly */")
    smaller = rendered(tiny_tables())
    render.write_files(tmp_path, smaller, "/* plotly */")
    written = sorted(f"map-data/{p.name}" for p in (tmp_path / "map-data").iterdir())
    assert len(shard_names(bigger)) > len(written) and written == shard_names(smaller)
    for name in written:
        assert (tmp_path / name).read_text(encoding="utf-8") == smaller[name]


def test_the_maps_plotly_bundle_is_the_release_plotly_py_bundles():
    """The map's gl2d bundle (vendored from the npm package plotly.js) and the report's full
    bundle (plotly.py's) are one plotly.js release: upgrading plotly.py means vendoring again."""
    from plotly.offline import get_plotlyjs

    def release(text: str) -> str:
        return re.search(r"plotly\.js (?:\([^)]*\) )?v(\d+\.\d+\.\d+)", text[:400]).group(1)

    gl2d = (render.VENDOR_DIR / render.MAP_PLOTLY_JS).read_text(encoding="utf-8")
    assert "(gl2d - minified)" in gl2d[:200]
    assert release(gl2d) == release(get_plotlyjs())


def test_auto_point_size_shrinks_as_the_map_fills():
    from pipeline.stages.render.shaping import point_size

    sizes = [point_size("auto", n) for n in (76, 4000, 9749, 100_000, 250_000, 1_000_000)]
    assert sizes == [7, 7, 6, 3, 2, 2]
    assert point_size(9, 1_000_000) == 9  # a size set in the config is kept
    page = rendered(tiny_tables())["map.html"]
    assert island(page, "paper-data")["point_size"] == 7


def test_paper_vectors_follow_the_frame_and_are_not_copied_when_in_its_order():
    vectors = np.arange(6, dtype=np.float32).reshape(3, 2)
    frame = pd.DataFrame({"doc_id": ["a", "b", "c"]})
    assert paper_vectors(frame, ["a", "b", "c"], vectors) is vectors
    assert paper_vectors(frame, ["c", "a", "b"], vectors).tolist() == [[2, 3], [4, 5], [0, 1]]
    with pytest.raises(PipelineError, match="embeddings lack 1 clustered paper"):
        paper_vectors(frame, ["a", "b"], vectors[:2])

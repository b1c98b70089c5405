"""The figures stage on small frames: the map's colours, unassigned papers muted beneath, the
themes' or topics' labels at their papers' median and never overlapping, panels per venue on
shared coordinates, a highlighted topic or venue, and the three files: PNG at 300 dpi, SVG with
its labels as text, a PDF, byte-identical from one run to the next."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from pipeline.colours import UNASSIGNED_COLOUR, topic_colours
from pipeline.config import FiguresConfig
from pipeline.errors import PipelineError
from pipeline.labels import theme_level
from pipeline.stages import figures
from pipeline.stages.figures import drawing
from pipeline.stages.figures.shaping import figure_data, layers
from tests.support import tables as make
from tests.support.build_folder import write_build
from tests.support.runs import run_main, write_config


def _corpus(n_topics: int = 6, per_topic: int = 12, spread: float = 4.0) -> dict:
    """Papers in n_topics blobs (two themes of three topics each by default), two venues, a few
    unassigned papers; topic t's blob is centred at (spread * t, t)."""
    rng = np.random.default_rng(0)
    topic = np.repeat(np.arange(n_topics), per_topic)
    topic = np.concatenate([topic, [-1, -1, -1]])
    n = len(topic)
    x = np.where(topic < 0, 1.0, spread * topic) + rng.normal(0, 0.3, n)
    y = np.where(topic < 0, -3.0, topic) + rng.normal(0, 0.3, n)
    doc_ids = [f"p{i:03d}" for i in range(n)]
    ids = [*range(n_topics), -1]
    sizes = [per_topic] * n_topics + [3]
    theme_ids = [t // 3 for t in range(n_topics)] + [-1]
    topics = make.topics(ids, sizes=sizes, themes=theme_ids)
    return {
        "documents": make.documents(
            doc_ids=doc_ids, venues=["ICML", "ICLR"] * (n // 2) + ["ICML"] * (n % 2), years=2024
        ),
        "clusters": make.clusters(doc_ids, topic, x=x, y=y),
        "topics": topics,
        "themes": make.themes_of(topics),
    }


def _label_boxes(figure) -> list:
    """The window boxes of the labels drawn (not the halos beneath them, not the titles)."""
    renderer = figure.canvas.get_renderer()
    return [
        (text.get_text(), text.get_window_extent(renderer))
        for ax in figure.axes
        for text in ax.texts
        if not text.get_path_effects()
    ]


def test_papers_take_the_maps_colours_and_unassigned_ones_are_muted_beneath():
    c = _corpus(n_topics=3)
    data = figure_data(**c, config=FiguresConfig())
    colours = topic_colours(c["topics"], theme_level(c["themes"]))
    points = data.points
    for row in points.itertuples():
        assert row.colour == (UNASSIGNED_COLOUR if row.topic < 0 else colours[row.topic])
    drawn = layers(points, FiguresConfig(), None)
    assert set(drawn[points["topic"].to_numpy() < 0]) == {1}  # under the topics' layer 2
    assert set(drawn[points["topic"].to_numpy() >= 0]) == {2}


def test_theme_labels_by_default_at_their_papers_median_and_topic_labels_as_the_option():
    c = _corpus()
    themes = figure_data(**c, config=FiguresConfig()).labels
    assert sorted(themes["text"]) == ["theme 0", "theme 1"]
    points = figure_data(**c, config=FiguresConfig()).points
    first = points[points["topic"].isin([0, 1, 2])]
    row = themes[themes["text"] == "theme 0"].iloc[0]
    assert (row.x, row.y) == (first["x"].median(), first["y"].median())
    topics = figure_data(**c, config=FiguresConfig(labels="topics")).labels
    assert sorted(topics["text"]) == [f"topic {t}" for t in range(6)]  # no unassigned label
    assert topics["papers"].is_monotonic_decreasing


def test_without_a_theme_level_the_topics_are_labelled():
    c = _corpus(n_topics=3)
    c["topics"] = make.topics([0, 1, 2, -1], sizes=[12, 12, 12, 3])  # each topic its own theme
    c["themes"] = make.themes_of(c["topics"])
    labels = figure_data(**c, config=FiguresConfig()).labels
    assert sorted(labels["text"]) == ["topic 0", "topic 1", "topic 2"]


def test_labels_never_overlap_even_when_their_papers_share_a_place():
    c = _corpus(n_topics=16, per_topic=5, spread=0.05)  # sixteen blobs almost on one spot
    config = FiguresConfig(labels="topics")
    drawn = figures.make_figure(**c, config=config)
    boxes = _label_boxes(drawn)
    assert len(boxes) >= 4, boxes  # moved apart, not all dropped
    for (first, a), (second, b) in combinations(boxes, 2):
        assert not a.overlaps(b), (first, second)


def test_labels_that_cannot_all_fit_leave_the_smaller_out_and_never_overlap():
    """On a 3 x 2 inch plot twenty long labels do not fit: adjustText alone leaves them
    overlapping, and those touching a larger one are left out."""
    c = _corpus(n_topics=20, per_topic=2, spread=0.01)
    words = [f"a rather long label {t}, with words" for t in range(20)]
    c["topics"] = make.topics([*range(20), -1], labels=[*words, "Unassigned"], sizes=[2] * 21)
    c["themes"] = make.themes_of(c["topics"])
    config = FiguresConfig(labels="topics")
    data = figure_data(**c, config=config)
    small = Figure(figsize=(3, 2))
    FigureCanvasAgg(small)
    boxes = drawing._place_labels(small.subplots(), data, config, False)
    assert 1 <= len(boxes) < 20
    for a, b in combinations(boxes, 2):
        assert not a.overlaps(b)
    kept = [t.get_text() for t in small.axes[0].texts if not t.get_path_effects()]
    assert kept[0] == data.labels["text"].iat[0]  # the largest (first) label is kept


def test_long_labels_wrap_and_a_title_comes_from_the_data():
    c = _corpus(n_topics=3)
    long = "graph neural networks, message passing over molecules"
    c["topics"] = make.topics([0, 1, 2, -1], labels=[long, "b c", "d e", "Unassigned"])
    c["themes"] = make.themes_of(c["topics"])
    data = figure_data(**c, config=FiguresConfig(labels="topics"))
    assert "\n" in data.labels.loc[data.labels["text"].str.startswith("graph"), "text"].iat[0]
    assert data.title == "ICLR & ICML 2024 topic map"
    assert figure_data(**c, config=FiguresConfig(title="Mine")).title == "Mine"


def test_one_panel_per_venue_on_shared_coordinates():
    c = _corpus()
    config = FiguresConfig(panels="venue")
    data = figure_data(**c, config=config)
    assert data.panels == ["ICLR", "ICML"]
    drawn = figures.make_figure(**c, config=config)
    panels = [ax for ax in drawn.axes if ax.get_title(loc="left")]
    assert [ax.get_title(loc="left") for ax in panels] == ["ICLR", "ICML"]
    assert panels[0].get_xlim() == panels[1].get_xlim()
    assert panels[0].get_ylim() == panels[1].get_ylim()
    iclr = layers(data.points, config, "ICLR")
    venue = data.points["venue"].to_numpy()
    assert set(iclr[venue == "ICML"]) == {0}  # the other venue's papers muted in its panel
    assert set(iclr[(venue == "ICLR") & (data.points["topic"].to_numpy() >= 0)]) == {2}


def test_a_highlighted_topic_or_venue_keeps_its_colours_and_mutes_the_rest():
    c = _corpus()
    config = FiguresConfig(highlight_topic=4)
    data = figure_data(**c, config=config)
    drawn = layers(data.points, config, None)
    topic = data.points["topic"].to_numpy()
    assert set(drawn[topic == 4]) == {2} and set(drawn[topic != 4]) == {0}
    assert data.subtitle == "Highlighted topic: topic 4"
    assert "topic 4" in set(data.labels["text"])  # its own label beside the themes'
    both = FiguresConfig(highlight_topic=4, highlight_venue="ICLR")
    drawn = layers(data.points, both, None)
    venue = data.points["venue"].to_numpy()
    assert set(drawn[(topic == 4) & (venue == "ICLR")]) == {2}
    assert set(drawn[(topic == 4) & (venue == "ICML")]) == {0}


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ({"highlight_topic": 99}, "figures.highlight_topic: no topic 99 in this build"),
        ({"highlight_venue": "NeurIPS"}, "no venue 'NeurIPS' in this build (venues: ICLR, ICML)"),
    ],
)
def test_a_highlight_the_build_does_not_hold_is_refused_in_one_line(setting, words):
    with pytest.raises(PipelineError) as error:
        figure_data(**_corpus(), config=FiguresConfig(**setting))
    assert words in str(error.value) and "\n" not in str(error.value)


def _run(folder: Path, c: dict, settings: str = "") -> tuple[int, str]:
    """`topicmap figure` on tables written into folder (as one build); exit code, stderr."""
    write_build(folder, **c)
    config = write_config(folder / "c.yaml", ["x.txt"], folder, settings)
    result = run_main("figure", "--config", str(config))
    return result.returncode, result.stderr


def test_the_command_writes_png_svg_and_pdf_the_same_bytes_each_run(tmp_path):
    c = _corpus()
    runs = []
    for name in ("one", "two"):
        code, err = _run(tmp_path / name, c, "figures:\n  panels: venue\n  highlight_topic: 1")
        assert code == 0, err
        runs.append({f: (tmp_path / name / "figures" / f).read_bytes() for f in FILES})
    assert runs[0] == runs[1]
    assert all(runs[0].values())


FILES = ("map.png", "map.svg", "map.pdf")


def test_the_png_is_300_dpi_the_svg_holds_its_labels_as_text_and_the_pdf_is_one(tmp_path):
    code, err = _run(tmp_path, _corpus())
    assert code == 0, err
    folder = tmp_path / "figures"
    with Image.open(folder / "map.png") as png:
        assert png.format == "PNG"
        assert [round(d) for d in png.info["dpi"]] == [300, 300]
        width, height = png.size
    assert (width, height) == (3000, 2700)  # the figure's 10 x 9 inches at 300 dpi
    svg = ET.parse(folder / "map.svg").getroot()
    texts = {"".join(t.itertext()).strip() for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"theme 0", "theme 1", "ICLR & ICML 2024 topic map"} <= texts
    assert b"<image" in (folder / "map.svg").read_bytes()  # the points, rasterised
    pdf = (folder / "map.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-1.") and pdf.rstrip().endswith(b"%%EOF")
    assert b"/Image" in pdf and b"DejaVuSans" in pdf and b"CreationDate" not in pdf


def test_a_bad_setting_is_one_line_and_writes_nothing(tmp_path):
    code, err = _run(tmp_path, _corpus(), "figures:\n  highlight_venue: NeurIPS")
    assert code != 0 and "no venue 'NeurIPS'" in err
    assert "Traceback" not in err
    assert not (tmp_path / "figures" / "map.png").exists()


def test_the_figures_section_is_strict():
    assert FiguresConfig().model_dump() == {
        "dpi": 300,
        "labels": "themes",
        "panels": "none",
        "highlight_topic": None,
        "highlight_venue": None,
        "title": None,
    }
    for bad in ({"labels": "words"}, {"panels": "year"}, {"dpi": 10}, {"colour": "red"}):
        with pytest.raises(ValueError):
            FiguresConfig(**bad)


def test_an_empty_topic_set_draws_the_papers_without_labels():
    c = _corpus(n_topics=1)
    c["clusters"] = c["clusters"].assign(topic=np.int32(-1))
    c["topics"] = make.topics([-1], sizes=[len(c["clusters"])])
    c["themes"] = make.themes_of(c["topics"])
    data = figure_data(**c, config=FiguresConfig())
    assert data.labels.empty and isinstance(data.labels, pd.DataFrame)
    assert _label_boxes(figures.make_figure(**c, config=FiguresConfig())) == []

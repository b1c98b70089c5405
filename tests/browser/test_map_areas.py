"""The map of a large corpus labels three levels: areas seen whole, themes zoomed in a little,
topics zoomed in to half of it."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.browser_site import MAP_READY, render_site
from tests.support.synthetic_corpus import corpus

pytestmark = pytest.mark.browser

ZOOM_TO = """(share) => {
    const data = window.TopicMap.instance.data.DATA;
    const t = data.topics[0];
    const dx = share * (data.x_range[1] - data.x_range[0]) / 2;
    const dy = share * (data.y_range[1] - data.y_range[0]) / 2;
    return Plotly.relayout('topic-map', {
        'xaxis.range': [t.x - dx, t.x + dx], 'yaxis.range': [t.y - dy, t.y + dy]});
}"""
LABELS = "[...document.querySelectorAll('#map-labels .map-label')].map(a => a.textContent)"


def test_areas_then_themes_then_topics_as_the_map_zooms_in(tmp_path, open_offline):
    synthetic = corpus(400)
    themes = synthetic.themes
    named = themes["theme"] >= 0
    area = np.where(named, themes["theme"] % 2, -1).astype(np.int32)
    synthetic.themes = themes.assign(
        area=area, area_label=[f"area {a} of the corpus" if a >= 0 else "" for a in area]
    )
    render_site(tmp_path, synthetic)
    state = open_offline(tmp_path / "map.html")
    page = state.page
    page.wait_for_function(MAP_READY)
    page.click("#view-switch button[data-view=combined]")
    page.wait_for_timeout(300)
    assert page.evaluate("window.TopicMap.instance.data.DATA.areas.length") == 2
    assert set(page.evaluate(LABELS)) == {"area 0 of the corpus", "area 1 of the corpus"}
    page.evaluate(ZOOM_TO, 0.6)
    page.wait_for_timeout(500)
    shown = page.evaluate(LABELS)
    assert shown and set(shown) <= set(themes.loc[named, "label"]), shown
    page.evaluate(ZOOM_TO, 0.25)
    page.wait_for_timeout(500)
    shown = page.evaluate(LABELS)
    assert shown and set(shown) <= set(synthetic.topics["label"]), shown
    page.select_option("#label-mode", "areas")
    page.wait_for_timeout(300)
    assert page.evaluate("document.getElementById('map-labels').dataset.level") == "areas"
    assert state.errors == []

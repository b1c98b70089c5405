/* The map's controls (part `controls`): the topic list, the toolbar (view switch, venue
 * highlight, label and colour selects, year range, search box and its mode), the panel's place
 * box and close button and Escape, and the plot's hover, click, pan and zoom. Each calls the
 * page's actions (map.js).
 */
(() => {
  "use strict";

  const { el, swatch, fmt, topicColourOf, byId } = window.TopicMap.helpers;
  const { dragRanges } = window.TopicMap.labels;

  function listButton(kind, item, colour, actions) {
    const button = el("button");
    button.type = "button";
    button.dataset.kind = kind;
    button.dataset.id = String(item.id);
    button.setAttribute("aria-pressed", "false");
    button.title = `Show only this ${kind} (click again for all)`;
    if (colour) button.append(swatch(colour));
    button.append(el("span", "name", item.label), el("span", "count", fmt(item.size)));
    button.addEventListener("click", () => actions.setFilter({ kind, id: item.id }));
    return button;
  }

  /** The topic list: each theme's heading and its topics, topics in no theme, unassigned. */
  function buildTopicList(D, actions) {
    const DATA = D.DATA;
    const list = byId("topic-list");
    const assigned = DATA.topics.filter((t) => t.id >= 0);
    const groups = [];
    if (D.themes.size) {
      for (const theme of DATA.themes) {
        groups.push({ theme, topics: assigned.filter((t) => t.theme === theme.id) });
      }
      const rest = assigned.filter((t) => !D.themes.has(t.theme));
      if (rest.length) groups.push({ theme: null, topics: rest });
    } else {
      groups.push({ theme: null, topics: assigned });
    }
    groups.push({ theme: null, topics: DATA.topics.filter((t) => t.id < 0) });
    for (const group of groups) {
      if (group.theme) {
        const head = el("li", "theme-head");
        head.append(listButton("theme", group.theme, null, actions));
        list.append(head);
      }
      for (const topic of group.topics) {
        const item = el("li", topic.id < 0 ? "unassigned" : "topic");
        const colour = topic.id < 0 ? DATA.colours.unassigned : topic.colour;
        item.append(listButton("topic", topic, colour, actions));
        list.append(item);
      }
    }
    byId("show-all").addEventListener("click", () => actions.setFilter(null));
  }

  /** Show state.filter in the topic list: its button pressed, its topics' colours as drawn. */
  function markFilter(D, state) {
    const f = state.filter;
    for (const button of document.querySelectorAll("#topic-list button[data-kind]")) {
      const on = f !== null && button.dataset.kind === f.kind && Number(button.dataset.id) === f.id;
      button.setAttribute("aria-pressed", on ? "true" : "false");
    }
    byId("show-all").hidden = f === null;
    for (const button of document.querySelectorAll('#topic-list button[data-kind="topic"]')) {
      const topic = D.topics.get(Number(button.dataset.id));
      const square = button.querySelector(".swatch");
      if (topic && topic.id >= 0 && square) square.style.background = topicColourOf(state, topic);
    }
  }

  function buildYearFilter(actions) {
    const from = byId("year-from");
    const to = byId("year-to");
    if (!from || !to) return;
    const change = () => actions.setYears(Number(from.value), Number(to.value));
    from.addEventListener("change", change);
    to.addEventListener("change", change);
  }

  /** The label select (themes only where the map has them) and the colour select's key. */
  function buildSelects(D, state, actions) {
    byId("colour-by").addEventListener("change", (e) => actions.setColour(e.target.value));
    const labels = byId("label-mode");
    if (D.themes.size === 0) {
      for (const option of [...labels.options]) {
        if (option.value !== "topics" && option.value !== "off") option.remove();
      }
      state.labels = "topics";
    }
    labels.value = state.labels;
    labels.addEventListener("change", (e) => {
      state.labels = e.target.value;
      actions.draw();
    });
    const key = byId("venue-key");
    D.DATA.venues.forEach((name, k) => {
      const item = el("span");
      item.append(swatch(D.DATA.venue_colours[k]), el("span", null, name));
      key.append(item);
    });
  }

  /** The panel's "Place an abstract" box: served, a form the server answers; from disk, the
   * one line that says how to start the server. */
  function buildPlaceBox(actions) {
    const form = byId("place-form");
    const served = window.TopicMap.search.served();
    for (const hint of document.querySelectorAll(".serve-hint")) hint.hidden = served;
    form.hidden = !served;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const result = byId("place-result");
      const button = byId("place-go");
      button.disabled = true;
      result.textContent = "Placing…";
      try {
        await actions.place(byId("place-title").value.trim(), byId("place-abstract").value);
      } catch (error) {
        result.textContent = `Not placed: ${error.message}`;
        byId("place-neighbours").replaceChildren();
      } finally {
        button.disabled = false;
      }
    });
  }

  function buildToolbar(D, state, actions) {
    buildYearFilter(actions);
    const highlight = byId("highlight-venue");
    if (highlight) {
      highlight.addEventListener("change", () =>
        actions.setHighlight(highlight.value === "" ? null : Number(highlight.value)),
      );
    }
    for (const button of document.querySelectorAll("#view-switch button")) {
      button.addEventListener("click", () => actions.setView(button.dataset.view));
    }
    buildSelects(D, state, actions);
    const box = byId("search");
    let timer = null;
    box.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(
        () => actions.search(box.value.trim()),
        state.mode === "words" ? 150 : 400,
      );
    });
    byId("search-mode").addEventListener("change", (e) => {
      state.mode = e.target.value;
      box.placeholder = state.mode === "words" ? "Search titles and abstracts" : "Describe an idea";
      actions.search(box.value.trim());
    });
    buildPlaceBox(actions);
    byId("panel-close").addEventListener("click", () => actions.select(null, true));
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && state.selected !== null) actions.select(null, true);
    });
  }

  /** The plot's hover and click (a paper), and its pan and zoom (labels, rings, zoomedIn). */
  function bindPlotEvents(D, state, gd, parts) {
    const { figure, panel, select } = parts;
    gd.on("plotly_hover", (event) => {
      const i = figure.paperAt(event.points?.[0]);
      if (i !== undefined) panel.hover(i, event.event || {});
    });
    gd.on("plotly_unhover", () => panel.unhover());
    gd.on("plotly_click", (event) => {
      const i = figure.paperAt(event.points?.[0]);
      if (i !== undefined) {
        panel.unhover();
        select(i);
      }
    });
    gd.on("plotly_relayouting", (change) => {
      const ranges = dragRanges(change);
      figure.relabel(ranges);
      figure.placeRings(ranges);
    });
    gd.on("plotly_relayout", (change) => {
      figure.placeRings();
      const keys = Object.keys(change || {});
      if (!keys.some((k) => /^[xy]axis\d*\.(range|autorange)|^autosize|^width|^height/.test(k))) {
        return;
      }
      const range = gd.layout.xaxis.range; // plotly keeps gd.layout's ranges as the user zooms
      const full = D.DATA.x_range;
      state.zoom = Math.abs(range[1] - range[0]) / (full[1] - full[0]); // share shown
      state.zoomedIn = state.zoom < 0.5;
      figure.relabel();
    });
  }

  window.TopicMap.define("controls", ["helpers", "labels"], () => ({
    buildTopicList,
    markFilter,
    buildToolbar,
    bindPlotEvents,
  }));
})();

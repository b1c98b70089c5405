/* The topic map (map.html, last of its scripts): the page's state and controls. It wires the
 * data (map-data.js), the figure (map-draw.js) and the side panel (map-panel.js): the view
 * switch, venue highlight, label and colour selects, year range, topic list, search box, links
 * such as #paper=<doc_id>, and the plot's hover and click.
 *
 * Plain JavaScript, no build step, no network. Paper text is only ever put into the page with
 * textContent, or escaped where plotly draws it as SVG text.
 */
(function () {
  "use strict";

  const TopicMap = window.TopicMap;
  const D = TopicMap.loadData();
  const DATA = D.DATA;
  const gd = document.getElementById("topic-map");
  const el = TopicMap.el;
  const fmt = TopicMap.fmt;

  const year = TopicMap.typedColumn(DATA.papers.year); // 0: no year
  const state = {
    view: DATA.venue_layout === "single" ? "combined" : "venues", // or "combined"
    highlight: null, // the venue coloured over the others in grey (combined view), or null
    years: null, // {from, to}: the year range kept (papers without a year kept too); null: all
    colour: "topic", // or "venue"
    labels: "auto", // "auto" | "themes" | "topics" | "off"
    query: "",
    hits: null, // Uint8Array over the papers: 1 where the text contains the query
    filter: null, // {kind: "topic" | "theme", id}
    active: null, // Uint8Array: 1 for the papers the search and the filter keep; null: all
    selected: null,
    neighbours: [], // the selected paper's similar papers, ringed on the map
    page: 0, // the page of the kept papers listed
    zoomedIn: false,
  };

  const figure = TopicMap.figure(D, state, gd);
  const draw = figure.draw;
  const panel = TopicMap.panel(D, state, { select: (i, focus) => select(i, focus) });

  function matchesFilter(i) {
    const f = state.filter;
    if (f === null) return true;
    if (f.kind === "topic") return D.topic[i] === f.id;
    const topic = D.topics.get(D.topic[i]);
    return !!topic && topic.theme === f.id;
  }

  function inYears(i) {
    const y = state.years;
    return y === null || year[i] === 0 || (year[i] >= y.from && year[i] <= y.to);
  }

  /** The kept papers (state.active) and their count, the list of them, the map. */
  function update() {
    const filtered = state.query !== "" || state.filter !== null || state.years !== null;
    let n = D.N;
    state.active = null;
    if (filtered) {
      state.active = new Uint8Array(D.N);
      n = 0;
      for (let i = 0; i < D.N; i++) {
        if ((state.hits === null || state.hits[i]) && matchesFilter(i) && inYears(i)) {
          state.active[i] = 1;
          n++;
        }
      }
    }
    const node = document.getElementById("match-count");
    node.textContent = filtered ? `${fmt(n)} of ${fmt(D.N)} papers match` : `${fmt(D.N)} papers`;
    node.classList.toggle("filtered", filtered);
    node.dataset.count = String(n);
    state.page = 0;
    panel.listMatches();
    return draw();
  }

  // focus: move the keyboard to the paper shown (a list's button was pressed), or back to
  // the search box when the panel closes from the keyboard
  async function select(i, focus = false) {
    state.selected = i;
    if (i === null) {
      panel.closePaper();
      if (focus) document.getElementById("search").focus();
      return figure.placeRings();
    }
    if (!(await panel.showPaper(i))) return undefined;
    if (focus) document.getElementById("paper-title").focus({ preventScroll: true });
    await figure.reveal(i);
    return figure.placeRings();
  }

  /** Search the titles and abstracts for `query` (TopicMap.searchText), loading the text shards first (once). */
  let searchSeq = 0;
  async function search(query) {
    const seq = ++searchSeq;
    const count = document.getElementById("match-count");
    let hits = null;
    if (query !== "") {
      hits = await TopicMap.searchText(D, query, (done, total) => {
        if (seq === searchSeq && done < total) {
          count.textContent = `Loading paper text: ${fmt(done)} of ${fmt(total)} files`;
          count.dataset.loading = "true";
        }
      });
      panel.showFailures();
    }
    if (seq !== searchSeq) return;
    delete count.dataset.loading;
    state.query = query.toLowerCase();
    state.hits = hits;
    await update();
  }

  // ------------------------------------------------------------ topic list, toolbar

  /** Show only one topic or theme (null: all); `toggle` clears the filter when it is already set. */
  function setFilter(filter, toggle = true) {
    const same = filter && state.filter && filter.kind === state.filter.kind && filter.id === state.filter.id;
    state.filter = same && toggle ? null : filter;
    for (const button of document.querySelectorAll("#topic-list button")) {
      const on = state.filter !== null && button.dataset.kind === state.filter.kind &&
        Number(button.dataset.id) === state.filter.id;
      button.setAttribute("aria-pressed", on ? "true" : "false");
    }
    document.getElementById("show-all").hidden = state.filter === null;
    for (const button of document.querySelectorAll('#topic-list button[data-kind="topic"]')) {
      const topic = D.topics.get(Number(button.dataset.id));
      const swatch = button.querySelector(".swatch");
      if (topic && topic.id >= 0 && swatch) swatch.style.background = TopicMap.topicColourOf(state, topic);
    }
    return update();
  }

  function listButton(kind, item, colour) {
    const button = el("button");
    button.type = "button";
    button.dataset.kind = kind;
    button.dataset.id = String(item.id);
    button.setAttribute("aria-pressed", "false");
    button.title = kind === "theme" ? "Show only this theme (click again for all)"
      : "Show only this topic (click again for all)";
    if (colour) button.append(TopicMap.swatch(colour));
    button.append(el("span", "name", item.label), el("span", "count", fmt(item.size)));
    button.addEventListener("click", () => setFilter({ kind, id: item.id }));
    return button;
  }

  function buildTopicList() {
    const list = document.getElementById("topic-list");
    const assigned = DATA.topics.filter((t) => t.id >= 0);
    const groups = [];
    if (D.themes.size) {
      for (const theme of DATA.themes) groups.push({ theme, topics: assigned.filter((t) => t.theme === theme.id) });
      const rest = assigned.filter((t) => !D.themes.has(t.theme));
      if (rest.length) groups.push({ theme: null, topics: rest });
    } else {
      groups.push({ theme: null, topics: assigned });
    }
    groups.push({ theme: null, topics: DATA.topics.filter((t) => t.id < 0) });
    for (const group of groups) {
      if (group.theme) {
        const head = el("li", "theme-head");
        head.append(listButton("theme", group.theme, null));
        list.append(head);
      }
      for (const topic of group.topics) {
        const item = el("li", topic.id < 0 ? "unassigned" : "topic");
        item.append(listButton("topic", topic, topic.id < 0 ? TopicMap.MUTED : topic.colour));
        list.append(item);
      }
    }
    document.getElementById("show-all").addEventListener("click", () => setFilter(null));
  }

  function setView(view) {
    state.view = view;
    for (const button of document.querySelectorAll("#view-switch button")) {
      button.setAttribute("aria-pressed", button.dataset.view === view ? "true" : "false");
    }
    state.zoomedIn = false;
    if (view !== "combined") setHighlight(null, false);
    return draw();
  }

  /** Colour one venue (an index, or null: none) over the others in grey, in the combined view. */
  function setHighlight(venue, redraw = true) {
    state.highlight = venue;
    const select = document.getElementById("highlight-venue");
    if (select) select.value = venue === null ? "" : String(venue);
    if (!redraw) return Promise.resolve();
    return venue !== null && state.view !== "combined" ? setView("combined") : draw();
  }

  /** Keep the papers of the years from..to (and those without a year); the full span: all. */
  function setYears(from, to) {
    const all = DATA.years.years;
    const low = Math.min(from, to);
    const high = Math.max(from, to);
    state.years = low <= all[0] && high >= all[all.length - 1] ? null : { from: low, to: high };
    return update();
  }

  function buildYearFilter() {
    const from = document.getElementById("year-from");
    const to = document.getElementById("year-to");
    if (!from || !to) return;
    const change = () => setYears(Number(from.value), Number(to.value));
    from.addEventListener("change", change);
    to.addEventListener("change", change);
  }

  function buildToolbar() {
    buildYearFilter();
    const highlight = document.getElementById("highlight-venue");
    if (highlight) {
      highlight.addEventListener("change", () => setHighlight(highlight.value === "" ? null : Number(highlight.value)));
    }
    for (const button of document.querySelectorAll("#view-switch button")) {
      button.addEventListener("click", () => setView(button.dataset.view));
    }
    document.getElementById("colour-by").addEventListener("change", (e) => {
      state.colour = e.target.value;
      document.getElementById("venue-key").classList.toggle("shown", state.colour === "venue");
      draw();
    });
    const labels = document.getElementById("label-mode");
    if (D.themes.size === 0) {
      for (const option of [...labels.options]) if (option.value !== "topics" && option.value !== "off") option.remove();
      state.labels = "topics";
    }
    labels.value = state.labels;
    labels.addEventListener("change", (e) => {
      state.labels = e.target.value;
      draw();
    });
    const key = document.getElementById("venue-key");
    DATA.venues.forEach((name, k) => {
      const item = el("span");
      item.append(TopicMap.swatch(DATA.venue_colours[k]), el("span", null, name));
      key.append(item);
    });
    const box = document.getElementById("search");
    let timer = null;
    box.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => search(box.value.trim()), 150);
    });
    document.getElementById("panel-close").addEventListener("click", () => select(null, true));
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && state.selected !== null) select(null, true);
    });
  }

  function bindPlotEvents() {
    gd.on("plotly_hover", (event) => {
      const i = figure.paperAt(event.points && event.points[0]);
      if (i !== undefined) panel.hover(i, event.event || {});
    });
    gd.on("plotly_unhover", () => panel.unhover());
    gd.on("plotly_click", (event) => {
      const i = figure.paperAt(event.points && event.points[0]);
      if (i !== undefined) {
        panel.unhover();
        select(i);
      }
    });
    gd.on("plotly_relayouting", (change) => {
      const ranges = TopicMap.dragRanges(change);
      figure.relabel(ranges);
      figure.placeRings(ranges);
    });
    gd.on("plotly_relayout", (change) => {
      figure.placeRings();
      const keys = Object.keys(change || {});
      if (!keys.some((k) => /^[xy]axis\d*\.(range|autorange)|^autosize|^width|^height/.test(k))) return;
      const range = gd._fullLayout.xaxis.range;
      state.zoomedIn = Math.abs(range[1] - range[0]) < 0.5 * (DATA.x_range[1] - DATA.x_range[0]);
      figure.relabel();
    });
  }

  async function applyHash() {
    const params = new URLSearchParams(window.location.hash.slice(1));
    if (params.get("view") === "combined") await setView("combined");
    for (const kind of ["topic", "theme"]) {
      const id = Number(params.get(kind));
      const known = kind === "topic" ? D.topics : D.themes;
      if (params.has(kind) && known.has(id)) await setFilter({ kind, id }, false);
    }
    if (params.has("paper") && D.indexById.has(params.get("paper"))) {
      await select(D.indexById.get(params.get("paper")));
    }
  }

  buildToolbar();
  buildTopicList();
  update().then(async () => {
    bindPlotEvents();
    await applyHash();
    window.addEventListener("hashchange", applyHash);
    gd.dataset.ready = "true";
  });
  // for the tests and the curious: the data, the state, what each trace draws
  window.topicMap = { data: D, state, select, search, setView, setFilter, setHighlight, setYears,
    figure, get indexById() { return D.indexById; } };
})();

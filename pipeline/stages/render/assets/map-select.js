/* Selecting papers and the list beside the map (part `selection`): plotly's box and lasso
 * selection on the map's traces, in the combined view and in each venue's panel (the modebar's
 * buttons, or the toolbar's Drag choice), and "Select in view" for the keyboard; the papers
 * inside become state.selection, which narrows the map and the panel's list as a search does.
 * The panel's list (a search's, a topic's, a selection's or the reading list's papers) gets
 * its counts by venue, year and topic, its export buttons (map-export.js) and its clear button.
 */
(() => {
  "use strict";

  const { el, fmt, byId } = window.TopicMap.helpers;
  const TOP_TOPICS = 8; // topics named in a list's counts; the rest are counted
  const HINTS = {
    select: "Drag a box round papers to select them · scroll to zoom · click a paper",
    lasso: "Draw round papers to select them · scroll to zoom · click a paper",
  };

  /** Whether (px, py) is inside the polygon (xs, ys): the even-odd rule. */
  function inPolygon(xs, ys, px, py) {
    let inside = false;
    for (let a = 0, b = xs.length - 1; a < xs.length; b = a++) {
      if (
        ys[a] > py !== ys[b] > py &&
        px < xs[a] + ((py - ys[a]) * (xs[b] - xs[a])) / (ys[b] - ys[a])
      )
        inside = !inside;
    }
    return inside;
  }

  /** The venue of the view's panel k (null: all venues), as map-venues.js orders the panels. */
  function panelVenue(D, state, k) {
    const venues = window.TopicMap.venues;
    if (venues) return venues.panels(D.DATA, state)[k]?.venue ?? null;
    return state.view === "combined" ? null : k;
  }

  /**
   * The papers inside a plotly_selected event's box (range) or lasso (lassoPoints), as a
   * Uint8Array over the papers, or null when the event has neither: in the panel the shape was
   * drawn on (its axes, x or xN), of that panel's venue in the venues view.
   */
  function papersInside(D, state, event) {
    const shape = event?.lassoPoints || event?.range;
    const axis = shape && Object.keys(shape).find((name) => /^x\d*$/.test(name));
    if (!axis) return null;
    const xs = shape[axis];
    const ys = shape[`y${axis.slice(1)}`];
    if (!ys) return null;
    const k = axis === "x" ? 0 : Number(axis.slice(1)) - 1;
    const venue = panelVenue(D, state, k);
    const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
    const [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    const lasso = !!event.lassoPoints;
    const mask = new Uint8Array(D.N);
    for (let i = 0; i < D.N; i++) {
      const x = D.x[i];
      const y = D.y[i];
      if (x < x0 || x > x1 || y < y0 || y > y1) continue;
      if (venue !== null && D.venue[i] !== venue) continue;
      if (!lasso || inPolygon(xs, ys, x, y)) mask[i] = 1;
    }
    return mask;
  }

  /** "ICLR 1,234 · ICML 567": counts (a Map key -> n) named by `name`, in `order`; with
   * `bracket`, "graph, message passing (89)" (names that hold commas). */
  function countLine(counts, order, name, bracket = false) {
    const count = (key) => (bracket ? `(${fmt(counts.get(key))})` : fmt(counts.get(key)));
    return order
      .filter((key) => counts.get(key))
      .map((key) => `${name(key)} ${count(key)}`)
      .join(" · ");
  }

  /** The list's papers counted by venue, year and topic, as a small definition list. */
  function countsOf(D, papers) {
    const venues = new Map();
    const years = new Map();
    const topics = new Map();
    const add = (map, key) => map.set(key, (map.get(key) || 0) + 1);
    for (const i of papers) {
      add(venues, D.venue[i]);
      add(years, D.year[i]);
      add(topics, D.topic[i]);
    }
    const byYear = [...years.keys()].sort((a, b) => (a || 1e9) - (b || 1e9));
    const byTopic = [...topics.keys()].sort((a, b) => topics.get(b) - topics.get(a) || a - b);
    const more = byTopic.length - TOP_TOPICS;
    const topicName = (id) => (D.topics.has(id) ? D.topics.get(id).label : String(id));
    const rows = [
      ["By venue", countLine(venues, [...D.DATA.venues.keys()], (v) => D.DATA.venues[v])],
      ["By year", countLine(years, byYear, (y) => (y ? String(y) : "no year"))],
      [
        "By topic",
        countLine(topics, byTopic.slice(0, TOP_TOPICS), topicName, true) +
          (more > 0 ? ` · ${fmt(more)} more topic${more === 1 ? "" : "s"}` : ""),
      ],
    ];
    const list = el("dl");
    for (const [term, line] of rows) list.append(el("dt", null, term), el("dd", null, line));
    return list;
  }

  /** The name of the list shown now and the file stem it exports to. */
  function listName(D, state) {
    if (state.reading !== null) return ["Reading list", "reading-list"];
    const parts = [];
    if (state.selection !== null) parts.push(["Selected papers", "selection"]);
    const slug = state.query
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 40);
    if (state.query) parts.push([`Papers matching “${state.query}”`, `search-${slug || "text"}`]);
    const f = state.filter;
    if (f !== null) {
      const item = (f.kind === "topic" ? D.topics : D.themes).get(f.id);
      parts.push([
        `${f.kind === "topic" ? "Topic" : "Theme"} “${item ? item.label : f.id}”`,
        `${f.kind}-${f.id < 0 ? "unassigned" : f.id}`,
      ]);
    }
    if (state.years !== null) {
      const span = `${state.years.from}-${state.years.to}`;
      parts.push([`Papers of ${span.replace("-", "–")}`, `years-${span}`]);
    }
    if (!parts.length) return ["Papers", "papers"];
    return [parts.map((p) => p[0]).join(", "), parts.map((p) => p[1]).join("_")];
  }

  /** The panel's list shows `papers`: its name, counts, and the tools that apply to it. */
  function showList(D, state, papers) {
    const [name] = listName(D, state);
    const reading = state.reading !== null;
    byId("reading-open").setAttribute("aria-pressed", reading ? "true" : "false");
    byId("list-name").textContent = name;
    byId("match-box").hidden = papers.length === 0 && !reading;
    byId("list-empty").hidden = papers.length > 0;
    byId("list-counts").replaceChildren(...(papers.length ? [countsOf(D, papers)] : []));
    byId("list-tools").hidden = papers.length === 0 && !reading;
    for (const id of ["export-csv", "export-bibtex"]) byId(id).disabled = papers.length === 0;
    byId("clear-selection").hidden = state.selection === null || reading;
    byId("clear-reading").hidden = !reading || papers.length === 0;
    byId("export-status").textContent = "";
  }

  /** Wire the plot's selection and drag mode and the list's buttons to `tools` (make's). */
  function bindTools(D, state, gd, tools, actions) {
    gd.on("plotly_selected", (event) => {
      const mask = papersInside(D, state, event);
      if (mask !== null) tools.setSelection(mask);
    });
    gd.on("plotly_relayout", (change) => {
      if (change?.dragmode && change.dragmode !== state.dragmode)
        tools.setDragmode(change.dragmode);
    });
    for (const button of document.querySelectorAll("#drag-mode button")) {
      button.addEventListener("click", () => tools.setDragmode(button.dataset.drag));
    }
    byId("select-view").addEventListener("click", tools.selectInView);
    byId("clear-selection").addEventListener("click", () => tools.setSelection(null));
    byId("reading-open").addEventListener("click", tools.openReading);
    byId("clear-reading").addEventListener("click", () => {
      actions.reading.clear();
      state.reading = [];
      actions.relist();
    });
    byId("export-csv").addEventListener("click", () => tools.exportList("csv"));
    byId("export-bibtex").addEventListener("click", () => tools.exportList("bibtex"));
  }

  /** The selection and list tools over data D, the page's state and plot gd; `actions`:
   * {update, relist, select, reading}. Returns {listed(papers), setSelection(mask), ...}. */
  function make(D, state, gd, actions) {
    let shown = []; // the list's papers as the panel last listed them
    const panHint = byId("map-hint").textContent;
    let reveal = false; // bring the list into view once listed (after a selection)
    const status = byId("export-status");

    /** Keep the papers of `mask` (null: all), list them and bring the list into view. */
    function setSelection(mask) {
      state.selection = mask;
      reveal = mask !== null;
      return actions.update();
    }

    function setDragmode(mode) {
      state.dragmode = mode;
      byId("map-hint").textContent = HINTS[mode] || panHint;
      for (const button of document.querySelectorAll("#drag-mode button")) {
        button.setAttribute("aria-pressed", button.dataset.drag === mode ? "true" : "false");
      }
      if (gd.layout && gd.layout.dragmode !== mode) return Plotly.relayout(gd, { dragmode: mode });
      return Promise.resolve();
    }

    /** Select the papers inside the plot's visible ranges (every panel shares them). */
    function selectInView() {
      const [x0, x1] = gd.layout.xaxis.range;
      const [y0, y1] = gd.layout.yaxis.range;
      const mask = new Uint8Array(D.N);
      for (let i = 0; i < D.N; i++) {
        if (D.x[i] >= x0 && D.x[i] <= x1 && D.y[i] >= y0 && D.y[i] <= y1) mask[i] = 1;
      }
      return setSelection(mask);
    }

    function openReading() {
      state.reading = state.reading === null ? actions.reading.papers() : null;
      if (state.selected !== null) actions.select(null);
      return actions.relist();
    }

    /** The panel listed `papers`: keep them for the export, show them (showList). */
    function listed(papers) {
      shown = papers;
      showList(D, state, papers);
      if (reveal) byId("match-box").scrollIntoView({ block: "start" });
      reveal = false;
    }

    /** Export the list shown as "csv" or "bibtex"; resolves with the text downloaded. */
    async function exportList(format) {
      const papers = state.reading !== null ? actions.reading.papers() : shown;
      const [, stem] = listName(D, state);
      const progress = (done, total) => {
        if (done < total) status.textContent = `Loading paper text: ${done} of ${total} files`;
      };
      const text = await window.TopicMap.exporter.save(D, papers, format, stem, progress);
      const file = `${stem}.${format === "csv" ? "csv" : "bib"}`;
      const missing = papers.filter((i) => D.failed.has(D.shard[i])).length;
      const without = missing ? ` (${fmt(missing)} without title and link: their text failed)` : "";
      status.textContent = `Saved ${fmt(papers.length)} papers as ${file}${without}`;
      return text;
    }

    const tools = { listed, setSelection, setDragmode, selectInView, openReading, exportList };
    return { ...tools, bind: () => bindTools(D, state, gd, tools, actions) };
  }

  window.TopicMap.define("selection", ["helpers", "exporter"], () => ({
    make,
    papersInside,
    inPolygon,
  }));
})();

/* The topic map (map.html): builds the plotly figure from the paper data embedded in the page.
 *
 * Plain JavaScript, no build step, no network. Paper text (titles, abstracts, labels) is only
 * ever put into the page with textContent, or HTML-escaped where plotly draws it as SVG text.
 * Views: the venues side by side on shared coordinates, or all papers combined. The search
 * box and the topic list filter the papers; papers filtered out stay on the map as faint dots.
 */
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("paper-data").textContent);
  const P = DATA.papers;
  const N = P.id.length;
  const VENUES = DATA.venues;
  const EDITIONS = DATA.editions; // "ICLR 2023 Workshop": venue, year and track of a paper
  const TOPICS = new Map(DATA.topics.map((t) => [t.id, t]));
  const THEMES = new Map(DATA.themes.map((t) => [t.id, t]));
  const gd = document.getElementById("topic-map");
  const MUTED = "#c7ccd1";
  const CONTEXT = "#d9dde1";

  const haystack = P.abstract.map((a, i) => ((P.title[i] || "") + "\n" + a).toLowerCase());
  const indexById = new Map(P.id.map((id, i) => [id, i]));
  // Unassigned papers are drawn first so topic colours sit on top of them.
  const drawOrder = [...Array(N).keys()].sort(
    (a, b) => (P.topic[a] >= 0) - (P.topic[b] >= 0) || a - b
  );

  const state = {
    view: "venues", // or "combined"
    colour: "topic", // or "venue"
    labels: "auto", // "auto" | "themes" | "topics" | "off"
    query: "",
    filter: null, // {kind: "topic" | "theme", id}
    selected: null,
    zoomedIn: false,
  };

  // ------------------------------------------------------------ helpers

  /** Escape text for plotly, which draws a subset of HTML in annotations. */
  function esc(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function swatch(colour) {
    const node = el("span", "swatch");
    node.style.background = colour;
    return node;
  }

  function shortTitle(i) {
    if (P.title[i]) return P.title[i];
    const words = P.abstract[i].split(/\s+/).filter(Boolean);
    const head = words.slice(0, DATA.hover_words).join(" ");
    return words.length > DATA.hover_words ? head + " …" : head;
  }

  function topicName(id) {
    const topic = TOPICS.get(id);
    return topic ? topic.label : String(id);
  }

  function paperColour(i) {
    if (state.colour === "venue") return DATA.venue_colours[P.venue[i]];
    const topic = TOPICS.get(P.topic[i]);
    return topic ? topic.colour : MUTED;
  }

  function matchesFilter(i) {
    const f = state.filter;
    if (f === null) return true;
    if (f.kind === "topic") return P.topic[i] === f.id;
    const topic = TOPICS.get(P.topic[i]);
    return !!topic && topic.theme === f.id;
  }

  function isActive(i) {
    return matchesFilter(i) && (state.query === "" || haystack[i].includes(state.query));
  }

  function fmt(n) {
    return n.toLocaleString("en-US");
  }

  // ------------------------------------------------------------ figure

  function panels() {
    if (state.view === "combined") return [{ venue: null, name: "All venues" }];
    return VENUES.map((name, venue) => ({ venue, name }));
  }

  function suffix(k) {
    return k === 0 ? "" : String(k + 1);
  }

  function labelLevel() {
    if (state.labels === "off") return null;
    if (state.labels === "topics" || THEMES.size === 0) return "topics";
    if (state.labels === "themes") return "themes";
    return state.zoomedIn ? "topics" : "themes";
  }

  function buildTraces() {
    const traces = [];
    const focus = state.selected === null ? [] : [state.selected, ...P.nn[state.selected]];
    panels().forEach((panel, k) => {
      const inPanel = (i) => panel.venue === null || P.venue[i] === panel.venue;
      const on = [];
      const off = [];
      for (const i of drawOrder) if (inPanel(i)) (isActive(i) ? on : off).push(i);
      const axes = { xaxis: "x" + suffix(k), yaxis: "y" + suffix(k) };
      const base = DATA.point_size;
      // while searching or showing one topic, the kept papers are drawn a little larger
      const size = state.query !== "" || state.filter !== null ? base + 2 : base;
      traces.push({
        type: "scatter", mode: "markers", uid: "context-" + k, ...axes,
        x: off.map((i) => P.x[i]), y: off.map((i) => P.y[i]),
        hoverinfo: "skip", showlegend: false,
        marker: { size: Math.max(2, base - 3), color: CONTEXT, line: { width: 0 } },
      });
      traces.push({
        type: "scatter", mode: "markers", uid: "papers-" + k, ...axes,
        x: on.map((i) => P.x[i]), y: on.map((i) => P.y[i]), customdata: on,
        hoverinfo: "none", showlegend: false,
        marker: {
          size: on.map((i) => (P.topic[i] >= 0 ? size : Math.max(2, size - 2))),
          color: on.map((i) => (P.topic[i] >= 0 || state.colour === "venue" ? paperColour(i) : MUTED)),
          opacity: on.map((i) => (P.topic[i] >= 0 ? 0.88 : 0.6)),
          line: { width: 0 },
        },
      });
      const rings = focus.filter(inPanel);
      traces.push({
        type: "scatter", mode: "markers", uid: "focus-" + k, ...axes,
        x: rings.map((i) => P.x[i]), y: rings.map((i) => P.y[i]), customdata: rings,
        hoverinfo: "none", showlegend: false,
        marker: {
          size: rings.map((i) => (i === state.selected ? size + 11 : size + 6)),
          color: "rgba(0,0,0,0)",
          line: { width: rings.map((i) => (i === state.selected ? 3 : 1.8)), color: "#111" },
        },
      });
    });
    return traces;
  }

  /** Panel k's visible ranges and size in pixels (before its first draw: full ranges, estimated size). */
  function panelBox(k, widthFraction) {
    const full = gd._fullLayout;
    const xa = full && full["xaxis" + suffix(k)];
    const ya = full && full["yaxis" + suffix(k)];
    const drawn = xa && ya && xa._length && Math.abs(xa.domain[1] - xa.domain[0] - widthFraction) < 1e-6;
    if (drawn) return { xr: xa.range, yr: ya.range, w: xa._length, h: ya._length };
    return {
      xr: DATA.x_range, yr: DATA.y_range,
      w: Math.max(200, (gd.clientWidth - 16) * widthFraction), h: Math.max(200, gd.clientHeight - 38),
    };
  }

  /**
   * Labels at theme or topic centres in panel k. Larger topics are placed first and a label that
   * would overlap one already placed is left out, so zooming in reveals the smaller topics' labels.
   */
  function labelAnnotations(k, widthFraction) {
    const level = labelLevel();
    if (level === null) return [];
    const items = (level === "themes" ? DATA.themes : DATA.topics.filter((t) => t.id >= 0))
      .slice().sort((a, b) => b.size - a.size || a.id - b.id);
    const box = panelBox(k, widthFraction);
    const fontSize = level === "themes" ? 13 : 11;
    const charWidth = fontSize * (level === "themes" ? 0.62 : 0.56); // system-ui, roughly
    const placed = [];
    const annotations = [];
    for (const item of items) {
      const px = ((item.x - box.xr[0]) / (box.xr[1] - box.xr[0])) * box.w;
      const py = ((box.yr[1] - item.y) / (box.yr[1] - box.yr[0])) * box.h;
      if (px < 0 || px > box.w || py < 0 || py > box.h) continue;
      const width = item.label.length * charWidth + 8;
      const height = fontSize + 6;
      // centred on the topic if it fits, else beside or just above or below it, inside the panel
      let spot = null;
      for (const yshift of [0, height, -height]) {
        for (const [xanchor, left] of [["center", px - width / 2], ["left", px], ["right", px - width]]) {
          const rect = { l: left, r: left + width, t: py - yshift - height / 2 };
          rect.b = rect.t + height;
          const inside = rect.l >= 0 && rect.r <= box.w && rect.t >= 0 && rect.b <= box.h;
          const free = !placed.some((p) => rect.l < p.r && p.l < rect.r && rect.t < p.b && p.t < rect.b);
          if (inside && free) {
            spot = { rect, xanchor, yshift };
            break;
          }
        }
        if (spot) break;
      }
      if (spot === null) continue;
      placed.push(spot.rect);
      annotations.push({
        x: item.x, y: item.y, xref: "x" + suffix(k), yref: "y" + suffix(k),
        xanchor: spot.xanchor, yshift: spot.yshift,
        text: level === "themes" ? "<b>" + esc(item.label) + "</b>" : esc(item.label),
        showarrow: false, borderpad: 2, bgcolor: "rgba(255,255,255,0.78)",
        font: { size: fontSize, color: "#1f2328" },
      });
    }
    return annotations;
  }

  const GAP = 0.025;

  function panelWidth() {
    const n = panels().length;
    return (1 - GAP * (n - 1)) / n;
  }

  /** Each panel's title (venue and its number of papers) and its topic or theme labels. */
  function buildAnnotations() {
    const annotations = [];
    panels().forEach((panel, k) => {
      const count = panel.venue === null ? N : P.venue.filter((v) => v === panel.venue).length;
      annotations.push({
        text: "<b>" + esc(panel.name) + "</b>  " + fmt(count) + " papers",
        xref: "x" + suffix(k) + " domain", yref: "y" + suffix(k) + " domain",
        x: 0, xanchor: "left", y: 1, yanchor: "bottom", showarrow: false,
        font: { size: 13, color: "#1f2328" },
      });
      annotations.push(...labelAnnotations(k, panelWidth()));
    });
    return annotations;
  }

  function buildLayout() {
    const width = panelWidth();
    const layout = {
      margin: { l: 8, r: 8, t: 30, b: 8 },
      showlegend: false, hovermode: "closest", dragmode: "pan",
      plot_bgcolor: "#fbfbfc", paper_bgcolor: "#fff",
      uirevision: state.view, annotations: buildAnnotations(),
      font: { family: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif" },
    };
    panels().forEach((panel, k) => {
      const start = k * (width + GAP);
      const common = { showticklabels: false, showgrid: false, zeroline: false, showline: true,
        linecolor: "#e3e6ea", mirror: true, fixedrange: false };
      layout["xaxis" + suffix(k)] = { ...common, domain: [start, start + width],
        range: DATA.x_range.slice(), anchor: "y" + suffix(k), ...(k ? { matches: "x" } : {}) };
      layout["yaxis" + suffix(k)] = { ...common, domain: [0, 1], range: DATA.y_range.slice(),
        anchor: "x" + suffix(k), ...(k ? { matches: "y" } : {}) };
    });
    return layout;
  }

  const PLOT_CONFIG = { displaylogo: false, responsive: true, scrollZoom: true,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "toImage"] };

  /** Place the labels again for the panels as drawn now (after a zoom, a pan or a new view). */
  function relabel() {
    const annotations = buildAnnotations();
    if (JSON.stringify(annotations) === JSON.stringify(gd.layout.annotations)) return Promise.resolve();
    return Plotly.relayout(gd, { annotations });
  }

  function draw() {
    return Plotly.react(gd, buildTraces(), buildLayout(), PLOT_CONFIG).then(relabel);
  }

  // ------------------------------------------------------------ side panel

  function showPaper(i) {
    document.getElementById("panel-empty").hidden = true;
    const detail = document.getElementById("paper-detail");
    detail.hidden = false;
    detail.dataset.paper = P.id[i];
    document.getElementById("paper-title").textContent = shortTitle(i);
    const meta = document.getElementById("paper-meta");
    meta.replaceChildren(
      swatch(TOPICS.has(P.topic[i]) ? TOPICS.get(P.topic[i]).colour : MUTED),
      el("span", null, EDITIONS[P.edition[i]] + " · " + topicName(P.topic[i]))
    );
    document.getElementById("paper-abstract").textContent = P.abstract[i];
    const link = document.getElementById("paper-link");
    const url = P.url[i];
    if (url && /^https?:\/\//i.test(url)) {
      link.href = url;
      link.hidden = false;
    } else {
      link.removeAttribute("href");
      link.hidden = true;
    }
    const list = document.getElementById("paper-neighbours");
    list.replaceChildren(
      ...P.nn[i].map((j, rank) => {
        const button = el("button", "neighbour");
        button.type = "button";
        button.dataset.index = String(j);
        button.append(el("span", "nb-title", shortTitle(j)));
        const meta = el("span", "nb-meta");
        meta.append(
          swatch(TOPICS.has(P.topic[j]) ? TOPICS.get(P.topic[j]).colour : MUTED),
          el("span", null, EDITIONS[P.edition[j]] + " · " + topicName(P.topic[j]) +
            " · similarity " + P.nn_sim[i][rank].toFixed(2))
        );
        button.append(meta);
        button.addEventListener("click", () => select(j, true));
        const item = el("li");
        item.append(button);
        return item;
      })
    );
    document.getElementById("paper-panel").scrollTop = 0;
  }

  // focus: move the keyboard to the paper shown (a list's button was pressed), or back to
  // the search box when the panel closes from the keyboard
  function select(i, focus = false) {
    state.selected = i;
    if (i === null) {
      document.getElementById("paper-detail").hidden = true;
      document.getElementById("panel-empty").hidden = false;
      if (focus) document.getElementById("search").focus();
    } else {
      showPaper(i);
      if (focus) document.getElementById("paper-title").focus({ preventScroll: true });
    }
    draw();
  }

  // ------------------------------------------------------------ topic list, search, toolbar

  function updateCount() {
    let n = 0;
    for (let i = 0; i < N; i++) if (isActive(i)) n++;
    const node = document.getElementById("match-count");
    const filtered = state.query !== "" || state.filter !== null;
    node.textContent = filtered ? `${fmt(n)} of ${fmt(N)} papers match` : `${fmt(N)} papers`;
    node.classList.toggle("filtered", filtered);
    node.dataset.count = String(n);
    listMatches(filtered);
  }

  // The papers a search or a topic keeps, as buttons: the keyboard's way to any paper.
  const MATCHES_LISTED = 30;

  function listMatches(filtered) {
    const box = document.getElementById("match-box");
    const found = [];
    for (let i = 0; filtered && i < N && found.length <= MATCHES_LISTED; i++) {
      if (isActive(i)) found.push(i);
    }
    box.hidden = found.length === 0;
    document.getElementById("match-list").replaceChildren(
      ...found.slice(0, MATCHES_LISTED).map((i) => {
        const button = el("button", "match");
        button.type = "button";
        button.dataset.index = String(i);
        button.append(el("span", "nb-title", shortTitle(i)));
        const meta = el("span", "nb-meta");
        meta.append(swatch(paperColour(i)), el("span", null, EDITIONS[P.edition[i]] + " · " + topicName(P.topic[i])));
        button.append(meta);
        button.addEventListener("click", () => select(i, true));
        const item = el("li");
        item.append(button);
        return item;
      })
    );
    document.getElementById("match-more").hidden = found.length <= MATCHES_LISTED;
  }

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
    updateCount();
    draw();
  }

  function listButton(kind, item, colour) {
    const button = el("button");
    button.type = "button";
    button.dataset.kind = kind;
    button.dataset.id = String(item.id);
    button.setAttribute("aria-pressed", "false");
    button.title = kind === "theme" ? "Show only this theme (click again for all)"
      : "Show only this topic (click again for all)";
    if (colour) button.append(swatch(colour));
    button.append(el("span", "name", item.label), el("span", "count", fmt(item.size)));
    button.addEventListener("click", () => setFilter({ kind, id: item.id }));
    return button;
  }

  function buildTopicList() {
    const list = document.getElementById("topic-list");
    const groups = [];
    if (THEMES.size) {
      for (const theme of DATA.themes) {
        groups.push({ theme, topics: DATA.topics.filter((t) => t.theme === theme.id && t.id >= 0) });
      }
      const rest = DATA.topics.filter((t) => t.id >= 0 && !THEMES.has(t.theme));
      if (rest.length) groups.push({ theme: null, topics: rest });
    } else {
      groups.push({ theme: null, topics: DATA.topics.filter((t) => t.id >= 0) });
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
        item.append(listButton("topic", topic, topic.id < 0 ? MUTED : topic.colour));
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
    draw();
  }

  function setColour(colour) {
    state.colour = colour;
    document.getElementById("venue-key").classList.toggle("shown", colour === "venue");
    draw();
  }

  function buildToolbar() {
    for (const button of document.querySelectorAll("#view-switch button")) {
      button.addEventListener("click", () => setView(button.dataset.view));
    }
    document.getElementById("colour-by").addEventListener("change", (e) => setColour(e.target.value));
    const labels = document.getElementById("label-mode");
    if (THEMES.size === 0) {
      for (const option of [...labels.options]) if (option.value !== "topics" && option.value !== "off") option.remove();
      state.labels = "topics";
    }
    labels.value = state.labels;
    labels.addEventListener("change", (e) => {
      state.labels = e.target.value;
      draw();
    });
    const key = document.getElementById("venue-key");
    VENUES.forEach((name, k) => {
      const item = el("span");
      item.append(swatch(DATA.venue_colours[k]), el("span", null, name));
      key.append(item);
    });
    const search = document.getElementById("search");
    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        state.query = search.value.trim().toLowerCase();
        updateCount();
        draw();
      }, 150);
    });
    document.getElementById("panel-close").addEventListener("click", () => select(null, true));
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && state.selected !== null) select(null, true);
    });
  }

  // ------------------------------------------------------------ plot events

  const tooltip = document.getElementById("tooltip");

  function bindPlotEvents() {
    gd.on("plotly_hover", (event) => {
      const point = event.points && event.points[0];
      if (!point || point.customdata === undefined) return;
      const i = point.customdata;
      tooltip.replaceChildren(el("strong", null, shortTitle(i)));
      const meta = el("span");
      meta.append(
        swatch(TOPICS.has(P.topic[i]) ? TOPICS.get(P.topic[i]).colour : MUTED),
        el("span", null, EDITIONS[P.edition[i]] + " · " + topicName(P.topic[i]))
      );
      tooltip.append(meta);
      tooltip.hidden = false;
      const mouse = event.event || {};
      const x = (mouse.clientX || 0) + 14;
      const y = (mouse.clientY || 0) + 14;
      const box = tooltip.getBoundingClientRect();
      tooltip.style.left = Math.min(x, window.innerWidth - box.width - 8) + "px";
      tooltip.style.top = Math.min(y, window.innerHeight - box.height - 8) + "px";
      tooltip.dataset.paper = P.id[i];
    });
    gd.on("plotly_unhover", () => {
      tooltip.hidden = true;
    });
    gd.on("plotly_click", (event) => {
      const point = event.points && event.points[0];
      if (point && point.customdata !== undefined) {
        tooltip.hidden = true;
        select(point.customdata);
      }
    });
    gd.on("plotly_relayout", (change) => {
      const keys = Object.keys(change || {});
      if (!keys.some((k) => /^[xy]axis\d*\.(range|autorange)|^autosize|^width|^height/.test(k))) return;
      const range = gd._fullLayout.xaxis.range;
      state.zoomedIn = Math.abs(range[1] - range[0]) < 0.5 * (DATA.x_range[1] - DATA.x_range[0]);
      relabel();
    });
  }

  // ------------------------------------------------------------ start

  function applyHash() {
    const params = new URLSearchParams(window.location.hash.slice(1));
    if (params.get("view") === "combined") setView("combined");
    if (params.has("topic")) {
      const id = Number(params.get("topic"));
      if (TOPICS.has(id)) setFilter({ kind: "topic", id }, false);
    }
    if (params.has("theme")) {
      const id = Number(params.get("theme"));
      if (THEMES.has(id)) setFilter({ kind: "theme", id }, false);
    }
    if (params.has("paper") && indexById.has(params.get("paper"))) select(indexById.get(params.get("paper")));
  }

  buildToolbar();
  buildTopicList();
  updateCount();
  draw().then(() => {
    bindPlotEvents();
    applyHash();
    window.addEventListener("hashchange", applyHash);
    gd.dataset.ready = "true";
  });
  // for the tests and the curious: which paper index a doc_id has
  window.topicMap = { indexById, state, select, setView, setFilter };
})();

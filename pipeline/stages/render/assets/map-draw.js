/* The map's figure (map.html, third of its scripts): plotly traces, panel headers and layout.
 *
 * Papers are drawn with WebGL (plotly's scattergl; plain SVG scatter where the browser has no
 * WebGL) from typed arrays, each point's colour one of a few shared RGBA arrays rather than a
 * colour string or a colour scale's value, which plotly would convert point by point. Views: the
 * venues side by side on shared coordinates (above three venues a grid of small multiples,
 * ceil(sqrt(n)) columns, each panel's header in the gap above it), or all papers combined, where
 * one venue may be highlighted over the others in grey. Papers the search, the topic list or
 * the year filter leave out stay on the map as faint dots. With one theme shown alone its
 * topics take distinct colours (theme_colour) instead of their theme's shades. The panels'
 * headers are plotly annotations, escaped for plotly's pseudo-HTML; the topic and theme labels
 * are map-labels.js's layer over the plot.
 */
(function () {
  "use strict";

  const TopicMap = (window.TopicMap = window.TopicMap || {});
  const MUTED = "#c7ccd1";
  const CONTEXT = "#d9dde1";
  const GREY = "#aeb4ba"; // the other venues while one is highlighted
  const GAP = 0.025;
  const HEADER_PX = 24; // the gap above a grid row, for its panels' headers
  const MARGIN = { l: 8, r: 8, t: 30, b: 8 };
  const SVG = "http://www.w3.org/2000/svg";
  TopicMap.MUTED = MUTED;

  /** Escape text for plotly, which draws a subset of HTML in annotations. */
  TopicMap.esc = function (text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  };
  const esc = TopicMap.esc;

  /** A topic's colour as drawn now: distinct within a theme shown alone, else its own. */
  TopicMap.topicColourOf = function (state, topic) {
    const f = state.filter;
    const alone = f !== null && f.kind === "theme" && topic.theme === f.id;
    return alone ? topic.theme_colour : topic.colour;
  };

  TopicMap.fmt = (n) => n.toLocaleString("en-US");

  function webgl() {
    try {
      return !!document.createElement("canvas").getContext("webgl");
    } catch (error) {
      return false;
    }
  }

  /** The figure over data D and the page's state; draws into the element gd. */
  TopicMap.figure = function (D, state, gd) {
    const DATA = D.DATA;
    const POINTS = webgl() ? "scattergl" : "scatter";
    const assigned = DATA.topics.filter((t) => t.id >= 0);
    // the colour scale's steps: topic mode has each assigned topic's colour, then MUTED
    let topicColours = [];
    const recolour = () => {
      topicColours = [...assigned.map((t) => TopicMap.topicColourOf(state, t)), MUTED];
    };
    recolour();
    const topicStep = new Map(assigned.map((t, k) => [t.id, k]));
    const stepOfTopic = new Uint16Array(D.N);
    for (let i = 0; i < D.N; i++) {
      const step = topicStep.get(D.topic[i]);
      stepOfTopic[i] = step === undefined ? assigned.length : step;
    }
    // unassigned papers first in each panel, so topic colours sit on top of them
    const drawOrder = new Int32Array(D.N);
    let filled = 0;
    for (const unassigned of [true, false]) {
      for (let i = 0; i < D.N; i++) if ((D.topic[i] < 0) === unassigned) drawOrder[filled++] = i;
    }
    const panelPapers = new Map();
    const drawn = new Map(); // trace uid -> the paper index of each of its points

    function panels() {
      if (state.view === "combined") return [{ venue: null, name: "All venues" }];
      return DATA.venues.map((name, venue) => ({ venue, name }));
    }

    function papersOf(venue) {
      if (!panelPapers.has(venue)) {
        panelPapers.set(venue, venue === null ? drawOrder : drawOrder.filter((i) => D.venue[i] === venue));
      }
      return panelPapers.get(venue);
    }

    const suffix = (k) => (k === 0 ? "" : String(k + 1));

    /** "#rrggbb" -> [r, g, b, 1] in 0-1: plotly takes such arrays per point without parsing a
     * string or running a colour scale for each (at 100,000 papers, most of a second). */
    const rgba = (hex) => [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16) / 255).concat(1);

    const highlighted = () => (state.view === "combined" ? state.highlight : null);

    /** Paper i's colour as drawn now. */
    function paperColour(i) {
      const h = highlighted();
      if (h !== null && D.venue[i] !== h) return GREY;
      if (state.colour === "venue") return DATA.venue_colours[D.venue[i]];
      return topicColours[stepOfTopic[i]];
    }

    function paperTrace(k, axes, on, size) {
      const byVenue = state.colour === "venue";
      const colours = (byVenue ? DATA.venue_colours : topicColours).map(rgba);
      const x = new Float32Array(on.length);
      const y = new Float32Array(on.length);
      const colour = new Array(on.length); // each topic's (or venue's) one array, shared
      const sizes = new Float32Array(on.length);
      on.forEach((i, n) => {
        x[n] = D.x[i];
        y[n] = D.y[i];
        colour[n] = colours[byVenue ? D.venue[i] : stepOfTopic[i]];
        sizes[n] = D.topic[i] >= 0 ? size : Math.max(2, size - 2);
      });
      drawn.set("papers-" + k, on);
      return {
        type: POINTS, mode: "markers", uid: "papers-" + k, ...axes, x, y,
        hoverinfo: "none", showlegend: false,
        marker: { size: sizes, color: colour, opacity: 0.85, line: { width: 0 } },
      };
    }

    /** The other venues' papers while one is highlighted: grey, beneath it, still clickable. */
    function greyTrace(k, axes, papers, size) {
      drawn.set("muted-" + k, papers);
      return {
        type: POINTS, mode: "markers", uid: "muted-" + k, ...axes,
        x: Float32Array.from(papers, (i) => D.x[i]), y: Float32Array.from(papers, (i) => D.y[i]),
        hoverinfo: "none", showlegend: false,
        marker: { size: Math.max(2, size - 1), color: GREY, opacity: 0.7, line: { width: 0 } },
      };
    }

    function buildTraces() {
      const traces = [];
      drawn.clear();
      recolour();
      const h = highlighted();
      const base = DATA.point_size;
      // while searching or showing one topic, the kept papers are drawn a little larger
      const size = state.active !== null ? base + 2 : base;
      panels().forEach((panel, k) => {
        const papers = papersOf(panel.venue);
        const on = [];
        const off = [];
        for (const i of papers) (state.active === null || state.active[i] ? on : off).push(i);
        const axes = { xaxis: "x" + suffix(k), yaxis: "y" + suffix(k) };
        traces.push({
          type: POINTS, mode: "markers", uid: "context-" + k, ...axes,
          x: Float32Array.from(off, (i) => D.x[i]), y: Float32Array.from(off, (i) => D.y[i]),
          hoverinfo: "skip", showlegend: false,
          marker: { size: Math.max(2, base - 3), color: CONTEXT, line: { width: 0 } },
        });
        if (h === null) {
          traces.push(paperTrace(k, axes, on, size));
        } else {
          traces.push(greyTrace(k, axes, on.filter((i) => D.venue[i] !== h), size));
          traces.push(paperTrace(k, axes, on.filter((i) => D.venue[i] === h), size));
        }
      });
      return traces;
    }

    const plotWidth = () => Math.max(200, gd.clientWidth - MARGIN.l - MARGIN.r);
    const plotHeight = () => Math.max(200, gd.clientHeight - MARGIN.t - MARGIN.b);
    const same = (a, b) => Math.abs(a[0] - b[0]) < 1e-6 && Math.abs(a[1] - b[1]) < 1e-6;

    /**
     * Each panel's domain {x: [from, to], y: [from, to]} in the plot: a row for up to three
     * panels, else a grid of ceil(sqrt(n)) columns with a header's height between its rows.
     */
    function panelDomains() {
      const n = panels().length;
      const grid = n > 3;
      const cols = grid ? Math.ceil(Math.sqrt(n)) : n;
      const rows = Math.ceil(n / cols);
      const width = (1 - GAP * (cols - 1)) / cols;
      const vgap = grid ? Math.min(0.2, HEADER_PX / plotHeight()) : 0;
      const height = (1 - vgap * (rows - 1)) / rows;
      return panels().map((_, k) => {
        const col = k % cols;
        const row = Math.floor(k / cols);
        const x0 = col * (width + GAP);
        const top = 1 - row * (height + vgap);
        return { x: [x0, x0 + width], y: [top - height, top] };
      });
    }

    /**
     * Panel k's visible ranges, size and offset in gd, in pixels (before its first draw: the full
     * ranges and the size its domain will have).
     */
    function panelBox(k, domain) {
      const full = gd._fullLayout;
      const xa = full && full["xaxis" + suffix(k)];
      const ya = full && full["yaxis" + suffix(k)];
      const shown = xa && ya && xa._length && same(xa.domain, domain.x) && same(ya.domain, domain.y);
      if (shown) {
        return { xr: xa.range, yr: ya.range, w: xa._length, h: ya._length, left: xa._offset, top: ya._offset };
      }
      return {
        xr: DATA.x_range, yr: DATA.y_range,
        w: plotWidth() * (domain.x[1] - domain.x[0]), h: plotHeight() * (domain.y[1] - domain.y[0]),
        left: MARGIN.l + plotWidth() * domain.x[0], top: MARGIN.t + plotHeight() * (1 - domain.y[1]),
      };
    }

    const labels = TopicMap.labels(D, state, gd, () => panelDomains().map((d, k) => panelBox(k, d)));

    const venueCounts = DATA.venues.map((_, v) => D.venue.reduce((n, w) => n + (w === v), 0));
    let keptFor = null; // the state.active the counts below are of
    let keptCounts = [];

    /** "12 of 339 papers" while a search, topic or year range keeps some; else "339 papers". */
    function countText(venue) {
      const total = venue === null ? D.N : venueCounts[venue];
      if (state.active === null) return TopicMap.fmt(total) + " papers";
      if (keptFor !== state.active) {
        keptFor = state.active;
        keptCounts = new Array(DATA.venues.length + 1).fill(0);
        for (let i = 0; i < D.N; i++) {
          if (!state.active[i]) continue;
          keptCounts[D.venue[i]]++;
          keptCounts[DATA.venues.length]++;
        }
      }
      const kept = keptCounts[venue === null ? DATA.venues.length : venue];
      return TopicMap.fmt(kept) + " of " + TopicMap.fmt(total) + " papers";
    }

    /**
     * Each panel's title: its venue and number of papers, the count left out where a grid's
     * panel is too narrow for both.
     */
    function buildAnnotations() {
      const annotations = [];
      const domains = panelDomains();
      const fontSize = domains.length > 3 ? 12 : 13;
      panels().forEach((panel, k) => {
        const counted = countText(panel.venue);
        const room = plotWidth() * (domains[k].x[1] - domains[k].x[0]);
        const fits = domains.length <= 3 || (panel.name.length + counted.length + 2) * fontSize * 0.62 <= room;
        annotations.push({
          text: "<b>" + esc(panel.name) + "</b>" + (fits ? "  " + counted : ""),
          xref: "x" + suffix(k) + " domain", yref: "y" + suffix(k) + " domain",
          x: 0, xanchor: "left", y: 1, yanchor: "bottom", showarrow: false,
          font: { size: fontSize, color: "#1f2328" }, name: "panel-header",
        });
      });
      return annotations;
    }

    function buildLayout() {
      const domains = panelDomains();
      const layout = {
        margin: MARGIN,
        showlegend: false, hovermode: "closest", dragmode: "pan",
        plot_bgcolor: "#fbfbfc", paper_bgcolor: "#fff",
        uirevision: state.view, annotations: buildAnnotations(),
        font: { family: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif" },
      };
      panels().forEach((panel, k) => {
        const common = { showticklabels: false, showgrid: false, zeroline: false, showline: true,
          linecolor: "#e3e6ea", mirror: true, fixedrange: false };
        layout["xaxis" + suffix(k)] = { ...common, domain: domains[k].x,
          range: DATA.x_range.slice(), anchor: "y" + suffix(k), ...(k ? { matches: "x" } : {}) };
        layout["yaxis" + suffix(k)] = { ...common, domain: domains[k].y, range: DATA.y_range.slice(),
          anchor: "x" + suffix(k), ...(k ? { matches: "y" } : {}) };
      });
      return layout;
    }

    const PLOT_CONFIG = { displaylogo: false, responsive: true, scrollZoom: true,
      modeBarButtonsToRemove: ["select2d", "lasso2d", "toImage"] };


    // The rings around the paper shown and its similar papers: an SVG laid over the plot, so
    // opening a paper moves a few circles instead of drawing every point again.
    const rings = document.createElementNS(SVG, "svg");
    rings.id = "focus-rings";
    rings.setAttribute("aria-hidden", "true");
    gd.parentElement.append(rings);

    /** Ring the paper shown and its neighbours where they are now, or over a drag's ranges. */
    function placeRings(ranges) {
      rings.replaceChildren();
      if (!gd._fullLayout || state.selected === null) return;
      TopicMap.cover(gd, rings);
      const size = DATA.point_size + (state.active !== null ? 2 : 0);
      const domains = panelDomains();
      panels().forEach((panel, k) => {
        const box = { ...panelBox(k, domains[k]), ...(ranges || {}) };
        for (const i of [state.selected, ...state.neighbours]) {
          if (panel.venue !== null && D.venue[i] !== panel.venue) continue;
          const [px, py] = TopicMap.toPixel(box, D.x[i], D.y[i]);
          if (px < 0 || px > box.w || py < 0 || py > box.h) continue;
          const ring = document.createElementNS(SVG, "circle");
          const main = i === state.selected;
          ring.setAttribute("cx", box.left + px);
          ring.setAttribute("cy", box.top + py);
          ring.setAttribute("r", (main ? size + 11 : size + 6) / 2);
          ring.setAttribute("stroke-width", main ? 3 : 1.8);
          ring.dataset.index = String(i);
          rings.append(ring);
        }
      });
    }

    function draw() {
      return Plotly.react(gd, buildTraces(), buildLayout(), PLOT_CONFIG).then(() => {
        labels.place(); // plotly resolves with gd: no drag ranges to pass on
        placeRings();
      });
    }

    /** The paper under an event's point (plotly_hover, plotly_click), or undefined. */
    function paperAt(point) {
      const list = point && drawn.get(point.data.uid);
      return list ? list[point.pointNumber] : undefined;
    }

    /** Pan (keeping the zoom) so paper i is inside the visible ranges. */
    function reveal(i) {
      const full = gd._fullLayout;
      if (!full || !full.xaxis) return Promise.resolve();
      const change = {};
      for (const [axis, value] of [["xaxis", D.x[i]], ["yaxis", D.y[i]]]) {
        const [low, high] = full[axis].range;
        if (value < low || value > high) {
          change[axis + ".range"] = [value - (high - low) / 2, value + (high - low) / 2];
        }
      }
      return Object.keys(change).length ? Plotly.relayout(gd, change) : Promise.resolve();
    }

    // relabel(ranges?): the labels again for the panels as drawn now, or over a drag's ranges
    return { draw, relabel: labels.place, placeRings, paperAt, paperColour, reveal, drawn,
      points: POINTS };
  };
})();

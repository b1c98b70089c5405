/* The map's figure (part `figure`): the plotly traces, the rings around the paper shown, and
 * drawing the whole (the layout is map-layout.js's, the labels map-labels.js's).
 *
 * Papers are drawn with WebGL (plotly's scattergl; plain SVG scatter where the browser has no
 * WebGL) from typed arrays, each point's colour one of a few shared RGBA arrays rather than a
 * colour string or a colour scale's value, which plotly would convert point by point. In the
 * combined view one venue may be highlighted over the others in grey. Papers the search, the
 * topic list or the year filter leave out stay on the map as faint dots. With one theme shown
 * alone its topics take distinct colours (theme_colour) instead of their theme's shades.
 */
(() => {
  "use strict";

  const { toPixel, cover, topicColourOf } = window.TopicMap.helpers;
  const SVG = "http://www.w3.org/2000/svg";
  const PLOT_CONFIG = {
    displaylogo: false,
    responsive: true,
    scrollZoom: true,
    modeBarButtonsToRemove: ["toImage"], // box and lasso select: map-select.js
  };

  function webgl() {
    try {
      return !!document.createElement("canvas").getContext("webgl");
    } catch (_error) {
      return false;
    }
  }

  /** "#rrggbb" -> [r, g, b, 1] in 0-1: plotly takes such arrays per point without parsing a
   * string or running a colour scale for each (at 100,000 papers, most of a second). */
  const rgba = (hex) =>
    [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16) / 255).concat(1);

  /**
   * Each paper's colour step (its topic's place among the assigned topics; unassigned: after
   * them) and the order papers are drawn in: unassigned papers first, so topic colours sit on
   * top of them.
   */
  function paperOrder(D, assigned) {
    const topicStep = new Map(assigned.map((t, k) => [t.id, k]));
    const stepOfTopic = new Uint16Array(D.N);
    for (let i = 0; i < D.N; i++) {
      const step = topicStep.get(D.topic[i]);
      stepOfTopic[i] = step === undefined ? assigned.length : step;
    }
    const drawOrder = new Int32Array(D.N);
    let filled = 0;
    for (const unassigned of [true, false]) {
      for (let i = 0; i < D.N; i++) if (D.topic[i] < 0 === unassigned) drawOrder[filled++] = i;
    }
    return { stepOfTopic, drawOrder };
  }

  /** A trace of markers at papers' places: `uid`, the panel's `axes`, the points' `marker`. */
  function markers(D, type, uid, axes, papers, marker, hoverinfo = "none") {
    return {
      type,
      mode: "markers",
      uid,
      ...axes,
      x: Float32Array.from(papers, (i) => D.x[i]),
      y: Float32Array.from(papers, (i) => D.y[i]),
      hoverinfo,
      showlegend: false,
      marker: { ...marker, line: { width: 0 } },
    };
  }

  /**
   * The papers' colours as drawn now: {recolour(), paperColour(i), pointColours(papers)}. By
   * topic, each paper's is its step's (`stepOfTopic`: each assigned topic's colour as drawn
   * now, then the unassigned papers'); by venue, track or year, its own (map-colour.js); grey
   * for the other venues while one is highlighted.
   */
  function colouring(D, state, assigned, stepOfTopic) {
    const DATA = D.DATA;
    const schemes = window.TopicMap.colour.schemes(D);
    let topicColours = [];
    const recolour = () => {
      topicColours = [...assigned.map((t) => topicColourOf(state, t)), DATA.colours.unassigned];
    };

    /** Paper i's colour as drawn now. */
    function paperColour(i) {
      const h = state.view === "combined" ? state.highlight : null;
      if (h !== null && D.venue[i] !== h) return DATA.colours.other_venues;
      const scheme = schemes.get(state.colour);
      return scheme ? scheme.colours[scheme.of[i]] : topicColours[stepOfTopic[i]];
    }

    /** The papers' colours for plotly: each topic's (venue's, track's, year's) one RGBA
     * array, shared. */
    function pointColours(papers) {
      const scheme = schemes.get(state.colour);
      const colours = (scheme ? scheme.colours : topicColours).map(rgba);
      const of = scheme ? scheme.of : stepOfTopic;
      return Array.from(papers, (i) => colours[of[i]]);
    }

    recolour();
    return { recolour, paperColour, pointColours };
  }

  /** The traces of the view as it is now: {build(panels, axisOf), paperColour(i), drawn, type}. */
  function traces(D, state) {
    const DATA = D.DATA;
    const type = webgl() ? "scattergl" : "scatter";
    const assigned = DATA.topics.filter((t) => t.id >= 0);
    const { stepOfTopic, drawOrder } = paperOrder(D, assigned);
    const colour = colouring(D, state, assigned, stepOfTopic);
    const panelPapers = new Map();
    const drawn = new Map(); // trace uid -> the paper index of each of its points
    const highlighted = () => (state.view === "combined" ? state.highlight : null);

    function papersOf(venue) {
      if (!panelPapers.has(venue)) {
        const papers = venue === null ? drawOrder : drawOrder.filter((i) => D.venue[i] === venue);
        panelPapers.set(venue, papers);
      }
      return panelPapers.get(venue);
    }

    /** The papers `on` in their topic's (or venue's) colour. */
    function paperTrace(uid, axes, on, size) {
      const sizes = Float32Array.from(on, (i) => (D.topic[i] >= 0 ? size : Math.max(2, size - 2)));
      drawn.set(uid, on);
      const marker = { size: sizes, color: colour.pointColours(on), opacity: 0.85 };
      return markers(D, type, uid, axes, on, marker);
    }

    /** The other venues' papers while one is highlighted: grey, beneath it, still clickable. */
    function greyTrace(uid, axes, papers, size) {
      drawn.set(uid, papers);
      const grey = DATA.colours.other_venues;
      const marker = { size: Math.max(2, size - 1), color: grey, opacity: 0.7 };
      return markers(D, type, uid, axes, papers, marker);
    }

    /** Panel k's traces: the papers left out (faint), then those kept. */
    function panelTraces(panel, k, axes) {
      const h = highlighted();
      const base = DATA.point_size;
      // while searching or showing one topic, the kept papers are drawn a little larger
      const size = state.active !== null ? base + 2 : base;
      const on = [];
      const off = [];
      for (const i of papersOf(panel.venue))
        (state.active === null || state.active[i] ? on : off).push(i);
      const faint = { size: Math.max(2, base - 3), color: DATA.colours.context };
      const out = [markers(D, type, `context-${k}`, axes, off, faint, "skip")];
      if (h === null) return [...out, paperTrace(`papers-${k}`, axes, on, size)];
      const other = on.filter((i) => D.venue[i] !== h);
      const own = on.filter((i) => D.venue[i] === h);
      return [
        ...out,
        greyTrace(`muted-${k}`, axes, other, size),
        paperTrace(`papers-${k}`, axes, own, size),
      ];
    }

    /** Every panel's traces; `axisOf(k)`: panel k's {xaxis, yaxis}. */
    function build(panels, axisOf) {
      drawn.clear();
      colour.recolour();
      return panels.flatMap((panel, k) => panelTraces(panel, k, axisOf(k)));
    }

    return { build, paperColour: colour.paperColour, drawn, type };
  }

  /**
   * The rings around the paper shown and its similar papers (and an abstract placed by the
   * server, marked, with its nearest papers): an SVG laid over the plot, so
   * opening a paper moves a few circles instead of drawing every point again. place(ranges?)
   * rings them where they are now, or over a drag's ranges.
   */
  function rings(D, state, gd, layout) {
    const svg = document.createElementNS(SVG, "svg");
    svg.id = "focus-rings";
    svg.setAttribute("aria-hidden", "true");
    gd.parentElement.append(svg);

    function ring(box, i) {
      const [px, py] = toPixel(box, D.x[i], D.y[i]);
      if (px < 0 || px > box.w || py < 0 || py > box.h) return null;
      const size = D.DATA.point_size + (state.active !== null ? 2 : 0);
      const main = i === state.selected;
      const circle = document.createElementNS(SVG, "circle");
      circle.setAttribute("cx", box.left + px);
      circle.setAttribute("cy", box.top + py);
      circle.setAttribute("r", (main ? size + 11 : size + 6) / 2);
      circle.setAttribute("stroke-width", main ? 3 : 1.8);
      circle.dataset.index = String(i);
      return circle;
    }

    /** The placed abstract's mark (a square turned on its corner) at (x, y), if in view. */
    function placedMark(box, placed) {
      const [px, py] = toPixel(box, placed.x, placed.y);
      if (px < 0 || px > box.w || py < 0 || py > box.h) return null;
      const mark = document.createElementNS(SVG, "rect");
      const half = D.DATA.point_size + 3;
      mark.setAttribute("x", box.left + px - half);
      mark.setAttribute("y", box.top + py - half);
      mark.setAttribute("width", 2 * half);
      mark.setAttribute("height", 2 * half);
      mark.setAttribute("transform", `rotate(45 ${box.left + px} ${box.top + py})`);
      mark.setAttribute("class", "placed-mark");
      return mark;
    }

    /** Panel k's rings: the paper shown and its similar papers, the placed abstract's nearest
     * papers (class placed-ring) and its mark. */
    function panelRings(panel, box) {
      const out = [];
      const ringed = state.selected === null ? [] : [state.selected, ...state.neighbours];
      const placed = state.placed;
      for (const [list, className] of [
        [ringed, null],
        [placed ? placed.neighbours : [], "placed-ring"],
      ]) {
        for (const i of list) {
          if (panel.venue !== null && D.venue[i] !== panel.venue) continue;
          const circle = ring(box, i);
          if (circle !== null && className) circle.setAttribute("class", className);
          if (circle !== null) out.push(circle);
        }
      }
      const mark = placed ? placedMark(box, placed) : null;
      return mark ? [...out, mark] : out;
    }

    function place(ranges) {
      svg.replaceChildren();
      const nothing = state.selected === null && state.placed === null;
      if (gd.layout === undefined || nothing) return; // not drawn yet, or nothing to ring
      cover(gd, svg);
      const boxes = layout.boxes();
      layout.panels().forEach((panel, k) => {
        svg.append(...panelRings(panel, { ...boxes[k], ...(ranges || {}) }));
      });
    }

    return place;
  }

  /** Pan plot gd (keeping the zoom) so paper i is inside the visible ranges. */
  function reveal(D, gd, i) {
    const layout = gd.layout;
    if (!layout?.xaxis?.range) return Promise.resolve();
    const change = {};
    for (const [axis, value] of [
      ["xaxis", D.x[i]],
      ["yaxis", D.y[i]],
    ]) {
      const [low, high] = layout[axis].range;
      if (value < low || value > high) {
        change[`${axis}.range`] = [value - (high - low) / 2, value + (high - low) / 2];
      }
    }
    return Object.keys(change).length ? Plotly.relayout(gd, change) : Promise.resolve();
  }

  /** The figure over data D and the page's state; draws into the element gd. */
  function make(D, state, gd) {
    const TopicMap = window.TopicMap;
    const layout = TopicMap.layout.make(D, state, gd);
    const points = traces(D, state);
    const labels = TopicMap.labels.layer(D, state, gd, layout.boxes);
    const placeRings = rings(D, state, gd, layout);
    const density = TopicMap.density.make(D, state); // its images under the points
    function draw() {
      const data = points.build(layout.panels(), layout.axisOf);
      const built = { ...layout.build(), images: density.images(layout.panels()) };
      return Plotly.react(gd, data, built, PLOT_CONFIG).then(() => {
        labels.place(); // plotly resolves with gd: no drag ranges to pass on
        placeRings();
      });
    }

    /** The paper under an event's point (plotly_hover, plotly_click), or undefined. */
    function paperAt(point) {
      const list = point && points.drawn.get(point.data.uid);
      return list ? list[point.pointNumber] : undefined;
    }

    // relabel(ranges?): the labels again for the panels as drawn now, or over a drag's ranges
    return {
      draw,
      relabel: labels.place,
      placeRings,
      paperAt,
      paperColour: points.paperColour,
      reveal: (i) => reveal(D, gd, i),
      density,
      drawn: points.drawn,
      points: points.type,
    };
  }

  window.TopicMap.define("figure", ["helpers", "labels", "layout", "colour", "density"], () => ({
    make,
  }));
})();

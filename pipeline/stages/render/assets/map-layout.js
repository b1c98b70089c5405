/* The map's panels and plotly layout (part `layout`): which panels a view has and where each
 * sits (a row of up to three venues, above three a grid of small multiples, ceil(sqrt(n))
 * columns, each panel's header in the gap above it; one panel for all papers combined), each
 * panel's box in pixels for the labels and rings laid over the plot, the panels' headers
 * (plotly annotations, escaped for plotly's pseudo-HTML) and the plotly layout itself.
 */
(() => {
  "use strict";

  const { fmt } = window.TopicMap.helpers;
  const GAP = 0.025;
  const HEADER_PX = 24; // the gap above a grid row, for its panels' headers
  const MARGIN = { l: 8, r: 8, t: 30, b: 8 };
  const FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif";
  let layoutsBuilt = 0; // each layout built a new selectionrevision

  /** Axis k's name suffix: "" for the first panel's x and y, then "2", "3", ... */
  const suffix = (k) => (k === 0 ? "" : String(k + 1));
  /** Panel k's axes' names, as a trace names them: {xaxis: "x", yaxis: "y"}, then "x2", ... */
  const axisOf = (k) => ({ xaxis: `x${suffix(k)}`, yaxis: `y${suffix(k)}` });
  const same = (a, b) => Math.abs(a[0] - b[0]) < 1e-6 && Math.abs(a[1] - b[1]) < 1e-6;

  /**
   * Each of n panels' domain {x: [from, to], y: [from, to]} in a plot `height` pixels high: a
   * row for up to three panels, else a grid of ceil(sqrt(n)) columns with a header's height
   * between its rows.
   */
  function domains(n, height) {
    const grid = n > 3;
    const cols = grid ? Math.ceil(Math.sqrt(n)) : n;
    const rows = Math.ceil(n / cols);
    const width = (1 - GAP * (cols - 1)) / cols;
    const vgap = grid ? Math.min(0.2, HEADER_PX / height) : 0;
    const rowHeight = (1 - vgap * (rows - 1)) / rows;
    return Array.from({ length: n }, (_, k) => {
      const x0 = (k % cols) * (width + GAP);
      const top = 1 - Math.floor(k / cols) * (rowHeight + vgap);
      return { x: [x0, x0 + width], y: [top - rowHeight, top] };
    });
  }

  /** A panel's size and offset in gd, in pixels, from its domain and the plot's size. */
  function pixelBox(domain, width, height) {
    return {
      w: width * (domain.x[1] - domain.x[0]),
      h: height * (domain.y[1] - domain.y[0]),
      left: MARGIN.l + width * domain.x[0],
      top: MARGIN.t + height * (1 - domain.y[1]),
    };
  }

  /** "12 of 339 papers" while a search, topic or year range keeps some; else "339 papers". */
  function counter(D, state) {
    const venues = D.DATA.venues.length;
    const totals = D.DATA.venues.map((_, v) => D.venue.reduce((n, w) => n + (w === v), 0));
    let keptFor = null; // the state.active the counts below are of
    let kept = [];
    return (venue) => {
      const total = venue === null ? D.N : totals[venue];
      if (state.active === null) return `${fmt(total)} papers`;
      if (keptFor !== state.active) {
        keptFor = state.active;
        kept = new Array(venues + 1).fill(0);
        for (let i = 0; i < D.N; i++) {
          if (!state.active[i]) continue;
          kept[D.venue[i]]++;
          kept[venues]++;
        }
      }
      return `${fmt(kept[venue === null ? venues : venue])} of ${fmt(total)} papers`;
    };
  }

  /** Panel k's axes: its domain, the full ranges, the first panel's zoom shared by all. */
  function axes(k, domain, DATA) {
    const common = {
      showticklabels: false,
      showgrid: false,
      zeroline: false,
      showline: true,
      linecolor: DATA.colours.axis,
      mirror: true,
      fixedrange: false,
    };
    const matches = (axis) => (k ? { matches: axis } : {});
    return {
      [`xaxis${suffix(k)}`]: {
        ...common,
        domain: domain.x,
        range: DATA.x_range.slice(),
        anchor: `y${suffix(k)}`,
        ...matches("x"),
      },
      [`yaxis${suffix(k)}`]: {
        ...common,
        domain: domain.y,
        range: DATA.y_range.slice(),
        anchor: `x${suffix(k)}`,
        ...matches("y"),
      },
    };
  }

  /** The layout over data D, the page's state and the plot element gd. */
  function make(D, state, gd) {
    const DATA = D.DATA;
    const countText = counter(D, state);
    const plotWidth = () => Math.max(200, gd.clientWidth - MARGIN.l - MARGIN.r);
    const plotHeight = () => Math.max(200, gd.clientHeight - MARGIN.t - MARGIN.b);

    /** The view's panels: {venue (an index, or null: all papers), name, group}. */
    const panels = () => window.TopicMap.venues.panels(DATA, state); // map-venues.js

    /**
     * Each panel's visible ranges, size and offset in gd, in pixels. The ranges are those of
     * gd.layout, which plotly keeps as the user pans and zooms, where the panels drawn are the
     * view's (else the full ranges: a view not drawn yet); the pixels come from the domains, the
     * margins and gd's size, as plotly lays them out.
     */
    function boxes() {
      const shown = gd.layout || {};
      const shownPanels = panels();
      return domains(shownPanels.length, plotHeight()).map((domain, k) => {
        const xa = shown[`xaxis${suffix(k)}`];
        const ya = shown[`yaxis${suffix(k)}`];
        const drawn =
          xa?.range && ya?.range && same(xa.domain, domain.x) && same(ya.domain, domain.y);
        const xr = drawn ? xa.range : DATA.x_range;
        const yr = drawn ? ya.range : DATA.y_range;
        const venue = shownPanels[k].venue; // the labels a panel shows depend on its venue
        const grid = shownPanels.length > 3;
        return { xr, yr, venue, grid, ...pixelBox(domain, plotWidth(), plotHeight()) };
      });
    }

    /** Each panel's header: its venue and number of papers, the count left out where a
     * grid's panel is too narrow for both. */
    function annotations(laid) {
      const fontSize = laid.length > 3 ? 12 : 13;
      return panels().map((panel, k) => {
        const counted = countText(panel.venue);
        const room = plotWidth() * (laid[k].x[1] - laid[k].x[0]);
        return {
          text: window.TopicMap.venues.header(DATA, panel, counted, room, fontSize),
          xref: `x${suffix(k)} domain`,
          yref: `y${suffix(k)} domain`,
          x: 0,
          xanchor: "left",
          y: 1,
          yanchor: "bottom",
          showarrow: false,
          font: { size: fontSize, color: DATA.colours.text },
          name: "panel-header",
        };
      });
    }

    /** The plotly layout of the view as it is now. */
    function build() {
      const laid = domains(panels().length, plotHeight());
      const layout = {
        margin: MARGIN,
        showlegend: false,
        hovermode: "closest",
        dragmode: state.dragmode || "pan", // "select" or "lasso": map-select.js
        // no plotly selection kept through a redraw: a box or lasso is state.selection's
        selectionrevision: ++layoutsBuilt,
        plot_bgcolor: DATA.colours.plot,
        paper_bgcolor: DATA.colours.paper,
        uirevision: state.view,
        annotations: annotations(laid),
        font: { family: FONT },
      };
      for (const [k, domain] of laid.entries()) Object.assign(layout, axes(k, domain, DATA));
      return layout;
    }

    return { panels, boxes, build, axisOf };
  }

  window.TopicMap.define("layout", ["helpers", "venues"], () => ({ make }));
})();

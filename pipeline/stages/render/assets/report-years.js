/* The report's per-year section (index.html, after report.js): every chart drawn on demand from
 * one compact table, #year-data (render's years.py): the years, the venues and their colours,
 * the rows (themes, then topics) and venue_years' count, share, z and flag of each row x venue
 * x year, packed as little-endian arrays, raw-deflated and base64-encoded.
 *
 * A theme's trend chart is drawn when it scrolls into view, its figures' table when its
 * "The figures" opens; the chosen topic's trend and the chosen year's venue comparison (a dot
 * chart for up to three venues, a heatmap for more, as the report's own comparison above) when
 * they come into view and when the choice changes. Plain JavaScript, no network; labels are
 * escaped for plotly's pseudo-HTML and table text is set with textContent.
 */
(() => {
  "use strict";

  const island = document.getElementById("year-data");
  const section = document.getElementById("years-section");
  if (!island || !section) return;
  const DATA = JSON.parse(island.textContent);
  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  const templateData = document.getElementById("plotly-template");
  const TEMPLATE = templateData ? JSON.parse(templateData.textContent) : null;
  const FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif";
  const MARK = { 1: "▲", 0: "", "-1": "▼" };
  const FLAG = { 1: "over", 0: "none", "-1": "under" };
  const nRows = DATA.rows.length;
  const nVenues = DATA.venues.length;
  const nYears = DATA.years.length;
  const esc = (text) =>
    String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const pct = (share) => Math.round(100000 * share) / 1000; // a share as % to 3 decimals

  /** The cells: {count, share, z, flag}, typed arrays over row x venue x year. */
  async function unpack() {
    const text = atob(DATA.cells);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    const buffer = await new Response(stream).arrayBuffer();
    const n = nRows * nVenues * nYears;
    return {
      count: new Uint32Array(buffer, 0, n),
      share: new Float32Array(buffer, 4 * n, n),
      z: new Float32Array(buffer, 8 * n, n),
      flag: new Int8Array(buffer, 12 * n, n),
    };
  }
  const cellsReady = unpack();

  /** Row r's cell at venue v in year index y: null where the venue had no papers that year. */
  function cell(cells, r, v, y) {
    const papers = DATA.papers[v][y];
    if (!papers) return null;
    const at = (r * nVenues + v) * nYears + y;
    const z = cells.z[at];
    return {
      venue: DATA.venues[v],
      year: DATA.years[y],
      label: DATA.rows[r][2],
      count: cells.count[at],
      share: cells.share[at],
      z: Number.isNaN(z) ? null : z,
      flag: cells.flag[at],
      papers,
    };
  }

  /** The hover text of a cell, as the report's comparison words it (charts.share_hover). */
  function hover(c) {
    let text =
      `<b>${esc(c.label)}</b><br>${esc(c.venue)} ${c.year}: ${c.count.toLocaleString("en-US")} ` +
      `of ${c.papers.toLocaleString("en-US")} papers (${(100 * c.share).toFixed(1)}%)`;
    if (c.z !== null) text += `<br>z = ${c.z >= 0 ? "+" : ""}${c.z.toFixed(1)}`;
    if (c.flag) text += `, ${FLAG[c.flag]}-represented that year`;
    return text;
  }

  function draw(div, figure) {
    const layout = TEMPLATE ? { ...figure.layout, template: TEMPLATE } : figure.layout;
    return Plotly.react(div, figure.data, layout, PLOT_CONFIG);
  }

  /** Row r's share of each venue's papers per year: a line per venue in its colour; a flagged
   * year a larger outlined dot with ▲/▼ above it. */
  function trendFigure(cells, r) {
    const data = [];
    DATA.venues.forEach((venue, v) => {
      const shown = DATA.years.map((_, y) => cell(cells, r, v, y)).filter((c) => c !== null);
      if (!shown.length) return;
      const colour = DATA.colours[v];
      data.push({
        type: "scatter",
        x: shown.map((c) => c.year),
        y: shown.map((c) => pct(c.share)),
        mode: "lines+markers+text",
        name: esc(venue),
        line: { color: colour, width: 2 },
        marker: {
          color: colour,
          size: shown.map((c) => (c.flag ? 11 : 7)),
          line: { color: "#111", width: shown.map((c) => (c.flag ? 2 : 0)) },
        },
        text: shown.map((c) => MARK[c.flag]),
        textposition: "top center",
        textfont: { color: colour, size: 12 },
        hovertext: shown.map(hover),
        hoverinfo: "text",
        showlegend: false,
      });
    });
    const step = Math.ceil(nYears / 12); // at most about a dozen year ticks
    const ticks = DATA.years.filter((_, y) => y % step === 0);
    const layout = {
      height: 240,
      margin: { l: 45, r: 10, t: 10, b: 30 },
      plot_bgcolor: "#fff",
      xaxis: { tickvals: ticks, ticktext: ticks.map(String), fixedrange: true },
      yaxis: {
        title: { text: "% of papers" },
        rangemode: "tozero",
        gridcolor: "#eceef1",
        fixedrange: true,
      },
      hoverlabel: { align: "left" },
      font: { family: FONT, size: 11 },
    };
    return { data, layout };
  }

  /** Row ids top first (charts.comparison_order): two venues by the difference of their
   * shares, more by the spread, one by the share; ties by id. */
  function order(rows) {
    const key = (row) => {
      const shares = row.cells.map((c) => c.share);
      if (shares.length === 2) return shares[0] - shares[1];
      if (shares.length > 2) return Math.max(...shares) - Math.min(...shares);
      return shares[0];
    };
    return rows
      .map((row) => ({ row, key: key(row) }))
      .sort((a, b) => b.key - a.key || a.row.id - b.row.id)
      .map((item) => item.row);
  }

  function heatmap(rows, venues, what) {
    const mark = (c) => `${(100 * c.share).toFixed(1)}${MARK[c.flag]}`;
    const data = [
      {
        type: "heatmap",
        z: rows.map((row) => row.cells.map((c) => pct(c.share))),
        x: venues.map(esc),
        y: rows.map((row) => esc(row.label)),
        text: rows.map((row) => row.cells.map(mark)),
        texttemplate: "%{text}",
        textfont: { size: 11 },
        customdata: rows.map((row) => row.cells.map(hover)),
        hovertemplate: "%{customdata}<extra></extra>",
        colorscale: [
          [0, "#ffffff"],
          [1, "#1c3d7a"],
        ],
        colorbar: { title: { text: "share of the<br>venue's papers (%)", side: "top" } },
        xgap: 2,
        ygap: 2,
      },
    ];
    const layout = {
      height: Math.max(300, 24 * rows.length + 140),
      margin: { l: 10, r: 10, t: 90, b: 10 },
      plot_bgcolor: "#fff",
      xaxis: { side: "top", tickangle: venues.length > 6 ? -30 : 0, fixedrange: true },
      yaxis: { autorange: "reversed", automargin: true, fixedrange: true },
      title: { text: `share of each venue's papers in the ${what} (%)`, x: 0, y: 0.995 },
      hoverlabel: { align: "left" },
      font: { family: FONT },
    };
    return { data, layout };
  }

  /** A line per row from its lowest to its highest share, the marked rows' darker. */
  function rangeLines(rows, venues, position, marked) {
    return [false, true].map((significant) => {
      const xs = [];
      const ys = [];
      for (const row of rows) {
        if (marked.has(row.id) !== significant || venues.length < 2) continue;
        const shares = row.cells.map((c) => pct(c.share));
        xs.push(Math.min(...shares), Math.max(...shares), null);
        ys.push(position.get(row.id), position.get(row.id), null);
      }
      const line = { color: significant ? "#59636e" : "#d0d5db", width: 3 };
      return {
        type: "scatter",
        x: xs,
        y: ys,
        mode: "lines",
        line,
        hoverinfo: "skip",
        showlegend: false,
      };
    });
  }

  function dots(rows, venues, what) {
    const position = new Map(rows.map((row, p) => [row.id, rows.length - 1 - p]));
    const marked = new Set(rows.filter((row) => row.cells.some((c) => c.flag)).map((r) => r.id));
    const data = rangeLines(rows, venues, position, marked);
    venues.forEach((venue, k) => {
      const cells = rows.map((row) => row.cells[k]);
      data.push({
        type: "scatter",
        x: cells.map((c) => pct(c.share)),
        y: rows.map((row) => position.get(row.id)),
        mode: "markers",
        name: esc(venue),
        marker: {
          color: DATA.colours[DATA.venues.indexOf(venue)],
          size: cells.map((c) => (c.flag ? 13 : 10)),
          line: { color: "#111", width: cells.map((c) => (c.flag ? 2 : 0)) },
        },
        text: cells.map(hover),
        hovertemplate: "%{text}<extra></extra>",
      });
    });
    if (marked.size) {
      data.push({
        type: "scatter",
        x: [null],
        y: [null],
        mode: "markers",
        name: "significant difference",
        marker: { color: "#fff", size: 12, line: { color: "#111", width: 2 } },
      });
    }
    const layout = {
      height: Math.max(260, 24 * rows.length + 110),
      margin: { l: 10, r: 20, t: 60, b: 20 },
      plot_bgcolor: "#fff",
      xaxis: {
        title: { text: `share of the venue's papers in the ${what} (%)` },
        side: "top",
        gridcolor: "#eceef1",
        zeroline: false,
        rangemode: "tozero",
      },
      yaxis: {
        tickvals: rows.map((row) => position.get(row.id)),
        ticktext: rows.map((row) =>
          marked.has(row.id) ? `<b>${esc(row.label)}</b>` : esc(row.label),
        ),
        automargin: true,
        gridcolor: "#f3f4f6",
        range: [-0.7, rows.length - 0.3],
        fixedrange: true,
      },
      legend: { orientation: "h", x: 0, y: -0.02, yanchor: "top" },
      hoverlabel: { align: "left" },
      font: { family: FONT },
    };
    return { data, layout };
  }

  /** One year's venue comparison of one level ("theme" or "topic"): the venues with papers
   * that year, each row's cells, a dot chart for up to three venues, else a heatmap. */
  function yearFigure(cells, level, y) {
    const present = DATA.venues.map((_, v) => v).filter((v) => DATA.papers[v][y] > 0);
    const rows = [];
    DATA.rows.forEach(([rowLevel, id, label], r) => {
      if (rowLevel !== level) return;
      rows.push({ id, label, cells: present.map((v) => cell(cells, r, v, y)) });
    });
    const venues = present.map((v) => DATA.venues[v]);
    const sorted = order(rows);
    return venues.length > 3 ? heatmap(sorted, venues, level) : dots(sorted, venues, level);
  }

  /** The table of row r's figures (the venues' share per year, ▲/▼ said in words too). */
  function trendTable(cells, r) {
    const table = document.createElement("table");
    table.className = "data";
    const head = table.createTHead().insertRow();
    const th = (text, className) => {
      const node = document.createElement("th");
      node.textContent = text;
      if (className) node.className = className;
      head.append(node);
    };
    th("Venue");
    for (const year of DATA.years) th(String(year), "num");
    const body = table.createTBody();
    DATA.venues.forEach((venue, v) => {
      const row = DATA.years.map((_, y) => cell(cells, r, v, y));
      if (row.every((c) => c === null)) return;
      const tr = body.insertRow();
      tr.insertCell().textContent = venue;
      for (const c of row) {
        const td = tr.insertCell();
        td.className = "num";
        td.textContent = c === null ? "–" : `${(100 * c.share).toFixed(1)}%`;
        if (c?.flag) td.append(markSpan(c));
      }
    });
    return table;
  }

  function markSpan(c) {
    const words = ` significantly ${FLAG[c.flag]}-represented at ${c.venue} that year`;
    const span = document.createElement("span");
    span.className = `mark ${FLAG[c.flag]}`;
    span.title = words.trim();
    const shown = document.createElement("span");
    shown.setAttribute("aria-hidden", "true");
    shown.textContent = MARK[c.flag];
    const said = document.createElement("span");
    said.className = "visually-hidden";
    said.textContent = words;
    span.append(shown, said);
    return span;
  }

  const rowOf = new Map(DATA.rows.map(([level, id], r) => [`trend-${level}-${id}`, r]));
  const yearSelect = document.getElementById("year-select");
  const topicSelect = document.getElementById("topic-trend-select");

  async function drawYear() {
    const cells = await cellsReady;
    const y = DATA.years.indexOf(Number(yearSelect.value));
    const plots = section.querySelectorAll(".year-plot");
    await Promise.all([...plots].map((div) => draw(div, yearFigure(cells, div.dataset.level, y))));
    section.dataset.year = yearSelect.value;
  }

  async function drawTopic() {
    const cells = await cellsReady;
    const div = document.getElementById("topic-trend");
    await draw(div, trendFigure(cells, rowOf.get(topicSelect.value)));
    div.dataset.topic = topicSelect.value;
  }

  async function drawTrend(div) {
    const cells = await cellsReady;
    await draw(div, trendFigure(cells, Number(div.dataset.row)));
    div.dataset.drawn = "true";
  }

  // what to draw when an element first comes into view (or at once, without an observer)
  const onShow = new Map();
  const observer =
    "IntersectionObserver" in window
      ? new IntersectionObserver(
          (entries) => {
            for (const entry of entries) {
              if (!entry.isIntersecting) continue;
              observer.unobserve(entry.target);
              onShow.get(entry.target)();
            }
          },
          { rootMargin: "300px 0px" },
        )
      : null;
  function whenShown(node, action) {
    if (!node) return;
    if (observer === null) {
      action();
      return;
    }
    onShow.set(node, action);
    observer.observe(node);
  }

  for (const div of section.querySelectorAll(".trend-plot[data-row]")) {
    whenShown(div, () => drawTrend(div));
  }
  for (const details of section.querySelectorAll(".trend-figures")) {
    details.addEventListener("toggle", async () => {
      if (!details.open || details.querySelector("table")) return;
      const wide = document.createElement("div"); // a long span of years scrolls sideways
      wide.className = "wide-table";
      wide.tabIndex = 0;
      wide.setAttribute("role", "region");
      const caption = details.closest("figure")?.querySelector("figcaption");
      wide.setAttribute("aria-label", `${caption ? caption.textContent : "The"} figures`);
      wide.append(trendTable(await cellsReady, Number(details.dataset.row)));
      details.append(wide);
    });
  }
  if (yearSelect) {
    yearSelect.addEventListener("change", drawYear);
    whenShown(section.querySelector(".year-plot"), drawYear);
  }
  if (topicSelect) {
    topicSelect.addEventListener("change", drawTopic);
    whenShown(document.getElementById("topic-trend"), drawTopic);
  }
})();

/* The report page (index.html): the venue comparison charts and sortable tables. Plain
 * JavaScript, no network. The charts are plotly figures (data and layout) in the JSON island
 * #chart-data, each drawn into the element whose id it names.
 * A header cell with class "sortable" sorts its table's body rows by that column; cells may
 * carry data-sort (a number) to sort by instead of their text. Rows with class "pinned"
 * (the unassigned papers) stay at the bottom.
 */
(() => {
  "use strict";

  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  // plotly.py's layout template, carried once by the page rather than by every figure
  const templateData = document.getElementById("plotly-template");
  const TEMPLATE = templateData ? JSON.parse(templateData.textContent) : null;
  const layoutOf = (figure) =>
    TEMPLATE ? { ...figure.layout, template: TEMPLATE } : figure.layout;
  const charts = document.getElementById("chart-data");
  for (const chart of charts ? JSON.parse(charts.textContent) : []) {
    Plotly.newPlot(chart.id, chart.figure.data, layoutOf(chart.figure), PLOT_CONFIG);
  }

  // The per-year section: the venue comparison of the year chosen, from #year-data
  // ({year: [{id, figure}]}), drawn again into the same elements when the year changes.
  const yearData = document.getElementById("year-data");
  const yearSelect = document.getElementById("year-select");
  if (yearData && yearSelect) {
    const byYear = JSON.parse(yearData.textContent);
    const drawYear = () => {
      for (const chart of byYear[yearSelect.value] || []) {
        Plotly.react(chart.id, chart.figure.data, layoutOf(chart.figure), PLOT_CONFIG);
      }
      document.getElementById("years-section").dataset.year = yearSelect.value;
    };
    yearSelect.addEventListener("change", drawYear);
    drawYear();
  }

  // One topic's trend, chosen from #topic-trend-select, from #topic-trend-data ([{id, figure}]).
  const topicData = document.getElementById("topic-trend-data");
  const topicSelect = document.getElementById("topic-trend-select");
  if (topicData && topicSelect) {
    const trends = new Map(JSON.parse(topicData.textContent).map((t) => [t.id, t.figure]));
    const drawTopic = () => {
      const figure = trends.get(topicSelect.value);
      if (figure) Plotly.react("topic-trend", figure.data, layoutOf(figure), PLOT_CONFIG);
      document.getElementById("topic-trend").dataset.topic = topicSelect.value;
    };
    topicSelect.addEventListener("change", drawTopic);
    drawTopic();
  }

  // Sorting is our own 40 lines rather than a table library: no build step, nothing to fetch.
  function key(cell) {
    if (!cell) return "";
    const raw = cell.dataset.sort;
    if (raw !== undefined && raw !== "" && !Number.isNaN(Number(raw))) return Number(raw);
    return cell.textContent.trim().toLowerCase();
  }

  function sortBy(table, column, header) {
    const body = table.tBodies[0];
    const descending = header.getAttribute("aria-sort") !== "descending";
    for (const th of table.tHead.querySelectorAll("th")) th.removeAttribute("aria-sort");
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    const rows = [...body.rows];
    const pinned = rows.filter((r) => r.classList.contains("pinned"));
    const sorted = rows
      .filter((r) => !r.classList.contains("pinned"))
      .map((row, position) => ({ row, position, value: key(row.cells[column]) }))
      .sort((a, b) => {
        let order = 0;
        if (typeof a.value === "number" && typeof b.value === "number") order = a.value - b.value;
        else order = String(a.value).localeCompare(String(b.value));
        if (descending) order = -order;
        return order || a.position - b.position;
      });
    body.replaceChildren(...sorted.map((s) => s.row), ...pinned);
  }

  for (const table of document.querySelectorAll("table.sortable-table")) {
    [...table.tHead.rows[0].cells].forEach((header, column) => {
      if (!header.classList.contains("sortable")) return;
      header.tabIndex = 0;
      header.addEventListener("click", () => sortBy(table, column, header));
      header.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          sortBy(table, column, header);
        }
      });
    });
  }
})();

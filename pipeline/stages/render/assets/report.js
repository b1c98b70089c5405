/* The report page (index.html): the venue comparison charts and sortable tables. Plain
 * JavaScript, no network. The charts are plotly figures (data and layout) in the JSON island
 * #chart-data, each drawn into the element whose id it names when it first comes into view
 * (the per-year section's are report-years.js's, drawn on demand too).
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
  const figures = new Map(); // element id -> figure, for the charts not drawn yet
  for (const chart of charts ? JSON.parse(charts.textContent) : [])
    figures.set(chart.id, chart.figure);
  const drawChart = (id) => {
    const figure = figures.get(id);
    figures.delete(id);
    return figure ? Plotly.newPlot(id, figure.data, layoutOf(figure), PLOT_CONFIG) : null;
  };
  // Each chart is drawn when it first comes within 300 px of the view: the page is ready (the
  // mark the tests and the bench wait for) once those in the first view are drawn, and a long
  // report does not spend its load on charts below it.
  const ready = () => {
    document.body.dataset.ready = "true";
  };
  if ("IntersectionObserver" in window && figures.size) {
    let first = true;
    const observer = new IntersectionObserver(
      (entries) => {
        const drawn = entries
          .filter((entry) => entry.isIntersecting)
          .map((entry) => {
            observer.unobserve(entry.target);
            return drawChart(entry.target.id);
          });
        if (first) Promise.all(drawn).then(ready);
        first = false;
      },
      { rootMargin: "300px 0px" },
    );
    for (const id of figures.keys()) observer.observe(document.getElementById(id));
  } else {
    Promise.all([...figures.keys()].map(drawChart)).then(ready);
  }
  /** Draw every chart not drawn yet (a printout, a test that reads them all). */
  window.drawAllCharts = () => Promise.all([...figures.keys()].map(drawChart));

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

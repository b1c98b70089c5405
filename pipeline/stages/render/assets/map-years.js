/* The map's year histogram (part `years`): the papers per year, stacked by venue where there are
 * several, of those the search, the topic list and a selection keep; a brush over it chooses
 * the year range (drag across the bars, or drag either end), and its two ends are sliders the
 * keyboard moves (arrow keys a year, Page Up and Down five, Home and End to the ends). The range
 * is the page's (state.years, set by actions.setYears), which the two year selects show too.
 *
 * Plain SVG bars in the toolbar: the map's plotly bundle (gl2d) draws no bar charts, and a
 * brush over a few dozen bars needs no chart library.
 */
(() => {
  "use strict";

  const { el, fmt, byId } = window.TopicMap.helpers;
  const SVG = "http://www.w3.org/2000/svg";
  const HEIGHT = 34; // the bars' height in pixels; the year labels sit below
  const PAGE_STEP = 5; // years Page Up and Down move an end

  function svgNode(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    return node;
  }

  /** Papers per year and venue: counts[k * venues + v] for year years[k], of the papers
   * `keeps(i)` holds (all papers where keeps is null); undated papers are not counted. */
  function countYears(D, keeps) {
    const years = D.DATA.years.years;
    const venues = D.DATA.venues.length;
    const first = years[0];
    const place = new Int32Array(years[years.length - 1] - first + 1).fill(-1);
    years.forEach((y, k) => {
      place[y - first] = k;
    });
    const counts = new Uint32Array(years.length * venues);
    for (let i = 0; i < D.N; i++) {
      if (D.year[i] === 0 || (keeps !== null && !keeps(i))) continue;
      const k = place[D.year[i] - first];
      if (k >= 0) counts[k * venues + D.venue[i]]++;
    }
    return counts;
  }

  /** Where each year sits: {first, last, slot (pixels a year), width, xOf(year), yearAt(x)
   * (the year with papers nearest to x pixels from the left)}. */
  function scaleOf(years) {
    const first = years[0];
    const last = years[years.length - 1];
    const slot = Math.max(6, Math.min(40, Math.floor(240 / (last - first + 1))));
    const xOf = (year) => (year - first) * slot;
    function yearAt(x) {
      const raw = first + Math.floor(x / slot);
      return years.reduce((best, y) => (Math.abs(y - raw) < Math.abs(best - raw) ? y : best));
    }
    return { first, last, slot, width: slot * (last - first + 1), xOf, yearAt };
  }

  /** The histogram's elements in `box`: {area (bars, brush and ends), svg, brush, handles}. */
  function elements(box, scale) {
    const { first, last, width } = scale;
    const svg = svgNode("svg", { width, height: HEIGHT, class: "year-bars", role: "img" });
    const brush = el("div", "year-brush");
    const handles = ["First", "Last"].map((which, end) => {
      const handle = el("div", "year-handle");
      handle.tabIndex = 0;
      handle.setAttribute("role", "slider");
      handle.setAttribute("aria-label", `${which} year shown`);
      handle.setAttribute("aria-valuemin", String(first));
      handle.setAttribute("aria-valuemax", String(last));
      handle.dataset.end = String(end);
      return handle;
    });
    const area = el("div", "year-area");
    Object.assign(area.style, { width: `${width}px`, height: `${HEIGHT}px` });
    area.append(svg, brush, ...handles);
    const axis = el("div", "year-axis");
    axis.style.width = `${width}px`;
    axis.append(el("span", null, String(first)), el("span", null, String(last)));
    box.replaceChildren(area, axis);
    return { area, svg, brush, handles };
  }

  /** Draw the bars of `counts` (countYears'): each year's stack of venues, scaled to the
   * tallest, with its count in a tooltip and all of them in the chart's accessible name. */
  function drawBars(DATA, svg, scale, counts) {
    const { years } = DATA.years;
    const venues = DATA.venues.length;
    const perYear = years.map((_, k) => counts.slice(k * venues, (k + 1) * venues));
    const sums = perYear.map((c) => c.reduce((a, b) => a + b, 0));
    const top = Math.max(1, ...sums);
    const groups = years.map((year, k) => {
      const group = svgNode("g", { "data-year": String(year), "data-count": String(sums[k]) });
      let base = HEIGHT;
      const parts = [];
      for (let v = 0; v < venues; v++) {
        if (perYear[k][v] === 0) continue;
        const h = (perYear[k][v] / top) * HEIGHT;
        const at = { x: scale.xOf(year) + 1, y: base - h, width: scale.slot - 2, height: h };
        group.append(svgNode("rect", { ...at, fill: DATA.venue_colours[v] }));
        base -= h;
        parts.push(`${DATA.venues[v]} ${fmt(perYear[k][v])}`);
      }
      const title = svgNode("title", {});
      const split = venues > 1 ? ` (${parts.join(", ")})` : "";
      title.textContent = `${year}: ${fmt(sums[k])} papers${split}`;
      group.append(title);
      return group;
    });
    svg.replaceChildren(...groups);
    const summary = years.map((year, k) => `${year} ${fmt(sums[k])}`).join(", ");
    svg.setAttribute("aria-label", `Papers per year: ${summary}`);
  }

  /** Show `range` ([from, to]) on the bars, the brush, the sliders and the two selects. */
  function markRange(parts, scale, range) {
    const [from, to] = range;
    const { xOf, slot } = scale;
    for (const group of parts.svg.querySelectorAll("g")) {
      const year = Number(group.dataset.year);
      group.classList.toggle("out", year < from || year > to);
    }
    Object.assign(parts.brush.style, {
      left: `${xOf(from)}px`,
      width: `${xOf(to) - xOf(from) + slot}px`,
    });
    parts.handles.forEach((handle, end) => {
      const year = range[end];
      handle.style.left = `${end === 0 ? xOf(year) : xOf(year) + slot}px`;
      handle.setAttribute("aria-valuenow", String(year));
      handle.setAttribute("aria-valuetext", `${year}, range ${from} to ${to}`);
    });
    [byId("year-from"), byId("year-to")].forEach((select, end) => {
      if (select) select.value = String(range[end]);
    });
  }

  /** setYears(from, to) one range at a time: a key held down or a drag let go while the map is
   * still being drawn asks once more, for the latest range only. */
  function queued(setYears) {
    let running = null;
    let next = null;
    return (range) => {
      next = range.slice();
      if (running) return running;
      running = (async () => {
        while (next) {
          const [from, to] = next;
          next = null;
          await setYears(from, to);
        }
        running = null;
      })();
      return running;
    };
  }

  /** The histogram in #year-histogram over data D and the page's state, its brush calling
   * actions.setYears(from, to): {show(keeps), mark()}. Null where the map has one year. */
  function make(D, state, actions) {
    const box = byId("year-histogram");
    const years = D.DATA.years.years;
    if (!box || years.length < 2) return null;
    const scale = scaleOf(years);
    const parts = elements(box, scale);
    const totals = countYears(D, null);
    const send = queued(actions.setYears);
    let range = [scale.first, scale.last]; // the page's, or a drag's before it is let go
    const follow = (from, to) => {
      range = [Math.min(from, to), Math.max(from, to)];
      markRange(parts, scale, range);
    };
    const commit = (from, to) => {
      follow(from, to);
      return send(range);
    };
    bindKeys(parts.handles, years, () => range, commit);
    bindDrag(
      parts.area,
      parts.handles,
      scale.yearAt,
      () => range,
      (from, to, done) => (done ? commit(from, to) : follow(from, to)),
    );
    parts.area.addEventListener("dblclick", () => commit(scale.first, scale.last));
    return {
      /** Redraw the bars of the papers keeps(i) holds (null: all papers). */
      show(keeps) {
        drawBars(D.DATA, parts.svg, scale, keeps === null ? totals : countYears(D, keeps));
        markRange(parts, scale, range);
      },
      /** Show the page's year range (state.years). */
      mark: () =>
        follow(
          ...(state.years === null
            ? [scale.first, scale.last]
            : [state.years.from, state.years.to]),
        ),
    };
  }

  /** Arrow keys move the focused end a year (to the next year with papers), Page Up and Down
   * five, Home and End to the first and last year; an end never passes the other. */
  function bindKeys(handles, years, current, commit) {
    handles.forEach((handle, end) => {
      handle.addEventListener("keydown", (event) => {
        const range = current().slice();
        const at = years.indexOf(range[end]);
        const moves = {
          ArrowLeft: at - 1,
          ArrowDown: at - 1,
          ArrowRight: at + 1,
          ArrowUp: at + 1,
          PageDown: at - PAGE_STEP,
          PageUp: at + PAGE_STEP,
          Home: 0,
          End: years.length - 1,
        };
        if (!(event.key in moves)) return;
        event.preventDefault();
        const other = years.indexOf(range[1 - end]);
        let to = Math.max(0, Math.min(years.length - 1, moves[event.key]));
        to = end === 0 ? Math.min(to, other) : Math.max(to, other);
        range[end] = years[to];
        commit(range[0], range[1]);
      });
    });
  }

  /** A drag across the bars chooses the years it covers; a drag of an end moves that end.
   * update(from, to, done) follows the drag and is told when it is let go. */
  function bindDrag(area, handles, yearAt, current, update) {
    let anchor = null; // the year the drag holds fixed
    let moved = false; // an end pressed and let go where it was moves nothing
    const xOf = (event) => event.clientX - area.getBoundingClientRect().left;
    area.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      const end = handles.indexOf(event.target);
      anchor = end >= 0 ? current()[1 - end] : yearAt(xOf(event));
      moved = end < 0;
      area.setPointerCapture(event.pointerId);
      area.classList.add("dragging");
      event.preventDefault();
      if (end < 0) update(anchor, anchor, false);
      else handles[end].focus();
    });
    area.addEventListener("pointermove", (event) => {
      if (anchor === null) return;
      const range = current();
      const year = yearAt(xOf(event));
      moved = moved || !range.includes(year) || range[0] === range[1];
      if (moved) update(anchor, year, false);
    });
    const release = (event) => {
      if (anchor === null) return;
      const held = anchor;
      anchor = null;
      area.classList.remove("dragging");
      if (moved) update(held, yearAt(xOf(event)), true);
    };
    area.addEventListener("pointerup", release);
    area.addEventListener("pointercancel", release);
  }

  window.TopicMap.define("years", ["helpers"], () => ({ make, countYears }));
})();

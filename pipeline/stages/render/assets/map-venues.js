/* The small multiples with many venues (part `venues`): which panels the venue view shows and
 * in what order, their headers, and which labels each panel shows.
 *
 * - Where render grouped the venues by their shared topics (DATA.venue_groups: beyond the venue
 *   palette's colours), panels sit by group, each header starts with its group's colour, and
 *   a legend in the toolbar names the groups; pressing one shows its venues' panels alone.
 * - Every header keeps its count: where the panel is too narrow for the venue's name and
 *   "12 of 339 papers" (measured in the map's font), the count is written "12/339" and the
 *   name shortened with "…".
 * - In a grid of small multiples a theme is labelled only in the panels where it is large (at
 *   least LARGE of the venue's papers, or the venue's largest), a topic (zoomed in) in those
 *   holding at least LEAST of its papers; each at the middle of its papers there, by its first
 *   term in a small font, so labels say what each venue holds rather than repeating in every
 *   panel; map-labels.js still leaves out a label that would cover another.
 */
(() => {
  "use strict";

  const { el, swatch, esc } = window.TopicMap.helpers;
  // a label's share of the panel's papers: a theme where it is large; a topic (zoomed in, few
  // in view) wherever the venue has LEAST of its papers
  const LARGE = { themes: 0.12, topics: 0 };
  const LEAST = 3; // papers a label needs in a panel
  const FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"; // map-layout.js's

  /** The venue view's panels: {venue, name, group}, by group where there are groups, only the
   * chosen group's while one is chosen. */
  function panels(DATA, state) {
    if (state.view === "combined") return [{ venue: null, name: "All venues", group: null }];
    const groups = DATA.venue_groups;
    if (!groups) return DATA.venues.map((name, venue) => ({ venue, name, group: null }));
    const out = [];
    groups.forEach((group, g) => {
      if (state.venueGroup != null && state.venueGroup !== g) return;
      for (const venue of group.venues) out.push({ venue, name: DATA.venues[venue], group: g });
    });
    return out;
  }

  let ruler = null; // a canvas context that measures text as the headers draw it
  /** The width in pixels of `text` in the map's font at `fontSize`, bold or not. */
  function widthOf(text, fontSize, bold) {
    ruler = ruler || document.createElement("canvas").getContext("2d");
    ruler.font = `${bold ? "bold " : ""}${fontSize}px ${FONT}`;
    return ruler.measureText(text).width;
  }

  /** A header's text (plotly's pseudo-HTML): the group's colour, the venue, always its count;
   * the name cut and the count shortened where `room` pixels do not hold them at `fontSize`. */
  function header(DATA, panel, counted, room, fontSize) {
    const grouped = panel.group !== null && panel.group !== undefined;
    const colour = grouped ? DATA.venue_groups[panel.group].colour : null;
    const mark = grouped ? `<span style="color:${colour}">■</span> ` : "";
    const spare = room - widthOf(grouped ? "■ " : "", fontSize, false) - 4;
    const fits = (name, count) =>
      widthOf(name, fontSize, true) + widthOf(`  ${count}`, fontSize, false) <= spare;
    const count = fits(panel.name, counted)
      ? counted
      : counted.replace(/ papers$/, "").replace(" of ", "/");
    let name = panel.name;
    while (name.length > 3 && !fits(name, count)) name = `${name.slice(0, -2)}…`;
    return `${mark}<b>${esc(name)}</b>  ${count}`;
  }

  /** Per venue, each label's papers and the sum of their places: {papers, x, y} arrays over
   * the ids of `kind` ("themes" or "topics"), made once per kind. */
  function tallies(D) {
    const made = new Map();
    return (kind) => {
      if (made.has(kind)) return made.get(kind);
      const V = D.DATA.venues.length;
      const index = new Map();
      const items = kind === "themes" ? D.DATA.themes : D.DATA.topics;
      for (const [k, item] of items.entries()) index.set(item.id, k);
      const size = V * items.length;
      const tally = {
        papers: new Int32Array(size),
        x: new Float64Array(size),
        y: new Float64Array(size),
        totals: new Int32Array(V),
        index,
      };
      for (let i = 0; i < D.N; i++) {
        tally.totals[D.venue[i]]++;
        const topic = D.topics.get(D.topic[i]);
        const id = kind === "themes" ? topic?.theme : D.topic[i];
        const k = index.get(id);
        if (k === undefined) continue;
        const at = D.venue[i] * items.length + k;
        tally.papers[at]++;
        tally.x[at] += D.x[i];
        tally.y[at] += D.y[i];
      }
      made.set(kind, tally);
      return tally;
    };
  }

  /** The labels a panel shows: all of `items` in a row of up to three panels or the combined
   * view; in a grid, those large in the panel's venue, at the middle of their papers there. */
  function labeller(D) {
    const tally = tallies(D);
    return (items, box, kind, grid) => {
      const venuePanel = grid && box.venue !== null && box.venue !== undefined;
      if (!venuePanel || !(kind in LARGE)) return items; // areas: few, each spans venues
      const t = tally(kind);
      const n = (kind === "themes" ? D.DATA.themes : D.DATA.topics).length;
      const total = t.totals[box.venue];
      let largest = null;
      const out = [];
      for (const item of items) {
        const k = t.index.get(item.id);
        if (k === undefined) continue;
        const at = box.venue * n + k;
        const papers = t.papers[at];
        if (papers < LEAST) continue;
        const short = item.label.split(", ")[0]; // a small panel's label: its first term
        const placed = {
          ...item,
          label: short,
          size: papers,
          x: t.x[at] / papers,
          y: t.y[at] / papers,
        };
        if (largest === null || papers > largest.size) largest = placed;
        if (papers >= LARGE[kind] * total) out.push(placed);
      }
      return out.length || largest === null ? out : [largest];
    };
  }

  /** The venue groups' legend in the toolbar, where render grouped venues: a button per group
   * (its colour, name and venues), pressed to show its venues' panels alone (again: all). */
  function buildGroups(D, state, actions) {
    const groups = D.DATA.venue_groups;
    if (!groups) return;
    const key = el("ul");
    key.id = "venue-group-key";
    key.setAttribute("aria-label", "Venue groups, by the topics they share: show one alone");
    const choose = (g) => {
      state.venueGroup = g;
      for (const button of key.querySelectorAll("button")) {
        button.setAttribute("aria-pressed", Number(button.dataset.group) === g ? "true" : "false");
      }
      return state.view === "combined" ? actions.setView("venues") : actions.draw();
    };
    for (const [g, group] of groups.entries()) {
      const button = el("button");
      button.type = "button";
      button.dataset.group = String(g);
      button.setAttribute("aria-pressed", "false");
      const names = group.venues.map((v) => D.DATA.venues[v]).join(", ");
      button.title = `${group.label}: ${names}. Show only these venues (again: all)`;
      button.append(
        swatch(group.colour),
        el("span", null, `${group.label} (${group.venues.length})`),
      );
      button.addEventListener("click", () => choose(state.venueGroup === g ? null : g));
      const item = el("li");
      item.append(button);
      key.append(item);
    }
    document.querySelector(".toolbar").append(key);
  }

  window.TopicMap.define("venues", ["helpers"], () => ({ panels, header, labeller, buildGroups }));
})();

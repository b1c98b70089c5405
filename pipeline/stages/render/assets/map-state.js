/* The map's state in its link (part `link`): what the page shows, written into map.html#... as it
 * changes (history.replaceState: no new history entry, no reload) and read back on load, so a
 * link opens the same map: the view, the venue highlighted, the colouring, the year range, the
 * search (its text and, served, its mode), the topic or theme shown alone and the open paper:
 *
 *   map.html#view=combined&venue=ICLR&colour=year&years=2021-2023&q=graph&topic=3&paper=<doc_id>
 *
 * Fields left at the map's default are left out, a field the map cannot show is ignored, and
 * the older links (#paper=, #topic=, #theme=, #view=) read as before.
 */
(() => {
  "use strict";

  const COLOURS = new Set(["topic", "venue", "track", "year"]);

  /** The view a map opens in: the venues' panels, or the one map where it has one venue. */
  const defaultView = (D) => (D.DATA.venue_layout === "single" ? "combined" : "venues");

  /** "2021-2023" or "2022" -> {from, to}, or null for anything else. */
  function parseYears(text) {
    const match = /^(\d{1,4})(?:-(\d{1,4}))?$/.exec(text || "");
    if (!match) return null;
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    return { from: Math.min(from, to), to: Math.max(from, to) };
  }

  /**
   * The link's state, each field present only where the link holds a value this map can show:
   * {view, venue (an index, or null: none), colour, years ({from, to}), query, mode, filter
   * ({kind, id}), paper (an index), gone (DATA.gone's entry of an ended topic the link names)}.
   */
  function read(D, hash = window.location.hash) {
    const params = new URLSearchParams(hash.replace(/^#/, ""));
    const out = {};
    const view = params.get("view");
    if (view === "combined" || (view === "venues" && defaultView(D) === "venues")) out.view = view;
    if (params.has("venue")) {
      const venue = D.DATA.venues.indexOf(params.get("venue"));
      if (venue >= 0 && D.DATA.venues.length > 1) out.venue = venue;
    }
    if (COLOURS.has(params.get("colour"))) out.colour = params.get("colour");
    const years = parseYears(params.get("years"));
    if (years !== null) out.years = years;
    if (params.get("q")) out.query = params.get("q").trim();
    if (params.get("mode") === "meaning") out.mode = "meaning";
    for (const kind of ["topic", "theme"]) {
      const id = Number(params.get(kind));
      const known = kind === "topic" ? D.topics : D.themes;
      if (params.has(kind) && params.get(kind) !== "" && known.has(id)) out.filter = { kind, id };
    }
    // a topic that ended (split, merged, retired): the page says where its papers are now
    const ended = (D.DATA.gone || []).find((g) => String(g.id) === params.get("topic"));
    if (ended && out.filter === undefined) out.gone = ended;
    if (params.has("paper") && D.indexById.has(params.get("paper"))) {
      out.paper = D.indexById.get(params.get("paper"));
    }
    return out;
  }

  /** The hash of the page's state: its fields that differ from the map's default. */
  function hashOf(D, state) {
    const params = new URLSearchParams();
    if (state.view !== defaultView(D)) params.set("view", state.view);
    if (state.highlight !== null) params.set("venue", D.DATA.venues[state.highlight]);
    if (state.colour !== "topic") params.set("colour", state.colour);
    if (state.years !== null) params.set("years", `${state.years.from}-${state.years.to}`);
    // the search as typed (state.query is lower case) while the box still holds it
    const typed = (document.getElementById("search")?.value || "").trim();
    if (state.query !== "")
      params.set("q", typed.toLowerCase() === state.query ? typed : state.query);
    if (state.query !== "" && state.mode === "meaning") params.set("mode", "meaning");
    if (state.filter !== null) params.set(state.filter.kind, String(state.filter.id));
    else if (state.gone != null) params.set("topic", String(state.gone));
    if (state.selected !== null) params.set("paper", D.ids[state.selected]);
    return params.toString();
  }

  /** Write the page's state into its link, replacing the current history entry. */
  function write(D, state) {
    const hash = hashOf(D, state);
    if (hash === window.location.hash.replace(/^#/, "")) return;
    const url = new URL(window.location.href);
    url.hash = hash;
    window.history.replaceState(window.history.state, "", hash ? url.href : url.href.split("#")[0]);
  }

  window.TopicMap.define("link", ["helpers"], () => ({ read, write, hashOf, parseYears }));
})();

/* The topic map (map.html, last of its scripts): the page's state and its actions. It loads the
 * data (map-data.js), makes the figure (map-draw.js) and the side panel (map-panel.js), wires
 * the controls (map-controls.js), follows links such as #paper=<doc_id>, and defines the part
 * `instance`: the map this page runs (its data, state, figure and actions), which the browser
 * tests drive.
 *
 * Plain JavaScript, no build step, no network. Paper text is only ever put into the page with
 * textContent, or escaped where plotly draws it as SVG text.
 */
(() => {
  "use strict";

  const TopicMap = window.TopicMap;
  const { fmt, byId } = TopicMap.helpers;
  const controls = TopicMap.controls;
  const D = TopicMap.data.load();
  const DATA = D.DATA;
  const gd = byId("topic-map");

  const state = {
    view: DATA.venue_layout === "single" ? "combined" : "venues", // or "combined"
    highlight: null, // the venue coloured over the others in grey (combined view), or null
    years: null, // {from, to}: the year range kept (papers without a year kept too); null: all
    colour: "topic", // or "venue", "track", "year" (map-colour.js)
    labels: "auto", // "auto" | "themes" | "topics" | "off"
    query: "",
    mode: "words", // the search box's: "words" (in the text) or "meaning" (served only)
    hits: null, // Uint8Array over the papers: 1 where the text contains the query
    ranking: null, // a search by meaning's {order, similarity}: its papers best first
    placed: null, // an abstract placed by the server: {x, y, neighbours (indices)}
    filter: null, // {kind: "topic" | "theme", id}
    gone: null, // the id of an ended topic the link named (its note shown), until a choice
    active: null, // Uint8Array: 1 for the papers the search and the filter keep; null: all
    selection: null, // Uint8Array: 1 for the papers a box or lasso took (map-select.js); null
    reading: null, // the reading list's papers (indices) while the panel lists it; null: closed
    dragmode: "pan", // what a drag on the plot does: "pan", "select" (a box) or "lasso"
    selected: null,
    neighbours: [], // the selected paper's similar papers, ringed on the map
    page: 0, // the page of the kept papers listed
    zoomedIn: false,
    zoom: 1, // the share of the map's width shown
  };

  const figure = TopicMap.figure.make(D, state, gd);
  const link = TopicMap.link;
  let linked = false; // the link is written once it has been read (applyHash)
  const remember = () => {
    if (linked) link.write(D, state);
  };
  let restoring = false; // while a link is read: one draw at its end, not one per field
  const draw = () => (restoring ? Promise.resolve() : figure.draw().then(remember));
  const reading = TopicMap.reading.make(D);
  const panel = TopicMap.panel.make(D, state, {
    select: (i, focus) => select(i, focus),
    star: reading.starBox,
    listed: (papers) => lists.listed(papers),
  });
  const lists = TopicMap.selection.make(D, state, gd, {
    update: () => update(),
    relist: () => panel.listMatches(),
    select: (i) => select(i),
    reading,
  });
  const histogram = TopicMap.years.make(D, state, { setYears: (from, to) => setYears(from, to) });

  function inYears(i) {
    const y = state.years;
    const year = D.year[i];
    return y === null || year === 0 || (year >= y.from && year <= y.to);
  }

  /** Whether paper i is kept by all but the year range: the search, the topic list. */
  function keepsBesidesYears(i) {
    const f = state.filter;
    if (state.hits !== null && !state.hits[i]) return false;
    if (state.selection !== null && !state.selection[i]) return false;
    if (f === null) return true;
    if (f.kind === "topic") return D.topic[i] === f.id;
    const topic = D.topics.get(D.topic[i]);
    return !!topic && topic.theme === f.id;
  }

  const keeps = (i) => inYears(i) && keepsBesidesYears(i);

  /** The kept papers (state.active) and their count, the list of them, the map. */
  function update() {
    const filtered =
      state.query !== "" ||
      state.filter !== null ||
      state.years !== null ||
      state.selection !== null;
    state.reading = null; // the list follows what the map keeps
    let n = D.N;
    state.active = null;
    if (filtered) {
      state.active = new Uint8Array(D.N);
      n = 0;
      for (let i = 0; i < D.N; i++) {
        if (keeps(i)) {
          state.active[i] = 1;
          n++;
        }
      }
    }
    const node = byId("match-count");
    node.textContent = filtered ? `${fmt(n)} of ${fmt(D.N)} papers match` : `${fmt(D.N)} papers`;
    node.classList.toggle("filtered", filtered);
    node.dataset.count = String(n);
    state.page = 0;
    panel.listMatches();
    const others = state.query !== "" || state.filter !== null || state.selection !== null;
    if (histogram) histogram.show(others ? keepsBesidesYears : null); // bars of what they keep
    return draw();
  }

  // focus: move the keyboard to the paper shown (a list's button was pressed), or back to
  // the search box when the panel closes from the keyboard
  async function select(i, focus = false) {
    state.selected = i;
    if (i === null) {
      panel.closePaper();
      remember();
      if (focus) byId("search").focus();
      return figure.placeRings();
    }
    if (!(await panel.showPaper(i))) return undefined;
    reading.showPaper(i);
    remember();
    if (focus) byId("paper-title").focus({ preventScroll: true });
    await figure.reveal(i);
    return figure.placeRings();
  }

  /** The papers a search by meaning keeps (the server's), or null with the reason shown. */
  async function meaningHits(query, count) {
    if (!TopicMap.search.served()) {
      count.textContent = "By meaning needs the server: topicmap serve --dir <this folder>";
      return null;
    }
    try {
      return await TopicMap.search.searchMeaning(D, query);
    } catch (error) {
      count.textContent = `Search by meaning failed: ${error.message}`;
      return null;
    }
  }

  /** Search for `query`: in the titles and abstracts (map-search.js, loading the text shards
   * first, once), or by meaning (the server's) in that mode. */
  let searchSeq = 0;
  async function search(query) {
    const seq = ++searchSeq;
    const count = byId("match-count");
    let hits = null;
    let ranking = null;
    if (query !== "" && state.mode === "meaning") {
      ranking = await meaningHits(query, count);
      if (seq !== searchSeq || ranking === null) return;
      hits = ranking.hits;
    } else if (query !== "") {
      hits = await TopicMap.search.searchText(D, query, (done, total) => {
        if (seq === searchSeq && done < total) {
          count.textContent = `Loading paper text: ${fmt(done)} of ${fmt(total)} files`;
          count.dataset.loading = "true";
        }
      });
      panel.showFailures();
    }
    if (seq !== searchSeq) return;
    delete count.dataset.loading;
    state.query = query.toLowerCase();
    state.hits = hits;
    state.ranking = ranking;
    await update();
  }

  /** Place an abstract (the server's /api/place): its topic and nearest papers in the panel,
   * the point marked on the map and its neighbours ringed. */
  async function place(title, abstract) {
    const answer = await TopicMap.search.placeAbstract(D, title, abstract);
    state.placed = { x: answer.x, y: answer.y, neighbours: answer.neighbours.map((n) => n.index) };
    panel.showPlaced(answer);
    figure.placeRings();
    return answer;
  }

  /** Show only one topic or theme (null: all); `toggle` clears the filter when it is already
   * set. */
  function setFilter(filter, toggle = true) {
    const f = state.filter;
    const same = filter && f && filter.kind === f.kind && filter.id === f.id;
    state.filter = same && toggle ? null : filter;
    state.gone = null;
    controls.markFilter(D, state);
    return update();
  }

  function setView(view) {
    state.view = view;
    for (const button of document.querySelectorAll("#view-switch button")) {
      button.setAttribute("aria-pressed", button.dataset.view === view ? "true" : "false");
    }
    state.zoomedIn = false;
    state.zoom = 1;
    if (view !== "combined") setHighlight(null, false);
    return draw();
  }

  /** Colour one venue (an index, or null: none) over the others in grey, in the combined view. */
  function setHighlight(venue, redraw = true) {
    state.highlight = venue;
    const choice = byId("highlight-venue");
    if (choice) choice.value = venue === null ? "" : String(venue);
    if (!redraw) return Promise.resolve();
    return venue !== null && state.view !== "combined" ? setView("combined") : draw();
  }

  /** Keep the papers of the years from..to (and those without a year); the full span: all. */
  function setYears(from, to) {
    const all = DATA.years.years;
    const low = Math.min(from, to);
    const high = Math.max(from, to);
    state.years = low <= all[0] && high >= all[all.length - 1] ? null : { from: low, to: high };
    if (histogram) histogram.mark();
    return update();
  }

  /** Colour the papers by "topic", "venue", "track" or "year" (map-colour.js), with its key. */
  function setColour(colour) {
    state.colour = colour;
    byId("colour-by").value = colour;
    TopicMap.colour.showKey(D, state);
    return draw();
  }

  /** Show what the link holds (map-state.js): its fields, each where the map can show it,
   * drawn once. */
  async function applyHash() {
    const wanted = link.read(D);
    TopicMap.tree.showGone(D, wanted.gone || null);
    state.gone = wanted.gone ? wanted.gone.id : null; // kept in the link, so a reload says it again
    restoring = true;
    try {
      await restore(wanted);
    } finally {
      restoring = false;
    }
    if (Object.keys(wanted).some((field) => field !== "paper" && field !== "gone")) await update();
    if (wanted.paper !== undefined) await select(wanted.paper);
  }

  async function restore(wanted) {
    if (wanted.view) await setView(wanted.view);
    if (wanted.venue !== undefined) await setHighlight(wanted.venue);
    if (wanted.colour && byId("colour-by").querySelector(`option[value="${wanted.colour}"]`)) {
      await setColour(wanted.colour);
    }
    const { years } = wanted;
    if (years && DATA.years.years.length > 1) await setYears(years.from, years.to);
    if (wanted.mode) {
      state.mode = wanted.mode;
      byId("search-mode").value = wanted.mode;
    }
    if (wanted.query) {
      byId("search").value = wanted.query;
      await search(wanted.query);
    }
    if (wanted.filter) await setFilter(wanted.filter, false);
  }

  const actions = {
    draw,
    select,
    search,
    place,
    setFilter,
    setView,
    setHighlight,
    setYears,
    setColour,
  };
  controls.buildToolbar(D, state, actions);
  TopicMap.tree.build(D, state, gd, actions); // the topic tree (map-tree.js)
  figure.density.bind(draw); // the density layer's box (map-density.js)
  TopicMap.venues.buildGroups(D, state, actions); // venue groups' choice and legend
  update().then(async () => {
    controls.bindPlotEvents(D, state, gd, { figure, panel, select });
    lists.bind();
    await applyHash();
    linked = true;
    remember();
    window.addEventListener("hashchange", applyHash);
    gd.dataset.ready = "true";
  });
  const parts = ["data", "search", "figure", "panel", "controls", "tree", "years", "link"];
  TopicMap.define("instance", parts, () => ({
    data: D,
    state,
    figure,
    lists,
    reading,
    ...actions,
    get indexById() {
      return D.indexById;
    },
  }));
})();

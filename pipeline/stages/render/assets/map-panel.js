/* The map's side panel and tooltip (part `panel`): a paper's abstract, link and five most
 * similar papers; the list of the papers a search or a topic keeps, a page at a time, as
 * buttons (the keyboard's way to any paper), best first for a search by meaning; an abstract
 * the server placed; the message when a text shard cannot be loaded.
 * Paper text is put into the page only with textContent.
 */
(() => {
  "use strict";

  const TopicMap = window.TopicMap;
  const { el, swatch, fmt, topicColourOf, byId } = TopicMap.helpers;
  const { paperText } = TopicMap.data;
  const PAGE = 50; // papers listed at a time

  /** How a paper is named in the panel's rows: {shortTitle, topicColour, whereAndTopic,
   * paperButton, showFailures}; actions.select(i, focus) opens a paper. */
  function rows(D, state, actions) {
    const DATA = D.DATA;

    function topicName(id) {
      const topic = D.topics.get(id);
      return topic ? topic.label : String(id);
    }

    function topicColour(i) {
      const topic = D.topics.get(D.topic[i]);
      return topic && D.topic[i] >= 0 ? topicColourOf(state, topic) : DATA.colours.unassigned;
    }

    /** "ICLR 2023 Workshop · topic label": where paper i appeared, and its topic. */
    const whereAndTopic = (i) => `${DATA.editions[D.edition[i]]} · ${topicName(D.topic[i])}`;

    /** The title, or the abstract's opening words; null while paper i's text is not loaded. */
    function shortTitle(i) {
      const text = paperText(D, i);
      if (text === null) return D.failed.has(D.shard[i]) ? "(text unavailable)" : null;
      if (text.title) return text.title;
      const words = text.abstract.split(/\s+/).filter(Boolean);
      const head = words.slice(0, DATA.hover_words).join(" ");
      return words.length > DATA.hover_words ? `${head} …` : head;
    }

    /** Say in the panel which shards could not be loaded (the rest of the map works). */
    function showFailures() {
      const box = byId("panel-message");
      const failed = [...D.failed.values()];
      box.hidden = failed.length === 0;
      if (!failed.length) return;
      const papers = [...D.failed.keys()].reduce((n, k) => n + D.members[k].length, 0);
      box.textContent =
        `The text of ${fmt(papers)} papers could not be loaded (${failed.join("; ")}). ` +
        "The rest of the map works; render the map again to restore it.";
    }

    function paperButton(i, className, extra, colour) {
      const button = el("button", className);
      button.type = "button";
      button.dataset.index = String(i);
      const meta = el("span", "nb-meta");
      meta.append(swatch(colour || topicColour(i)), el("span", null, whereAndTopic(i) + extra));
      button.append(el("span", "nb-title", shortTitle(i) || "…"), meta);
      button.addEventListener("click", () => actions.select(i, true));
      const item = el("li");
      item.append(button);
      if (actions.star) item.append(actions.star(i, shortTitle(i) || D.ids[i]));
      return item;
    }

    return { shortTitle, topicColour, whereAndTopic, paperButton, showFailures };
  }

  /** The paper shown in the panel: {showPaper(i), closePaper()}. */
  function detail(D, state, row) {
    let shownSeq = 0; // the latest paper asked for: answers for earlier ones are dropped

    function fillLink(text) {
      const link = byId("paper-link");
      if (text?.url && /^https?:\/\//i.test(text.url)) {
        link.href = text.url;
        link.hidden = false;
      } else {
        link.removeAttribute("href");
        link.hidden = true;
      }
    }

    function fillPaper(i, text) {
      const box = byId("paper-detail");
      box.dataset.paper = D.ids[i];
      byId("paper-title").textContent = row.shortTitle(i);
      const where = byId("paper-meta");
      where.replaceChildren(swatch(row.topicColour(i)), el("span", null, row.whereAndTopic(i)));
      byId("paper-abstract").textContent = text
        ? text.abstract
        : "This paper's text could not be loaded.";
      fillLink(text);
      const nn = text ? Array.from(text.nn) : [];
      const similarity = (rank) => ` · similarity ${text.sim[rank].toFixed(2)}`;
      byId("paper-neighbours").replaceChildren(
        ...nn.map((j, rank) => row.paperButton(j, "neighbour", similarity(rank))),
      );
      byId("panel-empty").hidden = true;
      box.hidden = false;
      byId("paper-panel").scrollTop = 0;
    }

    /** Open paper i in the panel once its text (and its neighbours' titles) are loaded. */
    async function showPaper(i) {
      const seq = ++shownSeq;
      await D.loadPapers([i]);
      const text = paperText(D, i);
      if (text) await D.loadPapers(Array.from(text.nn));
      if (seq !== shownSeq) return false;
      state.neighbours = text ? Array.from(text.nn) : [];
      fillPaper(i, text);
      row.showFailures();
      return true;
    }

    function closePaper() {
      shownSeq++;
      state.neighbours = [];
      byId("paper-detail").hidden = true;
      byId("panel-empty").hidden = false;
    }

    return { showPaper, closePaper };
  }

  /** Up and Down move between the listed papers; Down from the search box enters the list. */
  function listKeys() {
    byId("match-list").addEventListener("keydown", (event) => {
      const buttons = [...document.querySelectorAll("#match-list button")];
      const at = buttons.indexOf(document.activeElement);
      const step = { ArrowDown: 1, ArrowUp: -1 }[event.key];
      if (at < 0 || !step) return;
      event.preventDefault();
      if (buttons[at + step]) buttons[at + step].focus();
      else if (step < 0) byId("search").focus();
    });
    byId("search").addEventListener("keydown", (event) => {
      const first = document.querySelector("#match-box:not([hidden]) #match-list button");
      if (event.key === "ArrowDown" && first) {
        event.preventDefault();
        first.focus();
      }
    });
  }

  /** The list of the papers kept (state.active), or the reading list while it is open
   * (state.reading), page `state.page`: listMatches(); actions.listed(papers) first. */
  function matches(D, state, row, actions) {
    let listSeq = 0;

    async function listMatches() {
      const kept = [];
      if (state.reading) {
        kept.push(...state.reading); // the reading list (map-select.js)
      } else if (state.ranking !== null) {
        for (const i of state.ranking.order) if (state.active[i]) kept.push(i); // best first
      } else if (state.selection !== null) {
        // a selection by topic, as its text shards hold it: a page of it loads a shard or two
        for (const members of D.members) for (const i of members) if (state.active[i]) kept.push(i);
      } else if (state.active !== null) {
        for (let i = 0; i < D.N; i++) if (state.active[i]) kept.push(i);
      }
      const pages = Math.max(1, Math.ceil(kept.length / PAGE));
      state.page = Math.min(state.page, pages - 1);
      const first = state.page * PAGE;
      const shown = kept.slice(first, first + PAGE);
      const seq = ++listSeq;
      if (actions.listed) actions.listed(kept); // its name and counts now, its titles once loaded
      byId("match-list").setAttribute("aria-busy", "true");
      await D.loadPapers(shown);
      if (seq !== listSeq) return;
      byId("match-list").removeAttribute("aria-busy");
      byId("match-box").hidden = kept.length === 0 && !state.reading;
      byId("match-list").replaceChildren(
        ...shown.map((i) => row.paperButton(i, "match", similarityText(state, i), null)),
      );
      byId("match-range").textContent =
        kept.length > PAGE
          ? `${fmt(first + 1)}–${fmt(first + shown.length)} of ${fmt(kept.length)}`
          : "";
      byId("match-prev").hidden = state.page === 0;
      byId("match-next").hidden = state.page >= pages - 1;
      row.showFailures();
    }

    function turnPage(step) {
      state.page += step;
      listMatches().then(() => {
        const button = document.querySelector("#match-list button");
        if (button) button.focus();
      });
    }

    byId("match-prev").addEventListener("click", () => turnPage(-1));
    byId("match-next").addEventListener("click", () => turnPage(1));
    listKeys();
    return listMatches;
  }

  /** " · 0.734": paper i's similarity to a search by meaning, or "" for a search by words. */
  function similarityText(state, i) {
    const similarity = state.ranking?.similarity.get(i);
    return similarity === undefined ? "" : ` · ${similarity.toFixed(3)}`;
  }

  /** An abstract the server placed: its topic, theme and similarity, and its nearest papers
   * (buttons that open them), in the panel's place box. */
  function placedBox(D, row) {
    return async function showPlaced(answer) {
      const topic = answer.topic >= 0 ? `topic “${answer.topic_label}”` : "no topic (unassigned)";
      const theme = answer.theme >= 0 ? `, theme “${answer.theme_label}”` : "";
      byId("place-result").textContent =
        `Placed in ${topic}${theme}; similarity to the topic ${answer.similarity.toFixed(3)}. ` +
        "It is marked ◆ on the map, its nearest papers ringed:";
      byId("place-result").scrollIntoView({ block: "nearest" });
      const shown = answer.neighbours.map((n) => n.index);
      await D.loadPapers(shown);
      byId("place-neighbours").replaceChildren(
        ...answer.neighbours.map((n) =>
          row.paperButton(n.index, "match", ` · ${n.similarity.toFixed(3)}`, null),
        ),
      );
    };
  }

  /** The tooltip over a hovered paper: {hover(i, mouse), unhover()}. */
  function tooltip(D, row) {
    const box = byId("tooltip");
    let hoverSeq = 0;

    async function hover(i, mouse) {
      const seq = ++hoverSeq;
      await D.loadPapers([i]);
      if (seq !== hoverSeq) return;
      box.replaceChildren(el("strong", null, row.shortTitle(i)));
      const line = el("span");
      line.append(swatch(row.topicColour(i)), el("span", null, row.whereAndTopic(i)));
      box.append(line);
      box.hidden = false;
      const x = (mouse.clientX || 0) + 14;
      const y = (mouse.clientY || 0) + 14;
      const size = box.getBoundingClientRect();
      box.style.left = `${Math.min(x, window.innerWidth - size.width - 8)}px`;
      box.style.top = `${Math.min(y, window.innerHeight - size.height - 8)}px`;
      box.dataset.paper = D.ids[i];
    }

    function unhover() {
      hoverSeq++;
      box.hidden = true;
    }

    return { hover, unhover };
  }

  /** The panel over data D and the page's state; actions.select(i, focus) opens a paper. */
  function make(D, state, actions) {
    const row = rows(D, state, actions);
    const listMatches = matches(D, state, row, actions);
    return {
      ...detail(D, state, row),
      listMatches,
      showPlaced: placedBox(D, row),
      ...tooltip(D, row),
      showFailures: row.showFailures,
    };
  }

  window.TopicMap.define("panel", ["helpers", "data"], () => ({ make }));
})();

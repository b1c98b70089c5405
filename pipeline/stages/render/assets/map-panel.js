/* The map's side panel and tooltip (map.html, fourth of its scripts): a paper's abstract, link
 * and five most similar papers; the list of the papers a search or a topic keeps, a page at a
 * time, as buttons (the keyboard's way to any paper); the message when a text shard cannot be
 * loaded. Paper text is put into the page only with textContent.
 */
(function () {
  "use strict";

  const TopicMap = (window.TopicMap = window.TopicMap || {});
  const PAGE = 50; // papers listed at a time

  TopicMap.el = function (tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const el = TopicMap.el;

  TopicMap.swatch = function (colour) {
    const node = el("span", "swatch");
    node.style.background = colour;
    return node;
  };

  /** The panel over data D and the page's state; actions.select(i, focus) opens a paper. */
  TopicMap.panel = function (D, state, actions) {
    const DATA = D.DATA;
    const byId = (id) => document.getElementById(id);
    const tooltip = byId("tooltip");
    let shownSeq = 0; // the latest paper asked for: answers for earlier ones are dropped
    let hoverSeq = 0;
    let listSeq = 0;

    function topicName(id) {
      const topic = D.topics.get(id);
      return topic ? topic.label : String(id);
    }

    function topicColour(i) {
      const topic = D.topics.get(D.topic[i]);
      return topic && D.topic[i] >= 0 ? TopicMap.topicColourOf(state, topic) : TopicMap.MUTED;
    }

    /** "ICLR 2023 Workshop · topic label": where paper i appeared, and its topic. */
    const whereAndTopic = (i) => DATA.editions[D.edition[i]] + " · " + topicName(D.topic[i]);

    /** The title, or the abstract's opening words; null while paper i's text is not loaded. */
    function shortTitle(i) {
      const text = TopicMap.paperText(D, i);
      if (text === null) return D.failed.has(D.shard[i]) ? "(text unavailable)" : null;
      if (text.title) return text.title;
      const words = text.abstract.split(/\s+/).filter(Boolean);
      const head = words.slice(0, DATA.hover_words).join(" ");
      return words.length > DATA.hover_words ? head + " …" : head;
    }

    function meta(i, extra, colour) {
      const node = el("span", "nb-meta");
      node.append(TopicMap.swatch(colour || topicColour(i)), el("span", null, whereAndTopic(i) + extra));
      return node;
    }

    /** Say in the panel which shards could not be loaded (the rest of the map works). */
    function showFailures() {
      const box = byId("panel-message");
      const failed = [...D.failed.values()];
      box.hidden = failed.length === 0;
      if (!failed.length) return;
      const papers = [...D.failed.keys()].reduce((n, k) => n + D.members[k].length, 0);
      box.textContent = `The text of ${TopicMap.fmt(papers)} papers could not be loaded (` +
        failed.join("; ") + "). The rest of the map works; render the map again to restore it.";
    }

    function paperButton(i, className, extra, colour) {
      const button = el("button", className);
      button.type = "button";
      button.dataset.index = String(i);
      button.append(el("span", "nb-title", shortTitle(i) || "…"), meta(i, extra, colour));
      button.addEventListener("click", () => actions.select(i, true));
      const item = el("li");
      item.append(button);
      return item;
    }

    function fillPaper(i, text) {
      const detail = byId("paper-detail");
      detail.dataset.paper = D.ids[i];
      byId("paper-title").textContent = shortTitle(i);
      const where = byId("paper-meta");
      where.replaceChildren(TopicMap.swatch(topicColour(i)), el("span", null, whereAndTopic(i)));
      byId("paper-abstract").textContent = text ? text.abstract : "This paper's text could not be loaded.";
      const link = byId("paper-link");
      if (text && text.url && /^https?:\/\//i.test(text.url)) {
        link.href = text.url;
        link.hidden = false;
      } else {
        link.removeAttribute("href");
        link.hidden = true;
      }
      const nn = text ? Array.from(text.nn) : [];
      byId("paper-neighbours").replaceChildren(...nn.map((j, rank) =>
        paperButton(j, "neighbour", " · similarity " + text.sim[rank].toFixed(2))));
      byId("panel-empty").hidden = true;
      detail.hidden = false;
      byId("paper-panel").scrollTop = 0;
    }

    /** Open paper i in the panel once its text (and its neighbours' titles) are loaded. */
    async function showPaper(i) {
      const seq = ++shownSeq;
      await D.loadPapers([i]);
      const text = TopicMap.paperText(D, i);
      if (text) await D.loadPapers(Array.from(text.nn));
      if (seq !== shownSeq) return false;
      state.neighbours = text ? Array.from(text.nn) : [];
      fillPaper(i, text);
      showFailures();
      return true;
    }

    function closePaper() {
      shownSeq++;
      state.neighbours = [];
      byId("paper-detail").hidden = true;
      byId("panel-empty").hidden = false;
    }

    // ---------------------------------------------------------- the list of kept papers

    /** List page `state.page` of the papers kept (state.active), loading their text first. */
    async function listMatches() {
      const box = byId("match-box");
      const kept = [];
      if (state.active !== null) for (let i = 0; i < D.N; i++) if (state.active[i]) kept.push(i);
      const pages = Math.max(1, Math.ceil(kept.length / PAGE));
      state.page = Math.min(state.page, pages - 1);
      const rows = kept.slice(state.page * PAGE, (state.page + 1) * PAGE);
      const seq = ++listSeq;
      await D.loadPapers(rows);
      if (seq !== listSeq) return;
      box.hidden = kept.length === 0;
      byId("match-list").replaceChildren(...rows.map((i) => paperButton(i, "match", "", null)));
      const first = state.page * PAGE;
      byId("match-range").textContent = kept.length > PAGE
        ? `${TopicMap.fmt(first + 1)}–${TopicMap.fmt(first + rows.length)} of ${TopicMap.fmt(kept.length)}`
        : "";
      byId("match-prev").hidden = state.page === 0;
      byId("match-next").hidden = state.page >= pages - 1;
      showFailures();
    }

    function turnPage(step) {
      state.page += step;
      listMatches().then(() => {
        const first = document.querySelector("#match-list button");
        if (first) first.focus();
      });
    }

    byId("match-prev").addEventListener("click", () => turnPage(-1));
    byId("match-next").addEventListener("click", () => turnPage(1));
    // Up and Down move between the listed papers; Down from the search box enters the list
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

    // ---------------------------------------------------------- tooltip

    async function hover(i, mouse) {
      const seq = ++hoverSeq;
      await D.loadPapers([i]);
      if (seq !== hoverSeq) return;
      tooltip.replaceChildren(el("strong", null, shortTitle(i)));
      const line = el("span");
      line.append(TopicMap.swatch(topicColour(i)), el("span", null, whereAndTopic(i)));
      tooltip.append(line);
      tooltip.hidden = false;
      const x = (mouse.clientX || 0) + 14;
      const y = (mouse.clientY || 0) + 14;
      const box = tooltip.getBoundingClientRect();
      tooltip.style.left = Math.min(x, window.innerWidth - box.width - 8) + "px";
      tooltip.style.top = Math.min(y, window.innerHeight - box.height - 8) + "px";
      tooltip.dataset.paper = D.ids[i];
    }

    function unhover() {
      hoverSeq++;
      tooltip.hidden = true;
    }

    return { showPaper, closePaper, listMatches, hover, unhover, showFailures };
  };
})();

/* The reading list (part `reading`): papers starred in the paper panel (#paper-star) or in a
 * list (a star box beside each row), kept in the browser's localStorage under the map's build
 * key (DATA.build_key: made from the map's title, so two maps do not mix and a rebuild of the
 * same corpus keeps the list) as doc_ids, so a paper keeps its star through a rebuild that
 * keeps the paper. Stars of papers this build does not hold are kept, not shown. Another tab
 * of the same map changing the list is followed (the storage event).
 */
(() => {
  "use strict";

  const { byId } = window.TopicMap.helpers;
  const PREFIX = "topicmap.reading.";

  /** The list kept under `key` in localStorage: {read() -> doc_ids ([] where there are none,
   * or storage is refused or garbled), write(ids)}. */
  function storage(key) {
    function read() {
      try {
        const stored = JSON.parse(window.localStorage.getItem(key) || "[]");
        return Array.isArray(stored) ? stored.filter((id) => typeof id === "string") : [];
      } catch (_error) {
        return [];
      }
    }

    function write(ids) {
      try {
        if (ids.length) window.localStorage.setItem(key, JSON.stringify(ids));
        else window.localStorage.removeItem(key);
      } catch (_error) {
        // storage refused (private mode, quota): the list lasts as long as the page
      }
    }
    return { read, write };
  }

  /** A star box for paper i's row in a list: a checkbox named for the paper, that stars it
   * (or takes its star away) through `list` (make's). */
  function starBox(list, i, title) {
    const box = document.createElement("input");
    box.type = "checkbox";
    box.className = "star";
    box.dataset.index = String(i);
    box.checked = list.has(i);
    box.setAttribute("aria-label", `Reading list: ${title}`);
    box.title = "Keep in the reading list";
    box.addEventListener("change", () => list.toggle(i, box.checked));
    return box;
  }

  /** The reading list over data D: {has(i), toggle(i), papers(), clear(), starBox(i),
   * showPaper(i), onChange(listener)}. */
  function make(D) {
    const key = PREFIX + D.DATA.build_key;
    const { read, write: save } = storage(key);
    let ids = read(); // doc_ids, in the order starred
    const write = () => save(ids);
    let starred = new Set(ids);
    const listeners = [];

    function changed() {
      starred = new Set(ids);
      for (const box of document.querySelectorAll("input.star")) {
        box.checked = starred.has(D.ids[Number(box.dataset.index)]);
      }
      const shown = byId("paper-detail").dataset.paper;
      if (shown !== undefined && D.indexById.has(shown)) showPaper(D.indexById.get(shown));
      const count = papers().length;
      byId("reading-count").textContent = String(count);
      for (const listener of listeners) listener();
    }

    const has = (i) => starred.has(D.ids[i]);

    /** Star paper i, or take its star away; `on` forces one or the other. */
    function toggle(i, on = !has(i)) {
      const id = D.ids[i];
      if (on === starred.has(id)) return;
      ids = on ? [...ids, id] : ids.filter((other) => other !== id);
      write();
      changed();
    }

    /** The starred papers this map holds (indices), in the order they were starred. */
    function papers() {
      const out = [];
      for (const id of ids) if (D.indexById.has(id)) out.push(D.indexById.get(id));
      return out;
    }

    function clear() {
      ids = [];
      write();
      changed();
    }

    /** The panel's star button as it stands for paper i. */
    function showPaper(i) {
      const button = byId("paper-star");
      const on = has(i);
      button.setAttribute("aria-pressed", on ? "true" : "false");
      button.textContent = on ? "★ In the reading list" : "☆ Add to the reading list";
    }

    byId("paper-star").addEventListener("click", () => {
      const shown = byId("paper-detail").dataset.paper;
      if (D.indexById.has(shown)) toggle(D.indexById.get(shown));
    });
    window.addEventListener("storage", (event) => {
      if (event.key !== key) return;
      ids = read();
      changed();
    });
    byId("reading-count").textContent = String(ids.length ? papers().length : 0);
    const list = { has, toggle, papers, clear, showPaper };
    list.starBox = (i, title) => starBox(list, i, title);
    list.onChange = (listener) => listeners.push(listener);
    return list;
  }

  window.TopicMap.define("reading", ["helpers", "data"], () => ({ make }));
})();

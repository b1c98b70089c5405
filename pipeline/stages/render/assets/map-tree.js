/* The map's topic tree (part `tree`) in the side panel: areas (where the labels stage made
 * them), themes and topics with their sizes, as nested disclosure lists. A theme's or area's
 * arrow opens and closes it (aria-expanded); its name, or a topic's, shows only its papers
 * (actions.setFilter: pressed again, all of them) and zooms every panel to their extent (the
 * middle 98% of their places, padded), so the choice is seen, not only filtered; showing all
 * zooms back out. Buttons keep data-kind and data-id, which controls.markFilter marks. A topic
 * born lately is marked "new"; a link to an ended topic is answered by a note above the list
 * saying where its papers are now.
 */
(() => {
  "use strict";

  const { el, swatch, fmt, byId } = window.TopicMap.helpers;
  const TRIM = 0.01; // the share of a group's papers left out at each side of its extent
  const PAD = 0.08; // the extent's margin, as a share of its size

  /** The value at quantile q of a sorted Float32Array. */
  const quantile = (sorted, q) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

  /** The ranges {x: [low, high], y: [low, high]} that hold the papers `keeps` keeps (the middle
   * 98% of them, padded; never smaller than a tenth of the map), or null where none. */
  function extent(D, keeps) {
    const xs = [];
    const ys = [];
    for (let i = 0; i < D.N; i++) {
      if (!keeps(i)) continue;
      xs.push(D.x[i]);
      ys.push(D.y[i]);
    }
    if (!xs.length) return null;
    const ranges = {};
    for (const [axis, values, full] of [
      ["x", Float32Array.from(xs).sort(), D.DATA.x_range],
      ["y", Float32Array.from(ys).sort(), D.DATA.y_range],
    ]) {
      let low = quantile(values, TRIM);
      let high = quantile(values, 1 - TRIM);
      const least = (full[1] - full[0]) / 10;
      const middle = (low + high) / 2;
      const half = Math.max(least, (high - low) * (1 + 2 * PAD)) / 2;
      low = middle - half;
      high = middle + half;
      ranges[axis] = [low, high];
    }
    return ranges;
  }

  /** Which papers a tree node holds: a topic's, a theme's topics', an area's themes'. */
  function holds(D, kind, id) {
    if (kind === "topic") return (i) => D.topic[i] === id;
    const themeOf = (i) => {
      const topic = D.topics.get(D.topic[i]);
      return topic ? topic.theme : undefined;
    };
    if (kind === "theme") return (i) => themeOf(i) === id;
    const area = (D.DATA.areas || []).find((a) => a.id === id);
    const themes = new Set(area ? areaThemes(D, area) : []);
    return (i) => themes.has(themeOf(i));
  }

  /** An area's themes: its own list, or the themes that name it. */
  function areaThemes(D, area) {
    if (Array.isArray(area.themes)) return area.themes;
    return D.DATA.themes.filter((t) => t.area === area.id).map((t) => t.id);
  }

  /** Zoom every panel (their axes match the first's) to the node's papers, or out to all. */
  function zoomTo(D, gd, node) {
    const ranges = node === null ? null : extent(D, holds(D, node.kind, node.id));
    const x = ranges ? ranges.x : D.DATA.x_range.slice();
    const y = ranges ? ranges.y : D.DATA.y_range.slice();
    return Plotly.relayout(gd, { "xaxis.range": x, "yaxis.range": y });
  }

  /** A node's button: its swatch, name and papers; pressing it shows and zooms to them. */
  function nodeButton(kind, item, colour, choose) {
    const button = el("button", "tree-node");
    button.type = "button";
    button.dataset.kind = kind;
    button.dataset.id = String(item.id);
    button.setAttribute("aria-pressed", "false");
    button.title = `Show and zoom to this ${kind}'s papers (again: all papers)`;
    if (colour) button.append(swatch(colour));
    button.append(el("span", "name", item.label), el("span", "count", fmt(item.size)));
    button.addEventListener("click", () => choose(kind, item.id));
    return button;
  }

  /** A node that opens: its arrow (aria-expanded, controls its list), its button, its list. */
  function branch(kind, item, choose, open) {
    const li = el("li", `tree-branch ${kind}-head`);
    const list = el("ul", "tree-children");
    list.id = `tree-${kind}-${item.id}`;
    const arrow = el("button", "tree-toggle", "▸"); // turned down while open (style.css)
    arrow.type = "button";
    arrow.setAttribute("aria-expanded", open ? "true" : "false");
    arrow.setAttribute("aria-controls", list.id);
    arrow.setAttribute(
      "aria-label",
      `${item.label}: show its ${kind === "area" ? "themes" : "topics"}`,
    );
    arrow.addEventListener("click", () => {
      const opened = arrow.getAttribute("aria-expanded") !== "true";
      arrow.setAttribute("aria-expanded", opened ? "true" : "false");
      list.hidden = !opened;
    });
    list.hidden = !open;
    li.append(arrow, nodeButton(kind, item, null, choose), list);
    return { li, list };
  }

  /** A topic's entry; a topic born lately (topic.new: since the fit or the previous build)
   * carries a "new" badge. */
  function topicItem(D, topic, choose) {
    const li = el("li", topic.id < 0 ? "unassigned" : "topic");
    const colour = topic.id < 0 ? D.DATA.colours.unassigned : topic.colour;
    const button = nodeButton("topic", topic, colour, choose);
    if (topic.new) {
      const badge = el("span", "badge-new", "new");
      badge.title = "born since the topics were fitted or since the previous build";
      button.querySelector(".name").after(badge);
    }
    li.append(button);
    return li;
  }

  /** Say, above the list, where the papers of an ended topic a link names (DATA.gone: split,
   * merged or retired) are now, each of its successors a link; null hides the note. */
  function showGone(D, ended) {
    const note = byId("gone-note");
    note.replaceChildren();
    note.hidden = ended === null;
    if (ended === null) return;
    const how = { split: "was split", merged: "was merged", retired: "was retired" };
    note.append(`Topic ${ended.id}, “${ended.label}”, ${how[ended.status] || "ended"}: `);
    const now = ended.successors.filter((id) => D.topics.has(id));
    if (!now.length) note.append("its papers are in no one topic now.");
    else note.append("its papers are now in ");
    now.forEach((id, k) => {
      const link = el("a", null, `${D.topics.get(id).label} (#${id})`);
      link.href = `#topic=${id}`;
      note.append(k ? ", " : "", link);
    });
    if (now.length) note.append(".");
  }

  /** The themes' branches (each with its topics) of `themes`, appended to `list`. */
  function themeBranches(D, themes, list, choose) {
    const assigned = D.DATA.topics.filter((t) => t.id >= 0);
    for (const theme of themes) {
      const node = branch("theme", theme, choose, true); // themes open, areas closed
      for (const topic of assigned.filter((t) => t.theme === theme.id)) {
        node.list.append(topicItem(D, topic, choose));
      }
      list.append(node.li);
    }
  }

  /** Fill #topic-list: areas > themes > topics (or themes > topics, or topics), then the
   * topics in no theme and the unassigned papers; wire "Show all papers". */
  function build(D, state, gd, actions) {
    const DATA = D.DATA;
    const list = byId("topic-list");
    list.classList.add("topic-tree");
    const choose = async (kind, id) => {
      showGone(D, null); // a choice in the list answers the link that named an ended topic
      const f = state.filter;
      const again = f !== null && f.kind === kind && f.id === id;
      const arrow = byId(`tree-${kind}-${id}`)?.parentElement.querySelector(".tree-toggle");
      if (arrow && !again && arrow.getAttribute("aria-expanded") !== "true") arrow.click();
      if (kind === "area") {
        await zoomTo(D, gd, again ? null : { kind, id });
        return;
      }
      await actions.setFilter({ kind, id });
      await zoomTo(D, gd, again ? null : { kind, id });
    };
    const areas = DATA.areas || [];
    const placed = new Set();
    for (const area of areas) {
      const node = branch("area", area, choose, false);
      const ids = new Set(areaThemes(D, area));
      const themes = DATA.themes.filter((t) => ids.has(t.id));
      for (const theme of themes) placed.add(theme.id);
      themeBranches(D, themes, node.list, choose);
      list.append(node.li);
    }
    themeBranches(
      D,
      DATA.themes.filter((t) => !placed.has(t.id)),
      list,
      choose,
    );
    const loose = DATA.topics.filter((t) => t.id >= 0 && !D.themes.has(t.theme));
    for (const topic of loose) list.append(topicItem(D, topic, choose));
    for (const topic of DATA.topics.filter((t) => t.id < 0))
      list.append(topicItem(D, topic, choose));
    byId("show-all").addEventListener("click", async () => {
      await actions.setFilter(null);
      await zoomTo(D, gd, null);
    });
  }

  window.TopicMap.define("tree", ["helpers"], () => ({ build, extent, zoomTo, showGone }));
})();

/* The map's namespace and the helpers its parts share (map.html, first of its scripts).
 *
 * The map is one namespace, window.TopicMap, with one part per script, each added by
 * TopicMap.define(name, needs, make) in the order map.html loads them (render's MAP_SCRIPTS):
 * a part whose needs are not defined yet, or a name defined twice, fails at once with the part
 * named, and a part once defined cannot be replaced. Plain scripts and this small registry
 * rather than ES modules: pages open from disk, where Chromium refuses modules from file:// URLs.
 *
 * The colours the parts draw with are the page's (DATA.colours, render's colours.py); this
 * file and the parts after it hold none of their own.
 */
(() => {
  "use strict";

  if (window.TopicMap !== undefined) throw new Error("map-helpers.js: TopicMap is already defined");
  const TopicMap = {};

  /** Define part `name` as make()'s value, once every part named in `needs` is defined. */
  function define(name, needs, make) {
    const missing = needs.filter((need) => !Object.hasOwn(TopicMap, need));
    if (missing.length) {
      throw new Error(`the map's part ${name} needs ${missing.join(", ")}, loaded before it`);
    }
    if (Object.hasOwn(TopicMap, name)) throw new Error(`the map's part ${name} is defined twice`);
    Object.defineProperty(TopicMap, name, { value: Object.freeze(make()), enumerable: true });
  }
  Object.defineProperty(TopicMap, "define", { value: define });
  Object.defineProperty(window, "TopicMap", { value: TopicMap, enumerable: true });

  define("helpers", [], () => ({
    /** The page's element with this id (or null). */
    byId: (id) => document.getElementById(id),

    /** A new element: <tag class=className>text</tag> (text set with textContent). */
    el(tag, className, text) {
      const node = document.createElement(tag);
      if (className) node.className = className;
      if (text !== undefined) node.textContent = text;
      return node;
    },

    /** A small square of `colour` (the topic list, the panel, the venue key). */
    swatch(colour) {
      const node = document.createElement("span");
      node.className = "swatch";
      node.style.background = colour;
      return node;
    },

    /** A count as the pages write it: 12,345. */
    fmt: (n) => n.toLocaleString("en-US"),

    /** Escape text for plotly, which draws a subset of HTML in annotations. */
    esc: (text) => String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"),

    /** A topic's colour as drawn now: distinct within a theme shown alone, else its own. */
    topicColourOf(state, topic) {
      const f = state.filter;
      const alone = f !== null && f.kind === "theme" && topic.theme === f.id;
      return alone ? topic.theme_colour : topic.colour;
    },

    /** (x, y) in data units -> [px, py] in a panel box's pixels (see map-layout.js). */
    toPixel: (box, x, y) => [
      ((x - box.xr[0]) / (box.xr[1] - box.xr[0])) * box.w,
      ((box.yr[1] - y) / (box.yr[1] - box.yr[0])) * box.h,
    ],

    /** Lay an overlay (labels, rings) exactly over the plot gd. */
    cover: (gd, node) =>
      Object.assign(node.style, {
        left: `${gd.offsetLeft}px`,
        top: `${gd.offsetTop}px`,
        width: `${gd.clientWidth}px`,
        height: `${gd.clientHeight}px`,
      }),
  }));
})();

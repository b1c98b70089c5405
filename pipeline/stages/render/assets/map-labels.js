/* The map's topic and theme labels (part `labels`): HTML laid over the plot.
 *
 * Labels are not plotly annotations: changing an annotation makes plotly recompute every trace
 * (at a million papers, seconds per zoom), while these are a few dozen absolutely placed spans
 * moved on every zoom, pan and drag frame. Larger topics are placed first and a label that would
 * overlap one already placed is shortened (shortForms) or left out, so zooming in reveals the
 * smaller topics' labels; one too wide to stand at its topic near a panel's edge is moved in
 * from the edge. The text is set with textContent.
 */
(() => {
  "use strict";

  const { toPixel, cover } = window.TopicMap.helpers;
  const AREA_ZOOM = 0.75; // areas are labelled while more than this share of the map shows
  const ANCHORS = ["center", "left", "right"]; // the side of the label at its topic's x

  /** Where a label fits at pixel (px, py) in the box without covering one placed: {rect,
   * xanchor, x: the anchor's pixel} or null. Anchored at its topic's x where it can be, else
   * moved in from the panel's edge, which a wide label near the edge was left out for. */
  function spotFor(px, py, width, height, box, placed) {
    const fits = (left, yshift) => {
      const rect = { l: left, r: left + width, t: py - yshift - height / 2 };
      rect.b = rect.t + height;
      const inside = rect.l >= 0 && rect.r <= box.w && rect.t >= 0 && rect.b <= box.h;
      const free = !placed.some(
        (p) => rect.l < p.r && p.l < rect.r && rect.t < p.b && p.t < rect.b,
      );
      return inside && free ? rect : null;
    };
    const shifts = [0, height, -height];
    for (const yshift of shifts) {
      for (const xanchor of ANCHORS) {
        const rect = fits({ center: px - width / 2, left: px, right: px - width }[xanchor], yshift);
        if (rect) return { rect, xanchor, x: px };
      }
    }
    const inward = Math.min(Math.max(px - width / 2, 0), box.w - width);
    for (const yshift of shifts) {
      const rect = fits(inward, yshift);
      if (rect) return { rect, xanchor: "left", x: inward };
    }
    return null;
  }

  /** A label and its shorter forms, longest first, for where the whole does not fit: a
   * theme's shared phrase before its topics' heads ("robustness: adversarial, backdoors"),
   * then its first term. */
  function shortForms(label) {
    const forms = [label, label.split(": ")[0], label.split(": ")[0].split(", ")[0]];
    return forms.filter((form, i) => form && forms.indexOf(form) === i);
  }

  /** Each of `items`' labels placed in a panel's box: {text, x, y: where its anchor is, in the
   * box's pixels, anchor: the side of the label at x ("center", "left", "right")}. */
  function placements(items, box, kind) {
    const sorted = items.slice().sort((a, b) => b.size - a.size || a.id - b.id);
    const fontSize = kind === "themes" && !box.grid ? 13 : 11; // a grid's panels: small
    const charWidth = fontSize * (kind === "themes" ? 0.62 : 0.56); // system-ui, roughly
    const placed = [];
    const out = [];
    for (const item of sorted) {
      const [px, py] = toPixel(box, item.x, item.y);
      if (px < 0 || px > box.w || py < 0 || py > box.h) continue;
      let spot = null;
      let text = null;
      for (const form of shortForms(item.label)) {
        spot = spotFor(px, py, form.length * charWidth + 8, fontSize + 6, box, placed);
        text = form;
        if (spot !== null) break;
      }
      if (spot === null) continue;
      placed.push(spot.rect);
      const y = (spot.rect.t + spot.rect.b) / 2;
      out.push({ text, x: spot.x, y, anchor: spot.xanchor });
    }
    return out;
  }

  /** A label's span, at its place in the panel `box` of the plot. */
  function labelSpan(label, box, kind) {
    const span = document.createElement("span");
    span.className = `map-label ${{ areas: "area", themes: "theme" }[kind] || "topic"}${box.grid ? " small" : ""}`;
    span.textContent = label.text;
    span.dataset.anchor = label.anchor;
    span.style.left = `${box.left + label.x}px`;
    span.style.top = `${box.top + label.y}px`;
    return span;
  }

  /**
   * The labels of the figure's panels, in a layer over gd: {place(ranges?), level()}. `boxes()`
   * gives each panel's box: {xr, yr: its visible ranges, w, h: its size and left, top: its
   * offset in gd, in pixels} (map-layout.js).
   */
  function layer(D, state, gd, boxes) {
    const assigned = D.DATA.topics.filter((t) => t.id >= 0);
    const areas = D.DATA.areas || []; // the level above themes, in a large corpus only
    const panelItems = window.TopicMap.venues.labeller(D);
    const node = document.createElement("div");
    node.id = "map-labels";
    node.setAttribute("aria-hidden", "true");
    gd.parentElement.append(node);

    /** The level labelled: chosen, or by zoom (areas where the data has them, seen whole;
     * themes; topics zoomed in). */
    function level() {
      if (state.labels === "off") return null;
      if (state.labels === "topics" || D.themes.size === 0) return "topics";
      if (state.labels === "themes") return "themes";
      if (state.labels === "areas" && areas.length) return "areas";
      if (state.zoomedIn) return "topics";
      return areas.length && state.zoom > AREA_ZOOM ? "areas" : "themes";
    }

    /** Place the labels for the panels as they are now, or over the `ranges` a drag shows. */
    function place(ranges) {
      const kind = level();
      const spans = [];
      cover(gd, node);
      if (kind !== null) {
        for (const shown of boxes()) {
          const box = { ...shown, ...(ranges || {}) };
          const shows = kind === "areas" && box.grid ? "themes" : kind; // a venue's panel: themes
          const items = { areas, themes: D.DATA.themes }[shows] || assigned;
          const own = panelItems(items, box, shows, box.grid); // map-venues.js
          for (const label of placements(own, box, shows)) spans.push(labelSpan(label, box, shows));
        }
      }
      node.replaceChildren(...spans);
      node.dataset.level = kind || "off";
    }

    return { place, level };
  }

  /** The ranges a plotly_relayouting event shows ({xr, yr}), or null where it gives none. */
  function dragRanges(change) {
    const keys = Object.keys(change || {});
    const pick = (axis) => {
      const key = keys.find((k) => new RegExp(`^${axis}axis\\d*\\.range\\[0\\]$`).test(k));
      if (key) return [change[key], change[key.replace("[0]", "[1]")]];
      const whole = keys.find((k) => new RegExp(`^${axis}axis\\d*\\.range$`).test(k));
      return whole ? change[whole] : null;
    };
    const xr = pick("x");
    const yr = pick("y");
    if (!xr && !yr) return null;
    return { ...(xr ? { xr } : {}), ...(yr ? { yr } : {}) };
  }

  window.TopicMap.define("labels", ["helpers", "venues"], () => ({
    layer,
    dragRanges,
    placements,
  }));
})();

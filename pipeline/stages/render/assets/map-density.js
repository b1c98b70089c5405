/* The map's density layer (part `density`): where points crowd, a shaded grid under them, one
 * per panel (all papers combined, or the panel's venue), from the page's data (render's
 * crowding.py: smoothed counts scaled to 0-255 over the map's fixed ranges). Each grid becomes
 * an image once (a canvas, its cells' opacity the density) that the layout places below the
 * points, stretched over the full ranges, so zooming and panning move it with them. On by
 * default where most papers overplot (DATA.density.on); the toolbar's Density box toggles it.
 */
(() => {
  "use strict";

  const { byId } = window.TopicMap.helpers;
  const SHADE = [40, 62, 110]; // the layer's colour; the density sets each cell's opacity
  const MOST = 0.8; // the opacity of the densest cell

  /** A grid ({bins, dtype, data}) as a PNG data URL: rows from the lowest y, drawn top down. */
  function picture(grid) {
    const n = grid.bins;
    const values = window.TopicMap.data.typedColumn(grid);
    const canvas = document.createElement("canvas");
    canvas.width = n;
    canvas.height = n;
    const context = canvas.getContext("2d");
    const image = context.createImageData(n, n);
    for (let row = 0; row < n; row++) {
      for (let col = 0; col < n; col++) {
        const at = 4 * ((n - 1 - row) * n + col);
        image.data.set(SHADE, at);
        image.data[at + 3] = Math.round(MOST * values[row * n + col]);
      }
    }
    context.putImageData(image, 0, 0);
    return canvas.toDataURL("image/png");
  }

  /** The layer over data D: {images(panels): the layout's images, available, sync()}. */
  function make(D, state) {
    const density = D.DATA.density;
    const pictures = new Map(); // venue index (or "all") -> data URL
    const available = !!density;
    state.density = available && density.on;

    function pictureOf(venue) {
      const key = venue === null ? "all" : venue;
      if (!pictures.has(key)) {
        const grid = venue === null ? density.all : density.venues[venue];
        pictures.set(key, picture(grid));
      }
      return pictures.get(key);
    }

    /** Each panel's image ({venue} in panels, k its axes' suffix), or none while it is off. */
    function images(panels) {
      if (!available || !state.density) return [];
      const [x0, x1] = D.DATA.x_range;
      const [y0, y1] = D.DATA.y_range;
      return panels.map((panel, k) => ({
        source: pictureOf(panel.venue),
        xref: k ? `x${k + 1}` : "x",
        yref: k ? `y${k + 1}` : "y",
        x: x0,
        y: y1,
        sizex: x1 - x0,
        sizey: y1 - y0,
        sizing: "stretch",
        xanchor: "left",
        yanchor: "top",
        layer: "below",
        name: "density",
      }));
    }

    /** The toolbar's box: shown where the map has a layer, checked as state.density is. */
    function bind(redraw) {
      const box = byId("density-toggle");
      if (!box) return;
      box.closest("label").hidden = !available;
      box.checked = state.density;
      box.addEventListener("change", () => {
        state.density = box.checked;
        redraw();
      });
    }

    return { images, bind, available };
  }

  window.TopicMap.define("density", ["helpers", "data"], () => ({ make }));
})();

/* The map's colourings beside the topics' (part `colour`): by venue, by track and by year, each
 * a list of colours from the page's data (render's colours.py: the venues' and tracks' palette,
 * the year scale, plasma, with papers without a year in grey) and each paper's place in that
 * list; and the key beside the colour select that says what each colour means.
 */
(() => {
  "use strict";

  const { el, swatch, byId } = window.TopicMap.helpers;
  const { typedColumn } = window.TopicMap.data;
  const YEAR_SWATCHES = 12; // up to this many years the key shows each; more, a scale bar

  /** Each paper's place in DATA.years.years (D.year), or after them for no year. */
  function yearSteps(D) {
    const years = D.DATA.years.years;
    const steps = new Uint16Array(D.N).fill(years.length);
    if (!years.length) return steps;
    const first = years[0];
    const step = new Int32Array(years[years.length - 1] - first + 1).fill(years.length);
    years.forEach((y, k) => {
      step[y - first] = k;
    });
    for (let i = 0; i < D.N; i++) {
      const at = D.year[i] - first;
      if (D.year[i] !== 0 && at >= 0 && at < step.length) steps[i] = step[at];
    }
    return steps;
  }

  /**
   * The colourings other than by topic: a Map from "venue", "track" and "year" to {colours
   * (#rrggbb), of (a typed array: each paper's index in colours)}, each made when first asked.
   */
  function schemes(D) {
    const DATA = D.DATA;
    const makers = {
      venue: () => ({ colours: DATA.venue_colours, of: D.venue }),
      track: () => ({ colours: DATA.track_colours, of: typedColumn(DATA.papers.track) }),
      year: () => ({ colours: [...DATA.year_colours, DATA.colours.undated], of: yearSteps(D) }),
    };
    const made = new Map();
    return {
      /** The colouring called `name`, or undefined (by topic). */
      get(name) {
        if (!made.has(name) && makers[name]) made.set(name, makers[name]());
        return made.get(name);
      },
    };
  }

  function keyItem(colour, name) {
    const item = el("span", "key-item");
    item.append(swatch(colour), el("span", null, name));
    return item;
  }

  /** The year scale's key: a swatch per year, or for many years a bar from the first to the
   * last, then the grey of papers without a year where there are such. */
  function yearKey(DATA) {
    const years = DATA.years.years;
    const colours = DATA.year_colours;
    const items = [];
    if (years.length <= YEAR_SWATCHES) {
      years.forEach((y, k) => {
        items.push(keyItem(colours[k], String(y)));
      });
    } else {
      const bar = el("span", "year-scale");
      const first = years[0];
      const span = Math.max(1, years[years.length - 1] - first);
      const stops = years.map(
        (y, k) => `${colours[k]} ${((100 * (y - first)) / span).toFixed(1)}%`,
      );
      bar.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
      const scale = el("span", "key-item");
      scale.append(el("span", null, String(first)), bar, el("span", null, String(years.at(-1))));
      items.push(scale);
    }
    if (DATA.years.undated) items.push(keyItem(DATA.colours.undated, "no year"));
    return items;
  }

  /** Show the key of state.colour: the venues' (#venue-key), or the years' or tracks'
   * (#colour-key); none by topic (the topic list is its key). */
  function showKey(D, state) {
    const DATA = D.DATA;
    byId("venue-key").classList.toggle("shown", state.colour === "venue");
    const key = byId("colour-key");
    if (!key) return;
    let items = [];
    if (state.colour === "year") items = yearKey(DATA);
    if (state.colour === "track") {
      items = DATA.tracks.map((name, k) => keyItem(DATA.track_colours[k], name));
    }
    key.replaceChildren(...items);
    key.dataset.colour = state.colour;
    key.classList.toggle("shown", items.length > 0);
  }

  window.TopicMap.define("colour", ["helpers", "data"], () => ({ schemes, showKey }));
})();

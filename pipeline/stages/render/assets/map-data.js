/* The map's data (map.html, first of its scripts): decodes the page's JSON island (#paper-data)
 * and its typed arrays, and loads the papers' text from the shards beside the page.
 *
 * Shards are scripts, map-data/text-NNN.js, each calling topicMapShard(NNN, token, payload):
 * pages open from disk, where fetch() of a file:// URL is refused but <script src> runs. The
 * payload is raw-deflated JSON in base64, inflated with DecompressionStream. A shard that is
 * missing, from another build (its token differs) or corrupt is reported, never shown.
 */
(function () {
  "use strict";

  const TopicMap = (window.TopicMap = window.TopicMap || {});
  const ARRAYS = { float32: Float32Array, int16: Int16Array, int32: Int32Array,
    uint8: Uint8Array, uint16: Uint16Array };

  /** base64 -> bytes: the browser's own decoder where it has one (Chromium 140, Firefox 133,
   * Safari 18.2), else atob and a loop. */
  function bytesOf(base64) {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(base64);
    const text = atob(base64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes;
  }

  /** A column written by mapfiles.typed_array: {dtype, data (base64, little-endian)}. */
  function typedArray(column) {
    const Type = ARRAYS[column.dtype];
    if (!Type) throw new Error("unknown column type " + column.dtype);
    return new Type(bytesOf(column.data).buffer);
  }

  TopicMap.typedColumn = typedArray;

  async function inflate(base64) {
    const stream = new Blob([bytesOf(base64)]).stream()
      .pipeThrough(new DecompressionStream("deflate-raw"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  const PAPER_END = 0x1e; // the body's separators (mapfiles.py): after each paper
  const TITLE_END = 0x1f; // and between its title and abstract
  const utf8 = new TextDecoder();

  /**
   * A shard's inflated bytes -> {url, nn, sim, body, lower, starts}: a JSON line, then the
   * body, `title 0x1f abstract 0x1e` per paper, kept as UTF-8 bytes (outside the JavaScript
   * heap: a million abstracts would not fit in it as strings), with its ASCII letters
   * lowercased for search, and where each paper starts.
   */
  function parseShard(bytes, n, nn) {
    const end = bytes.indexOf(10);
    if (end < 0) throw new Error("it does not hold this map's papers");
    const text = JSON.parse(utf8.decode(bytes.subarray(0, end)));
    const body = bytes.subarray(end + 1);
    const starts = new Int32Array(n + 1);
    let at = 0;
    for (let s = 0; s < n; s++) {
      at = body.indexOf(PAPER_END, at);
      if (at < 0) break;
      starts[s + 1] = ++at;
    }
    if (at !== body.length || !Array.isArray(text.url) || text.url.length !== n ||
        text.nn.length !== n * nn || text.sim.length !== n * nn) {
      throw new Error("it does not hold this map's papers");
    }
    const lower = body.slice();
    for (let i = 0; i < lower.length; i++) if (lower[i] >= 65 && lower[i] <= 90) lower[i] += 32;
    return { url: text.url, nn: text.nn, sim: text.sim, body, lower, starts };
  }

  /** The map's data: tables, per-paper typed arrays, and the text store over the shards. */
  TopicMap.loadData = function () {
    const DATA = JSON.parse(document.getElementById("paper-data").textContent);
    const P = DATA.papers;
    const N = P.count;
    const D = {
      DATA, N,
      x: typedArray(P.x), y: typedArray(P.y),
      topic: typedArray(P.topic), venue: typedArray(P.venue),
      edition: typedArray(P.edition), shard: typedArray(P.shard),
      topics: new Map(DATA.topics.map((t) => [t.id, t])),
      themes: new Map(DATA.themes.map((t) => [t.id, t])),
    };
    // the doc_ids and their index, made when first asked for (a link to a paper, a panel):
    // a million strings and a map of them cost a page that only draws half a second
    let ids = null;
    let indexById = null;
    Object.defineProperty(D, "ids", { get: () => (ids = ids || (N ? P.ids.split("\n") : [])) });
    Object.defineProperty(D, "indexById", {
      get: () => (indexById = indexById || new Map(D.ids.map((id, i) => [id, i]))),
    });
    // each shard's papers, in page order; a paper's place in its shard
    const K = DATA.shard_tokens.length;
    D.shardCount = K;
    D.members = Array.from({ length: K }, () => []);
    D.slot = new Int32Array(N);
    for (let i = 0; i < N; i++) {
      const list = D.members[D.shard[i]];
      D.slot[i] = list.length;
      list.push(i);
    }
    D.text = new Array(K).fill(null); // a loaded shard's {url, nn, sim, body, lower, starts}
    D.failed = new Map(); // shard -> why it could not be loaded
    installLoader(D);
    return D;
  };

  function shardName(D, k) {
    return D.DATA.shard_dir + "/text-" + String(k).padStart(3, "0") + ".js";
  }

  function installLoader(D) {
    const pending = new Map(); // shard -> {resolve, reject, promise, arrived}
    window.topicMapShard = function (k, token, payload) {
      const job = pending.get(k);
      if (!job || job.arrived) return;
      job.arrived = true;
      if (token !== D.DATA.shard_tokens[k]) {
        job.reject(new Error("it is from another build of the map"));
        return;
      }
      inflate(payload).then((bytes) => parseShard(bytes, D.members[k].length, D.DATA.n_neighbours))
        .then(job.resolve, job.reject);
    };

    /** Load shard k (once); resolves when its text is in D.text[k], rejects with the reason. */
    function loadShard(k) {
      if (D.text[k]) return Promise.resolve();
      if (pending.has(k)) return pending.get(k).promise;
      const job = {};
      job.promise = new Promise((resolve, reject) => {
        job.resolve = resolve;
        job.reject = reject;
      }).then((text) => {
        D.text[k] = text;
      }, (error) => {
        const why = shardName(D, k) + ": " + (error && error.message ? error.message : error);
        D.failed.set(k, why);
        throw new Error(why);
      });
      pending.set(k, job);
      const script = document.createElement("script");
      script.src = shardName(D, k);
      script.async = true;
      script.onload = () => {
        script.remove();
        // a script that ran without calling topicMapShard (or failed to parse) is corrupt
        if (!job.arrived) job.reject(new Error("the file is corrupt"));
      };
      script.onerror = () => {
        script.remove();
        job.arrived = true;
        job.reject(new Error("the file is missing or unreadable"));
      };
      document.head.append(script);
      return job.promise;
    }

    /**
     * Load the shards listed (at most a few at a time); `progress(done, total)` after each.
     * Resolves once every one has loaded or failed (D.failed says which and why).
     */
    D.load = async function (shards, progress) {
      const todo = [...new Set(shards)].filter((k) => !D.text[k] && !D.failed.has(k));
      let done = 0;
      const next = async () => {
        while (todo.length) {
          await loadShard(todo.shift()).catch(() => {});
          done++;
          if (progress) progress(done, done + todo.length);
        }
      };
      await Promise.all([1, 2, 3, 4].map(next));
    };
    D.loadPapers = (papers, progress) => D.load(papers.map((i) => D.shard[i]), progress);
  }

  /** Paper i's text {title (null: none), abstract, url, nn, sim}, or null while its shard is not loaded (or failed). */
  TopicMap.paperText = function (D, i) {
    const text = D.text[D.shard[i]];
    if (!text) return null;
    const s = D.slot[i];
    const nn = D.DATA.n_neighbours;
    const paper = text.body.subarray(text.starts[s], text.starts[s + 1] - 1);
    const cut = paper.indexOf(TITLE_END);
    return {
      title: cut > 0 ? utf8.decode(paper.subarray(0, cut)) : null,
      abstract: utf8.decode(paper.subarray(cut + 1)),
      url: text.url[s], nn: text.nn.slice(s * nn, (s + 1) * nn), sim: text.sim.slice(s * nn, (s + 1) * nn),
    };
  };

  // how common a byte is in English text (higher: rarer): the search anchors on the rarest
  const COMMON = "etaoinshrdlcumwfgypbvkjxqz";
  function rarity(byte) {
    if (byte >= 0x80) return 40; // UTF-8 of a non-ASCII character
    const letter = COMMON.indexOf(String.fromCharCode(byte));
    if (letter >= 0) return letter;
    return byte === 32 ? -1 : 30; // the space; digits and punctuation
  }

  /** The index in members of the paper whose text holds byte `at` of the shard's body. */
  function paperAt(starts, members, at) {
    let low = 0;
    let high = members.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid] <= at) low = mid;
      else high = mid - 1;
    }
    return low;
  }

  /**
   * Mark in hits the papers of one loaded shard whose title or abstract holds the needle. No
   * separator is in the needle, so a match is one paper's, and the search goes on at the next
   * paper. Needles of five bytes or more: Boyer-Moore-Horspool (shifts of about the needle's
   * length; twice as fast there as below, measured at 300,000 papers); shorter ones: each place
   * of their rarest byte, found by the native indexOf, compared in full.
   */
  function searchShard(text, members, needle, hits) {
    const { lower, starts } = text;
    const m = needle.length;
    if (m >= 5) {
      const shift = new Int32Array(256).fill(m);
      for (let j = 0; j < m - 1; j++) shift[needle[j]] = m - 1 - j;
      const last = needle[m - 1];
      const end = lower.length - m;
      let at = 0;
      while (at <= end) {
        const byte = lower[at + m - 1];
        if (byte === last) {
          let j = m - 2;
          while (j >= 0 && lower[at + j] === needle[j]) j--;
          if (j < 0) {
            const k = paperAt(starts, members, at);
            hits[members[k]] = 1;
            at = starts[k + 1];
            continue;
          }
        }
        at += shift[byte];
      }
      return;
    }
    let anchor = 0;
    for (let j = 1; j < m; j++) if (rarity(needle[j]) > rarity(needle[anchor])) anchor = j;
    const first = needle[anchor];
    let at = lower.indexOf(first, anchor);
    while (at >= 0) {
      const start = at - anchor;
      let j = 0;
      while (j < m && lower[start + j] === needle[j]) j++;
      if (j < m) {
        at = lower.indexOf(first, at + 1);
        continue;
      }
      const k = paperAt(starts, members, start);
      hits[members[k]] = 1;
      at = lower.indexOf(first, starts[k + 1] + anchor);
    }
  }

  /**
   * A Uint8Array over the papers, 1 where the title or abstract contains `query` (Latin letters
   * A-Z in any case, other characters as typed), after loading every shard; `progress(done,
   * total)` while it loads.
   */
  TopicMap.searchText = async function (D, query, progress) {
    await D.load([...Array(D.shardCount).keys()], progress);
    const needle = new TextEncoder().encode(query);
    for (let i = 0; i < needle.length; i++) if (needle[i] >= 65 && needle[i] <= 90) needle[i] += 32;
    const hits = new Uint8Array(D.N);
    if (needle.length === 0) return hits.fill(1);
    for (let k = 0; k < D.shardCount; k++) if (D.text[k]) searchShard(D.text[k], D.members[k], needle, hits);
    return hits;
  };
})();

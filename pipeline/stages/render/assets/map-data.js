/* The map's data (part `data`): decodes the page's JSON island (#paper-data) and its typed
 * arrays, and loads the papers' text from the shards beside the page.
 *
 * Shards are scripts, map-data/text-NNN.js, each calling topicMapShard(NNN, token, payload):
 * pages open from disk, where fetch() of a file:// URL is refused but <script src> runs. The
 * payload is raw-deflated JSON in base64, inflated with DecompressionStream. A shard that is
 * missing, from another build (its token differs) or corrupt is reported, never shown.
 */
(() => {
  "use strict";

  const ARRAYS = {
    float32: Float32Array,
    int16: Int16Array,
    int32: Int32Array,
    uint8: Uint8Array,
    uint16: Uint16Array,
  };
  const PAPER_END = 0x1e; // the body's separators (mapfiles.py): after each paper
  const TITLE_END = 0x1f; // and between its title and abstract
  const utf8 = new TextDecoder();
  const NOT_THIS_MAP = "it does not hold this map's papers";

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
  function typedColumn(column) {
    const Type = ARRAYS[column.dtype];
    if (!Type) throw new Error(`unknown column type ${column.dtype}`);
    return new Type(bytesOf(column.data).buffer);
  }

  async function inflate(base64) {
    const stream = new Blob([bytesOf(base64)])
      .stream()
      .pipeThrough(new DecompressionStream("deflate-raw"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  /**
   * A shard's inflated bytes -> {url, nn, sim, body, lower, starts}: a JSON line, then the
   * body, `title 0x1f abstract 0x1e` per paper, kept as UTF-8 bytes (outside the JavaScript
   * heap: a million abstracts would not fit in it as strings), with its ASCII letters
   * lowercased for search (made at the first search), and where each paper starts.
   */
  function parseShard(bytes, n, nn) {
    const end = bytes.indexOf(10);
    if (end < 0) throw new Error(NOT_THIS_MAP);
    const text = JSON.parse(utf8.decode(bytes.subarray(0, end)));
    const body = bytes.subarray(end + 1);
    const starts = new Int32Array(n + 1);
    let at = 0;
    for (let s = 0; s < n; s++) {
      at = body.indexOf(PAPER_END, at);
      if (at < 0) break;
      at++;
      starts[s + 1] = at;
    }
    const sized = Array.isArray(text.url) && text.url.length === n;
    if (at !== body.length || !sized || text.nn.length !== n * nn || text.sim.length !== n * nn) {
      throw new Error(NOT_THIS_MAP);
    }
    let lower = null; // made at the first search: a shard loaded for its titles needs none
    return {
      url: text.url,
      nn: text.nn,
      sim: text.sim,
      body,
      starts,
      get lower() {
        if (lower === null) {
          lower = body.slice();
          for (let i = 0; i < lower.length; i++)
            if (lower[i] >= 65 && lower[i] <= 90) lower[i] += 32;
        }
        return lower;
      },
    };
  }

  /** The page's tables and per-paper typed arrays; the doc_ids and their index made lazily. */
  function decode() {
    const DATA = JSON.parse(document.getElementById("paper-data").textContent);
    const P = DATA.papers;
    const N = P.count;
    const D = {
      DATA,
      N,
      x: typedColumn(P.x),
      y: typedColumn(P.y),
      topic: typedColumn(P.topic),
      venue: typedColumn(P.venue),
      edition: typedColumn(P.edition),
      shard: typedColumn(P.shard),
      year: typedColumn(P.year), // 0: no year
      topics: new Map(DATA.topics.map((t) => [t.id, t])),
      themes: new Map(DATA.themes.map((t) => [t.id, t])),
    };
    // the doc_ids and their index, made when first asked for (a link to a paper, a panel):
    // a million strings and a map of them cost a page that only draws half a second
    let ids = null;
    let indexById = null;
    Object.defineProperty(D, "ids", {
      get: () => {
        ids = ids || (N ? P.ids.split("\n") : []);
        return ids;
      },
    });
    Object.defineProperty(D, "indexById", {
      get: () => {
        indexById = indexById || new Map(D.ids.map((id, i) => [id, i]));
        return indexById;
      },
    });
    return D;
  }

  /** Each shard's papers in page order (D.members), a paper's place in its shard (D.slot). */
  function indexShards(D) {
    const K = D.DATA.shard_tokens.length;
    D.shardCount = K;
    D.members = Array.from({ length: K }, () => []);
    D.slot = new Int32Array(D.N);
    for (let i = 0; i < D.N; i++) {
      const list = D.members[D.shard[i]];
      D.slot[i] = list.length;
      list.push(i);
    }
    D.text = new Array(K).fill(null); // a loaded shard's {url, nn, sim, body, lower, starts}
    D.failed = new Map(); // shard -> why it could not be loaded
  }

  function shardName(D, k) {
    return `${D.DATA.shard_dir}/text-${String(k).padStart(3, "0")}.js`;
  }

  /** The shards' callback, topicMapShard(k, token, payload): settles shard k's pending job. */
  function receiveShards(D, pending) {
    window.topicMapShard = (k, token, payload) => {
      const job = pending.get(k);
      if (!job || job.arrived) return;
      job.arrived = true;
      if (token !== D.DATA.shard_tokens[k]) {
        job.reject(new Error("it is from another build of the map"));
        return;
      }
      inflate(payload)
        .then((bytes) => parseShard(bytes, D.members[k].length, D.DATA.n_neighbours))
        .then(job.resolve, job.reject);
    };
  }

  /** A job for shard k: a promise that puts its text in D.text[k], or its failure in D.failed. */
  function shardJob(D, k) {
    const job = {};
    job.promise = new Promise((resolve, reject) => {
      job.resolve = resolve;
      job.reject = reject;
    }).then(
      (text) => {
        D.text[k] = text;
      },
      (error) => {
        const why = `${shardName(D, k)}: ${error?.message ? error.message : error}`;
        D.failed.set(k, why);
        throw new Error(why);
      },
    );
    return job;
  }

  /** D.load(shards, progress) and D.loadPapers(papers, progress): load text shards. */
  function installLoader(D) {
    const pending = new Map(); // shard -> {resolve, reject, promise, arrived}
    receiveShards(D, pending);

    /** Load shard k (once); resolves when its text is in D.text[k], rejects with the reason. */
    function loadShard(k) {
      if (D.text[k]) return Promise.resolve();
      if (pending.has(k)) return pending.get(k).promise;
      const job = shardJob(D, k);
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
    D.load = async (shards, progress) => {
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
    D.loadPapers = (papers, progress) =>
      D.load(
        papers.map((i) => D.shard[i]),
        progress,
      );
  }

  /** The map's data: tables, per-paper typed arrays, and the text store over the shards. */
  function load() {
    const D = decode();
    indexShards(D);
    installLoader(D);
    return D;
  }

  /** Paper i's text {title (null: none), abstract, url, nn, sim}, or null while its shard is
   * not loaded (or failed). */
  function paperText(D, i) {
    const text = D.text[D.shard[i]];
    if (!text) return null;
    const s = D.slot[i];
    const nn = D.DATA.n_neighbours;
    const paper = text.body.subarray(text.starts[s], text.starts[s + 1] - 1);
    const cut = paper.indexOf(TITLE_END);
    return {
      title: cut > 0 ? utf8.decode(paper.subarray(0, cut)) : null,
      abstract: utf8.decode(paper.subarray(cut + 1)),
      url: text.url[s],
      nn: text.nn.slice(s * nn, (s + 1) * nn),
      sim: text.sim.slice(s * nn, (s + 1) * nn),
    };
  }

  window.TopicMap.define("data", ["helpers"], () => ({ load, paperText, typedColumn }));
})();

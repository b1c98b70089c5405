/* The map's search (part `search`): which papers' title or abstract holds a query, searched
 * in the text shards' UTF-8 bytes (map-data.js) without decoding them; and, where the page is
 * served by `topicmap serve`, the server's search by meaning and placing of an abstract.
 * Opened from disk the page asks nothing of any server (served() is false there).
 */
(() => {
  "use strict";

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
  async function searchText(D, query, progress) {
    await D.load([...Array(D.shardCount).keys()], progress);
    const needle = new TextEncoder().encode(query);
    for (let i = 0; i < needle.length; i++) if (needle[i] >= 65 && needle[i] <= 90) needle[i] += 32;
    const hits = new Uint8Array(D.N);
    if (needle.length === 0) return hits.fill(1);
    for (let k = 0; k < D.shardCount; k++)
      if (D.text[k]) searchShard(D.text[k], D.members[k], needle, hits);
    return hits;
  }

  const MEANING_RESULTS = 50; // papers a search by meaning keeps

  /** Whether the page came from a server (`topicmap serve`), not from disk. */
  const served = () =>
    window.location.protocol === "http:" || window.location.protocol === "https:";

  /** The server's answer to a request of the API (a path relative to the page), or an Error
   * whose message is the server's one-line reason. */
  async function ask(path, init) {
    let response;
    try {
      response = await fetch(path, init);
    } catch (_error) {
      throw new Error("the server does not answer: is topicmap serve still running?");
    }
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(answer.error || `the server answered ${response.status}`);
    return answer;
  }

  /** The papers nearest in meaning to `query`: {hits (Uint8Array over the papers), order
   * (their indices, best first), similarity (index -> cosine)}; results the page does not hold
   * are left out. */
  async function searchMeaning(D, query) {
    const params = new URLSearchParams({ q: query, k: String(MEANING_RESULTS) });
    const answer = await ask(`api/search?${params}`);
    const hits = new Uint8Array(D.N);
    const order = [];
    const similarity = new Map();
    for (const result of answer.results) {
      const i = D.indexById.get(result.doc_id);
      if (i === undefined) continue;
      hits[i] = 1;
      order.push(i);
      similarity.set(i, result.similarity);
    }
    return { hits, order, similarity };
  }

  /** An abstract (and title) placed by the server as `topicmap place` places a paper: its
   * topic, labels, similarity, map position and nearest papers (indices among the page's). */
  async function placeAbstract(D, title, abstract) {
    const body = JSON.stringify({ title: title || null, abstract, k: 10 });
    const headers = { "Content-Type": "application/json" };
    const answer = await ask("api/place", { method: "POST", headers, body });
    const neighbours = answer.neighbours
      .map((n) => ({ index: D.indexById.get(n.doc_id), similarity: n.similarity }))
      .filter((n) => n.index !== undefined);
    return { ...answer, neighbours };
  }

  window.TopicMap.define("search", ["data"], () => ({
    searchText,
    searchMeaning,
    placeAbstract,
    served,
  }));
})();

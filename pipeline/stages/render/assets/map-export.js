/* Taking a list of papers away (part `exporter`): a search's, a topic's, a selection's or the
 * reading list's papers as CSV (doc_id, title, venue, year, track, topic, label, url) or as
 * BibTeX (one @inproceedings entry a paper, keyed by venue, year and doc_id), loading the text
 * shards the papers' titles and links are in first, and downloaded by the page itself (a Blob
 * and a download link: no server, works from file://).
 *
 * Our own code rather than a library: a CSV field and a BibTeX value are a few lines of
 * escaping, and the map loads no script from outside its folder.
 */
(() => {
  "use strict";

  const { paperText, typedColumn } = window.TopicMap.data;
  const CSV_COLUMNS = ["doc_id", "title", "venue", "year", "track", "topic", "label", "url"];

  /** A CSV field (RFC 4180): quoted, its quotes doubled, where it holds a comma, a quote, a
   * line break or space at an end. */
  function csvField(value) {
    const text = value === null || value === undefined ? "" : String(value);
    return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }

  // BibTeX's special characters in a braced value, as LaTeX writes them
  const BIBTEX_SPECIALS = {
    "\\": "\\textbackslash{}",
    "{": "\\{",
    "}": "\\}",
    "&": "\\&",
    "%": "\\%",
    $: "\\$",
    "#": "\\#",
    _: "\\_",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
  };

  /** Text as a BibTeX value's content: specials escaped, runs of white space as one space. */
  const bibtexText = (text) =>
    String(text)
      .replace(/[\\{}&%$#_~^]/g, (c) => BIBTEX_SPECIALS[c])
      .replace(/\s+/g, " ")
      .trim();

  /** A stable BibTeX key of paper i: its venue and year (letters and digits) and doc_id, e.g.
   * `iclr2023_p3f2a9c0d1e2b4a5`; the same paper gets the same key in every export. */
  function bibtexKey(D, i) {
    const venue = D.DATA.venues[D.venue[i]].toLowerCase().replace(/[^a-z0-9]/g, "");
    const year = D.year[i] ? String(D.year[i]) : "";
    const id = D.ids[i].replace(/[^A-Za-z0-9_:.-]/g, "_");
    return `${venue || "paper"}${year}_${id}`;
  }

  /** Each paper's track name ("" for none) from the page's track column (DATA.tracks, where
   * "no track" names the empty one), or "" for every paper where the page has none. */
  const trackNames = new WeakMap();
  function tracksOf(D) {
    if (!trackNames.has(D)) {
      const { papers, tracks } = D.DATA;
      const of = papers.track ? typedColumn(papers.track) : null;
      const names = (tracks || []).map((t) => (t === "no track" ? "" : t));
      trackNames.set(D, (i) => (of ? names[of[i]] : ""));
    }
    return trackNames.get(D);
  }

  /** Paper i's fields, from the page's arrays and its loaded text shard. */
  function record(D, i, trackOf) {
    const text = paperText(D, i);
    const topic = D.topics.get(D.topic[i]);
    return {
      doc_id: D.ids[i],
      title: text?.title || "",
      venue: D.DATA.venues[D.venue[i]],
      year: D.year[i] ? D.year[i] : "",
      track: trackOf(i),
      topic: D.topic[i],
      label: topic ? topic.label : "",
      url: text?.url || "",
      opening: text && !text.title ? text.abstract.split(/\s+/).slice(0, 16).join(" ") : "",
    };
  }

  function csv(records) {
    const lines = [CSV_COLUMNS.join(",")];
    for (const r of records) lines.push(CSV_COLUMNS.map((c) => csvField(r[c])).join(","));
    return `${lines.join("\r\n")}\r\n`;
  }

  /** One entry a paper: title (or, untitled, the abstract's opening words), the venue as
   * booktitle, year and url (braces percent-encoded, the rest as it is: a url is verbatim). */
  function bibtex(D, papers, records) {
    return records
      .map((r, k) => {
        const fields = [
          ["title", `{${bibtexText(r.title || r.opening)}}`],
          ["booktitle", bibtexText(r.venue)],
          ["year", String(r.year)],
          ["url", r.url.replace(/\{/g, "%7B").replace(/\}/g, "%7D")],
        ].filter(([, value]) => value !== "");
        const body = fields.map(([name, value]) => `  ${name} = {${value}},`).join("\n");
        return `@inproceedings{${bibtexKey(D, papers[k])},\n${body}\n}\n`;
      })
      .join("\n");
  }

  /** Let the browser save `text` as file `name`: a Blob behind a download link, clicked. */
  function download(name, text, type) {
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type }));
    link.download = name;
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
  }

  /**
   * The papers (indices, in the list's order) as "csv" or "bibtex" text, after loading the
   * shards that hold their text; `progress(done, total)` while they load. Papers whose shard
   * failed to load are written without title and url (D.failed says which).
   */
  async function text(D, papers, format, progress) {
    await D.loadPapers(papers, progress);
    const trackOf = tracksOf(D);
    const records = Array.from(papers, (i) => record(D, i, trackOf));
    return format === "csv" ? csv(records) : bibtex(D, papers, records);
  }

  /** Export the papers as `format` into a file named `stem` (.csv or .bib); resolves with the
   * text downloaded. */
  async function save(D, papers, format, stem, progress) {
    const out = await text(D, papers, format, progress);
    const csvFile = format === "csv";
    const type = csvFile ? "text/csv;charset=utf-8" : "application/x-bibtex;charset=utf-8";
    download(`${stem}.${csvFile ? "csv" : "bib"}`, out, type);
    return out;
  }

  window.TopicMap.define("exporter", ["helpers", "data"], () => ({
    text,
    save,
    csvField,
    bibtexText,
    bibtexKey,
  }));
})();

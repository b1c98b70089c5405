"""The map's data files: per-paper columns as compact typed arrays for the page, and the papers'
text (title, abstract, link, similar papers) in shards beside it, `map-data/text-NNN.js`.

A shard holds the papers of one topic (a large topic is cut into shards of at most
SHARD_PAPERS), in the page's paper order, so showing a topic, a paper or its neighbours loads
only a few files. Each shard is a script, `topicMapShard(NNN, "token", "payload")`: pages open
from disk, where Chromium refuses fetch() of file:// URLs but runs <script src>. The payload is
a JSON line and the papers' text (_payload), deflated (raw) and base64-encoded: abstracts are
most of a folder's bytes and deflate takes them to about 45% (base64 adds a third back), which
keeps a folder under 1 KB a paper; the page inflates it with the browser's DecompressionStream.
base64 has no character that could end a script, so no paper text can break out of one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

SHARD_DIR = "map-data"
SHARD_PAPERS = 1000  # papers in one shard at most: a click loads about 1,000 papers' text
SHARD_CALLBACK = "topicMapShard"
SHARD_MEMO = ".render/shards.json"  # each shard's raw and file digests (read_kept)
KeptShards = Callable[[str, str], "str | None"]  # (shard path, raw digest) -> its kept script


def typed_array(values: np.ndarray, dtype: str) -> dict:
    """A column as {"dtype", "data"}: little-endian bytes of `dtype` (numpy's name, the page
    reads it as the matching typed array), base64-encoded."""
    raw = np.ascontiguousarray(np.asarray(values).astype(np.dtype(dtype).newbyteorder("<")))
    return {"dtype": dtype, "data": base64.b64encode(raw.tobytes()).decode("ascii")}


def decode_typed_array(column: dict) -> np.ndarray:
    """typed_array's inverse (for tests and tools)."""
    dtype = np.dtype(column["dtype"]).newbyteorder("<")
    return np.frombuffer(base64.b64decode(column["data"]), dtype=dtype)


def smallest_int(values: np.ndarray) -> str:
    """The smallest of uint8, uint16 (no value negative), int16 and int32 that holds every
    value."""
    values = np.asarray(values)
    low, high = (int(values.min()), int(values.max())) if len(values) else (0, 0)
    for dtype in ("uint8", "uint16", "int32") if low >= 0 else ("int16", "int32"):
        if np.iinfo(dtype).min <= low and high <= np.iinfo(dtype).max:
            return dtype
    raise ValueError(f"values from {low} to {high} do not fit in int32")


def shard_of(topics: np.ndarray) -> np.ndarray:
    """Each paper's shard number: topics in increasing order (unassigned first), a topic's
    papers in their order, cut every SHARD_PAPERS papers."""
    topics = np.asarray(topics)
    shards = np.empty(len(topics), dtype=np.int64)
    next_shard = 0
    for topic in np.unique(topics):
        members = np.flatnonzero(topics == topic)
        shards[members] = next_shard + np.arange(len(members)) // SHARD_PAPERS
        next_shard += -(-len(members) // SHARD_PAPERS)
    return shards


def shard_path(number: int) -> str:
    return f"{SHARD_DIR}/text-{number:03d}.js"


PAPER_END, TITLE_END = "\x1e", "\x1f"  # the body's separators (ASCII record/unit separators)
_SEPARATORS = str.maketrans({PAPER_END: " ", TITLE_END: " "})


def _body(titles: list[str], abstracts: list[str]) -> str:
    return "".join(f"{t}{TITLE_END}{a}{PAPER_END}" for t, a in zip(titles, abstracts, strict=True))


def _raw(titles, abstracts, urls: list, members: np.ndarray, neighbours, similarities) -> bytes:
    """The shard's bytes before deflate: a JSON line (links, similar papers and their
    similarities), then the body, each paper's `title TITLE_END abstract PAPER_END` in UTF-8, which
    the page keeps as bytes (outside the JavaScript heap) and searches without decoding."""
    head = {
        "url": [urls[i] for i in members],
        "nn": neighbours[members].ravel().tolist(),
        "sim": [round(float(s), 3) for s in similarities[members].ravel()],
    }
    titles, abstracts = titles[members], abstracts[members]
    shown = [t if isinstance(t, str) and t.strip() else "" for t in titles]
    abstracts = [str(a) for a in abstracts]
    body = _body(shown, abstracts)
    if body.count(PAPER_END) + body.count(TITLE_END) != 2 * len(members):  # one in a text
        body = _body(*([t.translate(_SEPARATORS) for t in texts] for texts in (shown, abstracts)))
    line = json.dumps(head, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (line + "\n" + body).encode("utf-8")


def _script(number: int, raw: bytes) -> tuple[str, str]:
    """(token, the shard's script) of its raw bytes, deflated (raw deflate: what the browser's
    DecompressionStream takes) and base64-encoded."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = base64.b64encode(deflate.compress(raw) + deflate.flush()).decode("ascii")
    token = hashlib.sha1(payload.encode("ascii")).hexdigest()[:12]
    return token, f'{SHARD_CALLBACK}({number},"{token}","{payload}");\n'


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def shard_files(
    frame: pd.DataFrame,
    urls: list[str | None],
    shards: np.ndarray,
    neighbours: np.ndarray,
    similarities: np.ndarray,
    kept: KeptShards | None = None,
) -> tuple[dict[str, str], list[str]]:
    """({shard path: script text}, each shard's token). `frame` has the papers in the page's
    order, `urls` the link shown for each (or None); a shard's papers are those with its
    number in `shards`, in that order. The token (a digest of the payload) is written in
    the page too, so a shard left from another build is refused rather than shown.

    `kept(path, raw digest)`: the script an earlier build wrote from the same raw bytes, or
    None; it is reused rather than deflated again (deflate is most of a shard's cost, and
    papers added to a large map change few shards). The files include SHARD_MEMO, each
    shard's raw digest and its script's, which read_kept reads back."""
    files, tokens, memo = {}, [], {}
    # the columns once as arrays: taking them from the frame per shard copied them every time
    titles, abstracts = frame["title"].to_numpy(), frame["abstract"].to_numpy()
    neighbours, similarities = np.asarray(neighbours), np.asarray(similarities)
    for number in range(int(shards.max()) + 1 if len(shards) else 0):
        members = np.flatnonzero(shards == number)
        raw = _raw(titles, abstracts, urls, members, neighbours, similarities)
        path, raw_digest = shard_path(number), digest(raw)
        script = kept(path, raw_digest) if kept is not None else None
        if script is None:
            token, script = _script(number, raw)
        else:
            token = script.split('"', 2)[1]
        files[path] = script
        tokens.append(token)
        memo[path] = [raw_digest, digest(script.encode("ascii"))]
    files[SHARD_MEMO] = json.dumps(memo, indent=0, sort_keys=True) + "\n"
    return files, tokens


def read_kept(folder: Path) -> KeptShards:
    """shard_files' `kept` for the output `folder`: a shard file whose raw digest SHARD_MEMO
    records and whose bytes are still those recorded (not edited, not half-written)."""
    try:
        memo = json.loads((Path(folder) / SHARD_MEMO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}

    def kept(path: str, raw_digest: str) -> str | None:
        entry = memo.get(path) if isinstance(memo, dict) else None
        if not isinstance(entry, list) or len(entry) != 2 or entry[0] != raw_digest:
            return None
        try:
            data = (Path(folder) / path).read_bytes()
        except OSError:
            return None
        return data.decode("ascii") if digest(data) == entry[1] else None

    return kept


def read_shard(script: str) -> dict:
    """A shard script's data (for tests and tools): its number and token, and per paper its
    title (None when it has none), abstract, url, and the flat nn and sim lists."""
    head, token, _, payload, _ = script.split('"')
    number = int(head.removeprefix(SHARD_CALLBACK + "(").rstrip(","))
    text = zlib.decompress(base64.b64decode(payload), -15).decode("utf-8")
    line, body = text.split("\n", 1)
    papers = [p.split(TITLE_END, 1) for p in body.split(PAPER_END)[:-1]]
    texts = {"title": [t or None for t, _ in papers], "abstract": [a for _, a in papers]}
    return {"number": number, "token": token, **texts, **json.loads(line)}

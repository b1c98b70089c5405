"""The map's paper data as the page's scripts see it, decoded in Python for the render tests:
the typed arrays of map.html's JSON island and the text of its shards (map-data/text-NNN.js)."""

from __future__ import annotations

from pipeline.stages.render.mapfiles import SHARD_DIR, decode_typed_array, read_shard, shard_path
from tests.support.render_frames import island


def map_papers(files: dict[str, str]) -> dict[str, list]:
    """make_pages' files -> the papers' columns in page order: id, x, y, topic, venue,
    edition, shard (from the page) and title, abstract, url, nn, nn_sim (from the shards)."""
    data = island(files["map.html"], "paper-data")
    papers = data["papers"]
    columns = {"id": papers["ids"].split("\n") if papers["count"] else []}
    for name in ("x", "y", "topic", "venue", "edition", "shard"):
        columns[name] = decode_typed_array(papers[name]).tolist()
    texts = {
        name: [None] * papers["count"] for name in ("title", "abstract", "url", "nn", "nn_sim")
    }
    k = data["n_neighbours"]
    for number, token in enumerate(data["shard_tokens"]):
        shard = read_shard(files[shard_path(number)])
        assert (shard["number"], shard["token"]) == (number, token)
        members = [i for i, s in enumerate(columns["shard"]) if s == number]
        for slot, i in enumerate(members):
            texts["title"][i] = shard["title"][slot]
            texts["abstract"][i] = shard["abstract"][slot]
            texts["url"][i] = shard["url"][slot]
            texts["nn"][i] = shard["nn"][slot * k : (slot + 1) * k]
            texts["nn_sim"][i] = shard["sim"][slot * k : (slot + 1) * k]
    return columns | texts


def shard_names(files: dict[str, str]) -> list[str]:
    return sorted(name for name in files if name.startswith(SHARD_DIR + "/"))

"""`topicmap serve` over a small finished build (six papers, a bag-of-words stand-in for the
model), run by uvicorn on a free local port and asked over real HTTP: search by meaning, placing
an abstract (the same core as `topicmap place`), the folder's files and nothing outside it, and
every bad request of the issue answered with its 4xx in one JSON line, the server answering a
good request after each. The real model and the bundled build: test_serve_build.py."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from pipeline import place as placing
from pipeline import search
from pipeline.errors import PipelineError
from pipeline.neighbours import unit_rows
from pipeline.serve import allowed_hosts, app, build
from tests.support.runs import run_main
from tests.support.serving import (
    ABSTRACTS,
    FakeQueryEncoder,
    fake_vectors,
    request,
    running,
    served_config,
    write_served_build,
)


@pytest.fixture
def served(tmp_path, monkeypatch):
    """(base URL, the loaded build) of the six-paper build served in a thread."""
    monkeypatch.setattr(build, "QueryEncoder", FakeQueryEncoder)
    folder = write_served_build(tmp_path / "out", served_config(tmp_path / "out"))
    (tmp_path / "secret.txt").write_text("outside the output folder", encoding="utf-8")
    loaded = build.load_build(folder, served_config(folder))
    with running(app.make_app(loaded)) as base:
        yield base, loaded


def _still_answers(base: str) -> None:
    status, answer = request(base, "GET", "/api/search?q=molecules&k=1")
    assert status == 200 and len(answer["results"]) == 1


def test_search_answers_the_papers_nearest_in_meaning_with_their_topic_and_label(served):
    base, loaded = served
    status, answer = request(base, "GET", "/api/search?q=drug%20molecules%20graphs&k=3")
    assert status == 200 and answer["k"] == 3
    results = answer["results"]
    assert [r["doc_id"] for r in results][:2] == ["p1", "p0"]  # the two that share its words
    assert [r["topic_label"] for r in results[:2]] == ["molecules", "molecules"]
    assert results[0]["theme_label"] == "science" and results[0]["title"] == "Drug candidates"
    similarities = [r["similarity"] for r in results]
    assert similarities == sorted(similarities, reverse=True)
    expected = fake_vectors(["drug molecules graphs"])[0] @ loaded.vectors[1]
    assert similarities[0] == pytest.approx(expected, abs=1e-5)
    assert set(results[0]) == {*app.RESULT_COLUMNS, "similarity"}


def test_the_default_k_and_a_k_above_the_papers(served):
    base, _ = served
    assert len(request(base, "GET", "/api/search?q=agents")[1]["results"]) == 6  # 10 asked, 6
    assert len(request(base, "GET", "/api/search?q=agents&k=2")[1]["results"]) == 2


def test_place_answers_what_topicmap_place_gives_and_the_nearest_papers(served, tmp_path):
    base, loaded = served
    body = {"title": "Curious robots", "abstract": ABSTRACTS[4] + " More rewards.", "k": 3}
    status, answer = request(base, "POST", "/api/place", body)
    assert status == 200
    path = tmp_path / "new.json"
    path.write_text(json.dumps([{"title": body["title"], "abstract": body["abstract"]}]))
    documents = placing.read_papers(path, loaded.config)
    table, _ = placing.place_documents(documents, loaded.saved, fake_vectors)
    row = table.iloc[0]
    assert (answer["topic"], answer["topic_label"], answer["theme_label"]) == (
        1,
        "agents",
        "control",
    )
    assert (answer["topic"], answer["doc_id"]) == (int(row["topic"]), row["doc_id"])
    for key in ("similarity", "x", "y"):
        assert answer[key] == pytest.approx(float(row[key]), abs=1e-5)
    assert [n["doc_id"] for n in answer["neighbours"]][0] == "p4" and len(answer["neighbours"]) == 3


def test_the_folders_files_are_served_and_nothing_outside_it(served):
    base, _ = served
    status, text = request(base, "GET", "/map.html")
    assert status == 200 and "<title>map</title>" in text
    assert request(base, "GET", "/")[0] == 200  # the report, index.html
    for path in [
        "/../secret.txt",
        "/../../etc/passwd",
        "/%2e%2e/secret.txt",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/..%2fsecret.txt",
        "/..%2f..%2fetc%2fpasswd",
        "/%252e%252e/secret.txt",
        "/model/..%2f..%2fsecret.txt",
        "/..\\secret.txt",
        "/map.html/../../secret.txt",
        "//etc/passwd",
    ]:
        status, text = request(base, "GET", path)
        assert 400 <= status < 500, (path, status)
        assert "outside the output folder" not in str(text) and "root:" not in str(text), path
        _still_answers(base)


def test_a_link_out_of_the_folder_is_not_followed(served, tmp_path):
    base, loaded = served
    os.symlink(tmp_path / "secret.txt", loaded.folder / "link.txt")
    assert request(base, "GET", "/link.txt")[0] == 404
    _still_answers(base)


BIG = {"abstract": "word " * 4_001}  # 20,005 characters


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status", "says"),
    [
        ("POST", "/api/place", BIG, None, 413, "at most 20,000"),
        ("POST", "/api/place", "x" * 300_000, {"Content-Type": "application/json"}, 413, "KiB"),
        ("POST", "/api/place", {"title": "No abstract"}, None, 422, "missing field: abstract"),
        ("POST", "/api/place", "{not json", {"Content-Type": "application/json"}, 400, "JSON"),
        ("POST", "/api/place", b"\xff\xfe", {"Content-Type": "application/json"}, 400, "JSON"),
        ("POST", "/api/place", "abstract=x", {"Content-Type": "text/plain"}, 415, "json"),
        ("POST", "/api/place", "[1, 2]", {"Content-Type": "application/json"}, 400, "object"),
        ("POST", "/api/place", {"abstract": 5}, None, 422, "abstract must be text"),
        ("POST", "/api/place", {"abstract": "too short"}, None, 422, "too short"),
        ("POST", "/api/place", {"abstract": ABSTRACTS[0], "k": 0}, None, 400, "k must be"),
        ("POST", "/api/place", {"abstract": ABSTRACTS[0], "extra": 1}, None, 422, "unknown"),
        ("GET", "/api/place", None, None, 405, "POST the title"),
        ("DELETE", "/api/search?q=x", None, None, 405, "GET /api/search"),
        ("GET", "/api/search", None, None, 400, "missing parameter: q"),
        ("GET", "/api/search?q=%20%20", None, None, 400, "q is empty"),
        ("GET", "/api/search?q=" + "a" * 1_001, None, None, 414, "1,000"),
        ("GET", "/api/search?q=x&k=101", None, None, 400, "from 1 to 100"),
        ("GET", "/api/search?q=x&k=ten", None, None, 400, "whole number"),
        ("GET", "/api/search?q=x&k=-1", None, None, 400, "from 1 to 100"),
        ("GET", "/api/nothing", None, None, 404, "no such API"),
        ("DELETE", "/map.html", None, None, 405, "Method Not Allowed"),
    ],
)
def test_a_bad_request_gets_its_4xx_in_one_json_line_and_the_server_answers_on(
    served, method, path, body, headers, status, says
):
    base, _ = served
    got, answer = request(base, method, path, body, headers)
    assert got == status, answer
    assert isinstance(answer, dict) and set(answer) == {"error"}, answer
    assert says in answer["error"] and "\n" not in answer["error"]
    assert "Traceback" not in answer["error"]
    _still_answers(base)


def test_a_failure_inside_answers_500_in_one_line_and_the_server_answers_on(served):
    base, loaded = served

    def broken(texts):
        raise RuntimeError("boom\nwith a second line")

    object.__setattr__(loaded, "embed", broken)
    status, answer = request(base, "GET", "/api/search?q=molecules")
    assert status == 500 and answer == {"error": "the server could not answer this request"}
    object.__setattr__(loaded, "embed", FakeQueryEncoder(loaded.config))
    _still_answers(base)


def test_a_model_that_cannot_load_answers_503_in_one_line_and_the_pages_are_served(
    tmp_path, monkeypatch
):
    def missing(config):
        raise OSError("no model files\nhere")

    monkeypatch.setattr(build.encoders, "load_encoder", missing)
    folder = write_served_build(tmp_path / "out", served_config(tmp_path / "out"))
    with pytest.raises(build.ModelUnavailable, match="could not be loaded"):
        build.load_build(folder, served_config(folder))
    loaded = build.load_build(folder, served_config(folder), background=True)
    with running(app.make_app(loaded)) as base:
        status, answer = request(base, "GET", "/api/search?q=molecules")
        assert (
            status == 503
            and "could not be loaded (OSError: no model files here)" in answer["error"]
        )
        assert request(base, "POST", "/api/place", {"abstract": ABSTRACTS[0]})[0] == 503
        assert request(base, "GET", "/map.html")[0] == 200


def test_a_request_made_while_the_model_loads_waits_for_it(tmp_path, monkeypatch):
    import threading

    release = threading.Event()

    class Slow(FakeQueryEncoder):
        def __init__(self, config):
            super().__init__(config)
            self.ready = threading.Event()

        def load(self):
            release.wait(10)
            self.ready.set()

        def __call__(self, texts):
            self.ready.wait()
            return super().__call__(texts)

    monkeypatch.setattr(build, "QueryEncoder", Slow)
    folder = write_served_build(tmp_path / "out", served_config(tmp_path / "out"))
    loaded = build.load_build(folder, served_config(folder), background=True)
    with running(app.make_app(loaded)) as base:
        assert request(base, "GET", "/map.html")[0] == 200  # the pages at once
        threading.Timer(0.3, release.set).start()
        assert request(base, "GET", "/api/search?q=molecules&k=1")[0] == 200


def test_no_cross_origin_access_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "QueryEncoder", FakeQueryEncoder)
    folder = write_served_build(tmp_path / "out", served_config(tmp_path / "out"))
    loaded = build.load_build(folder, served_config(folder))
    origin = {"Origin": "http://elsewhere.example"}
    with running(app.make_app(loaded)) as base:
        assert "access-control" not in str(_headers(base, origin)).lower()
    with running(app.make_app(loaded, cors="http://elsewhere.example")) as base:
        assert _headers(base, origin)["access-control-allow-origin"] == origin["Origin"]


def _headers(base: str, headers: dict) -> dict:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.request("GET", "/api/search?q=agents", headers=headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return {k.lower(): v for k, v in response.getheaders()}


def test_only_loopback_names_reach_a_server_bound_to_loopback(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "QueryEncoder", FakeQueryEncoder)
    folder = write_served_build(tmp_path / "out", served_config(tmp_path / "out"))
    loaded = build.load_build(folder, served_config(folder))
    assert allowed_hosts("0.0.0.0") == ["*"]
    with running(app.make_app(loaded, hosts=allowed_hosts("127.0.0.1"))) as base:
        status, answer = request(base, "GET", "/map.html", headers={"Host": "evil.example"})
        assert status == 400 and answer == {
            "error": "this server answers requests to this machine only"
        }
        assert request(base, "GET", "/map.html", headers={"Host": "127.0.0.1.evil:80"})[0] == 400
        assert request(base, "GET", "/map.html", headers={"Host": "[::1]:8000"})[0] == 200
        assert request(base, "GET", "/map.html", headers={"Host": "localhost:1"})[0] == 200


def test_loading_reads_each_table_once_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "QueryEncoder", FakeQueryEncoder)
    folder = write_served_build(tmp_path / "out", served_config(tmp_path / "out"))
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    loaded = build.load_build(folder, served_config(folder))
    with running(app.make_app(loaded)) as base:
        request(base, "POST", "/api/place", {"abstract": ABSTRACTS[2]})
        request(base, "GET", "/api/search?q=protein")
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*")} == before
    assert loaded.papers["doc_id"].tolist() == [f"p{i}" for i in range(6)]
    assert np.allclose(np.linalg.norm(loaded.vectors, axis=1), 1, atol=1e-5)


def test_a_folder_that_is_not_a_finished_build_is_refused_in_one_line(tmp_path):
    folder = write_served_build(tmp_path / "out", served_config(tmp_path / "out"))
    (folder / "map.html").unlink()
    with pytest.raises(PipelineError, match=r"not a finished build \(missing map\.html\)"):
        build.check_finished(folder)
    result = run_main("serve", "--dir", str(tmp_path / "nowhere"))
    assert result.returncode == 1 and result.stderr.strip().endswith(
        "nowhere: no such output folder"
    )
    result = run_main("serve", "--dir", str(folder))
    line = result.stderr.strip()
    assert result.returncode == 1 and line.startswith("error: ") and "missing map.html" in line
    assert "\n" not in line


def test_a_build_without_its_stamps_needs_its_config(tmp_path):
    folder = write_served_build(tmp_path / "out", served_config(tmp_path / "out"))
    with pytest.raises(PipelineError, match=r"missing \.params/ingest\.json\): pass its config"):
        build.config_of_build(folder)


def test_the_builds_stamps_give_its_settings_and_the_precision_it_embedded_with(tmp_path):
    from pipeline.commands import write_stamps

    config = served_config(tmp_path / "out")
    write_stamps(config, tmp_path / "out")
    stamp = json.loads((tmp_path / "out/.params/embed.json").read_text())
    read = build.config_of_build(tmp_path / "out")
    assert read.embed.precision == stamp["machine"]["embed_precision"] != "auto"
    assert read.cluster == config.cluster and read.ingest == config.ingest


def test_best_matches_is_exact_best_first_ties_to_the_lower_index():
    vectors = unit_rows(np.array([[1, 0], [0, 1], [1, 1], [0, 1], [-1, 0]], float))
    indices, similarities = search.best_matches(vectors, np.array([0, 1], np.float32), 3)
    assert indices.tolist() == [1, 3, 2]
    assert similarities.tolist() == pytest.approx([1, 1, 2**-0.5])
    assert search.best_matches(vectors, np.array([1, 0], np.float32), 10)[0].tolist() == [
        0,
        2,
        1,
        3,
        4,
    ]
    rng = np.random.default_rng(0)
    many = unit_rows(rng.normal(size=(5000, 16)))
    query = many[17]
    found, _ = search.best_matches(many, query, 25)
    assert found.tolist() == np.argsort(-(many @ query), kind="stable")[:25].tolist()


@pytest.mark.parametrize(
    ("query", "message"),
    [(None, "q must be text"), ("", "q is empty"), ("a" * 1001, "at most 1,000")],
)
def test_query_text_refuses_what_the_limits_refuse(query, message):
    with pytest.raises(search.BadQuery, match=message):
        search.query_text(query)


def test_query_text_is_the_text_with_its_spaces_normalised():
    assert search.query_text("  graph\n\tneural  nets ") == "graph neural nets"
    assert search.result_count(None) == search.DEFAULT_K and search.result_count("7") == 7


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_a_port_that_cannot_be_listened_on_is_one_line(tmp_path, port):
    result = run_main("serve", "--dir", str(tmp_path), "--port", port)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")


def test_a_failure_of_ours_is_answered_not_raised_again_into_the_log():
    """Starlette's handler of last resort answers, then raises the error again (a traceback in
    the server's log): the API's own wrapper answers the 500 itself."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    def run(coroutine):  # a loop of its own: another test's may be running in this thread
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coroutine).result()

    def broken():
        raise RuntimeError("boom")

    response = run(app.answered(broken))
    assert response.status_code == 500
    assert json.loads(response.body) == {"error": "the server could not answer this request"}
    with pytest.raises(app.BadQuery):  # the request's own faults go to their 4xx handlers
        run(app.answered(lambda: (_ for _ in ()).throw(app.BadQuery("q is empty"))))


def test_settings_given_beside_a_build_folder_are_refused_not_ignored(tmp_path):
    result = run_main("serve", "--dir", str(tmp_path), "--set", "render.title=Mine")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        "error: serve --dir serves the build's own settings: --set needs --config"
    )

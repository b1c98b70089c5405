"""The server's routes (Starlette): the output folder's files, /api/search and /api/place.

Safe by default: files are served only from inside the output folder (Starlette's StaticFiles
resolves every path and refuses one outside it, links included); request bodies, queries and
k are capped; a bad request gets a 4xx JSON error of one line, an unexpected failure a 500 of
one line, never a traceback; no cross-origin access unless `cors` names an origin; /api/place
takes JSON only, so a page of another origin cannot post to it without a CORS preflight.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from pipeline.errors import PipelineError
from pipeline.place import place_documents
from pipeline.search import (
    MAX_ABSTRACT_CHARS,
    MAX_QUERY_CHARS,
    BadQuery,
    best_matches,
    query_text,
    result_count,
)
from pipeline.serve.build import ModelUnavailable, ServedBuild
from pipeline.stages.ingest import make_documents
from pipeline.stages.ingest.readers import RawRecord

log = logging.getLogger("pipeline.serve")

MAX_BODY_BYTES = 256 * 1024  # a request body above this is refused before it is read whole
ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
RESULT_COLUMNS = ["doc_id", "title", "venue", "year", "topic", "topic_label", "theme"]
RESULT_COLUMNS += ["theme_label", "x", "y"]


class BadRequest(Exception):
    """A request refused with `status` and a one-line message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def plain(value):
    """A table value as JSON takes it (numpy scalars, pandas' missing values)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return round(float(value), 6)
    return value


def paper_rows(build: ServedBuild, indices: np.ndarray, similarities: np.ndarray) -> list[dict]:
    rows = build.papers.iloc[indices][RESULT_COLUMNS].to_dict("records")
    return [
        {**{k: plain(v) for k, v in row.items()}, "similarity": round(float(s), 6)}
        for row, s in zip(rows, similarities, strict=True)
    ]


def search(build: ServedBuild, query: object, k: object) -> dict:
    """The k papers nearest in meaning to the query text."""
    text = query_text(query)
    count = result_count(k)
    vector = build.embed([text])[0]
    indices, similarities = best_matches(build.vectors, vector, count)
    return {"query": text, "k": count, "results": paper_rows(build, indices, similarities)}


def placing_record(body: object) -> RawRecord:
    """The request's title and abstract as ingest reads a record."""
    if not isinstance(body, dict):
        raise BadRequest(400, "the body must be a JSON object with an abstract (and a title)")
    if "abstract" not in body:
        raise BadRequest(422, "missing field: abstract")
    unknown = sorted(set(body) - {"title", "abstract", "k"})
    if unknown:
        raise BadRequest(422, f"unknown field(s): {', '.join(unknown)}")
    for field in ("title", "abstract"):
        value = body.get(field)
        if value is not None and not isinstance(value, str):
            raise BadRequest(422, f"{field} must be text")
        if isinstance(value, str) and len(value) > MAX_ABSTRACT_CHARS:
            raise BadRequest(
                413, f"{field} is {len(value):,} characters; at most {MAX_ABSTRACT_CHARS:,}"
            )
    return RawRecord(source="request:1", abstract=body["abstract"], title=body.get("title"))


def place(build: ServedBuild, body: object) -> dict:
    """The abstract placed as `topicmap place` places a paper, and its nearest papers."""
    record = placing_record(body)
    count = result_count(body.get("k"))
    documents, rejected = make_documents([record], build.config.ingest)
    if documents.empty:
        raise BadRequest(422, f"abstract not placed: {rejected['reason'].iloc[0]}")
    table, vectors = place_documents(documents, build.saved, build.embed)
    placed = {k: plain(v) for k, v in table.iloc[0].to_dict().items()}
    indices, similarities = best_matches(build.vectors, vectors[0], count)
    return {**placed, "neighbours": paper_rows(build, indices, similarities)}


async def read_json_body(request: Request) -> object:
    """The body as JSON: refused above MAX_BODY_BYTES (by its header or as it streams), when
    not declared JSON, or when it does not parse."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise BadRequest(415, "send the body as application/json")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise BadRequest(413, f"request body over {MAX_BODY_BYTES // 1024} KiB")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise BadRequest(413, f"request body over {MAX_BODY_BYTES // 1024} KiB")
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise BadRequest(400, "the body is not valid JSON") from None


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status)


class KnownHosts:
    """Refuse (400) a request whose Host header names a host not in `hosts` ("*": any). Ours
    rather than Starlette's TrustedHostMiddleware, which answers in plain text: every refusal
    here is one JSON line."""

    def __init__(self, app, hosts: list[str]):
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and "*" not in self.hosts:
            host = Headers(scope=scope).get("host", "")
            name = host[: host.find("]") + 1] if host.startswith("[") else host.split(":")[0]
            if name not in self.hosts:
                await error(400, "this server answers requests to this machine only")(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


async def no_such_api(request: Request) -> JSONResponse:
    raise BadRequest(404, f"no such API: {request.url.path[:100]}")


async def refused(_request: Request, exc: Exception) -> JSONResponse:
    """Every failure as one JSON line: the request's own (4xx), or ours (500, logged)."""
    if isinstance(exc, BadRequest):
        return error(exc.status, str(exc))
    if isinstance(exc, BadQuery):
        return error(400, str(exc))
    if isinstance(exc, HTTPException):
        return error(exc.status_code, exc.detail)
    if isinstance(exc, ModelUnavailable):
        return error(503, str(exc))
    if isinstance(exc, PipelineError):
        return error(422, str(exc))
    log.error("request failed: %s: %s", type(exc).__name__, " ".join(str(exc).split()))
    return error(500, "the server could not answer this request")


async def answered(work, *args) -> JSONResponse:
    """`work(*args)` run in a worker thread, as JSON; a failure of ours is answered here as a
    500 in one line (and logged in one), since Starlette's handler of last resort would answer
    but then raise it again into the server's log as a traceback."""
    try:
        return JSONResponse(await run_in_threadpool(work, *args))
    except (BadRequest, BadQuery, HTTPException, PipelineError):
        raise
    except Exception as exc:  # any failure of ours: one line, and the server answers on
        return await refused(None, exc)


def make_app(build: ServedBuild, cors: str | None = None, hosts: list[str] | None = None):
    """The server's ASGI app over a loaded build."""

    async def api_search(request: Request) -> JSONResponse:
        if request.method != "GET":
            raise BadRequest(405, "GET /api/search?q=...&k=...")
        params = request.query_params
        if len(params.get("q", "")) > MAX_QUERY_CHARS:
            raise BadRequest(414, f"q is over {MAX_QUERY_CHARS:,} characters")
        if "q" not in params:
            raise BadRequest(400, "missing parameter: q")
        return await answered(search, build, params["q"], params.get("k"))

    async def api_place(request: Request) -> JSONResponse:
        if request.method != "POST":
            raise BadRequest(405, "POST the title and abstract as JSON")
        body = await read_json_body(request)
        return await answered(place, build, body)

    middleware = [Middleware(KnownHosts, hosts=hosts or ["*"])]
    if cors:
        allow = {"allow_methods": ["GET", "POST"], "allow_headers": ["content-type"]}
        middleware.append(Middleware(CORSMiddleware, allow_origins=[cors], **allow))
    routes = [
        Route("/api/search", api_search, methods=ANY_METHOD),
        Route("/api/place", api_place, methods=ANY_METHOD),
        Route("/api/{rest:path}", no_such_api, methods=ANY_METHOD),
        Mount("/", StaticFiles(directory=build.folder, html=True, follow_symlink=False)),
    ]
    handlers = {cls: refused for cls in (BadRequest, BadQuery, HTTPException, PipelineError)}
    handlers[Exception] = refused
    return Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)

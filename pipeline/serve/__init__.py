"""`topicmap serve [--config FILE | --dir OUTPUT_DIR] [--host H] [--port N] [--cors ORIGIN]`:
a local HTTP server (Starlette on uvicorn) over a finished build: its pages and files, search by
meaning (GET /api/search?q=...&k=...) and placing an abstract (POST /api/place, the same core as
`topicmap place`). It loads the model, the embeddings and the saved topic model once, at start
(the model in a thread of its own: the pages are served at once, and a search or a placing made
while the model loads waits for it), and never writes to the output folder or the embeddings
cache.

Bound to 127.0.0.1 unless --host says otherwise; --port 0 takes a free port. The address it
listens on is printed as one line, `serving http://HOST:PORT/map.html`, once loaded.
"""

from __future__ import annotations

import logging
import socket
import sys
from pathlib import Path

from pipeline.config import Config
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.serve")

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def allowed_hosts(host: str) -> list[str]:
    """The Host headers answered: the loopback names when bound to loopback (a page of another
    site cannot reach the server by rebinding its own name to 127.0.0.1), else any."""
    if host in LOCAL_HOSTS:
        return ["127.0.0.1", "localhost", "[::1]"]
    return ["*"]


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, refused in one line when taken or not allowed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:  # taken, not ours, or not a port (OverflowError)
        sock.close()
        reason = getattr(exc, "strerror", None) or exc
        raise PipelineError(f"cannot listen on {host}:{port}: {reason}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(folder: Path, config: Config | None, host: str, port: int, cors: str | None) -> None:
    """Load the build in `folder` and answer requests until interrupted."""
    import uvicorn

    from pipeline.serve.app import make_app
    from pipeline.serve.build import load_build

    sock = bind(host, port)
    build = load_build(folder, config, background=True)
    app = make_app(build, cors=cors, hosts=allowed_hosts(host))
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    )
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/map.html"

    # the socket listens already: a request sent from now on waits in its queue and is answered
    print(f"serving {url}", file=sys.stderr, flush=True)
    server.run(sockets=[sock])

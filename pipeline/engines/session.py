"""A Ray session for one stage: join the cluster at `RAY_ADDRESS` (or `engine.address`), or
start a local Ray instance on this machine's cores that stops with the stage.

`ray` is imported here, when a stage asks for the Ray engine, and nowhere else on the way in:
without the `ray` extra the local engine works as before.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Iterator

from pipeline.config import EngineConfig
from pipeline.errors import PipelineError

log = logging.getLogger("pipeline.engines")
CONNECT_TIMEOUT_S = 5.0
BACKEND_LOG = "RAY_BACKEND_LOG_LEVEL"
QUIET = ("ray", "ray.data", "ray.train", "ray.tune")  # their INFO lines would bury ours


def import_ray():
    try:
        import ray
        import ray.data  # noqa: F401  (Ray Data: the engine's map_batches)
    except ImportError:
        raise PipelineError(
            "engine: ray needs Ray: pip install -e '.[ray]' (or set engine: local)"
        ) from None
    return ray


def host_port(address: str) -> tuple[str, int] | None:
    """The (host, port) to probe for an address such as `head:6379` or `ray://head:10001`;
    None for `auto` or `local`, which Ray resolves itself."""
    bare = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = bare.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


def check_reachable(address: str) -> None:
    """One line, before Ray's own minutes of retries, when nothing listens at `address`."""
    target = host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise PipelineError(
            f"cannot reach the Ray cluster at {address} ({reason}); start it with "
            "`ray start --head` or fix RAY_ADDRESS / engine.address"
        ) from None


def local_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def quiet_backend() -> Iterator[None]:
    """Ray's C++ warnings (constructor arguments in the object store, ...) off while Ray starts,
    for the processes it starts then; the environment is put back after."""
    saved = os.environ.get(BACKEND_LOG)
    os.environ[BACKEND_LOG] = "fatal"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(BACKEND_LOG, None)
        else:
            os.environ[BACKEND_LOG] = saved


@contextlib.contextmanager
def ray_session(engine: EngineConfig) -> Iterator[object]:
    """`ray`, initialised for the stage: an existing session is reused, a cluster joined, or a
    local instance started (and shut down again when the stage ends)."""
    ray = import_ray()
    for name in QUIET:  # Ray's own tracebacks of a failed task: the stage says it in a line
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if ray.is_initialized():
        yield ray
        return
    address = engine.ray_address()
    options = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    if address:
        check_reachable(address)
    else:
        options["num_cpus"] = local_cpus()
    try:
        with quiet_backend():
            ray.init(address=address, **options)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError, ...
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise PipelineError(f"cannot start {where}: {' '.join(str(exc).split())[:300]}") from None
    log.info(
        "ray: %s, %d CPUs", address or "local instance", int(ray.cluster_resources().get("CPU", 0))
    )
    try:
        data = ray.data.DataContext.get_current()
        data.enable_progress_bars = False  # ours show papers done / total and papers/s
        data.print_on_execution_start = False
        yield ray
    finally:
        ray.shutdown()

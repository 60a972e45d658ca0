"""Running the app under uvicorn: one process, or `--workers N` processes, each listening on the port with
its own socket (SO_REUSEPORT, Linux).

Why a socket each: with one shared listening socket, whichever process wakes first takes every waiting
connection. Measured on 2 cores with 50 keep-alive connections opened at once, two processes split them
1/49, 12/38, 19/31, 24/26 (six tries, `ss -tnp`), and each connection waits for the requests of the others on
its process: the busy process sets the tail latency. With a socket each, the kernel spreads connections over
the processes by a hash of their addresses. Elsewhere (no SO_REUSEPORT, or BSD semantics) uvicorn's own
supervisor shares one socket.

The connection's edge (the request's is `gpuplan.web.edge`): at most `max_connections` open connections
(uvicorn's `limit_concurrency`: past it, 503), an idle keep-alive connection closed after
`KEEP_ALIVE_S`, and a request whose headers have not all arrived `HEADER_TIMEOUT_S` after its first byte
(or after the connection opened) closed: 200 clients dribbling a byte a second hold nothing for long.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
import threading
from typing import Any, TypedDict

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from gpuplan.errors import UsageError

HEADER_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
MAX_CONNECTIONS = 256
log = logging.getLogger("gpuplan.web")


class EdgeProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline on a request's headers."""

    _deadline: Any = None

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(HEADER_TIMEOUT_S, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            log.info("closing a connection whose request headers took over %g s", HEADER_TIMEOUT_S)
            self.transport.close()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


class _UvicornOptions(TypedDict):
    """Options both serving paths give uvicorn (typed, so each is checked against uvicorn's own)."""

    log_level: str
    access_log: bool
    backlog: int
    http: type[HttpToolsProtocol]
    timeout_keep_alive: int
    limit_concurrency: int
    server_header: bool


def options(max_connections: int = MAX_CONNECTIONS) -> _UvicornOptions:
    """Access logging is off (one line per request costs as much as a small request); warnings and errors
    are still logged."""
    return {"log_level": "warning", "access_log": False, "backlog": 1024, "http": EdgeProtocol,
            "timeout_keep_alive": KEEP_ALIVE_S, "limit_concurrency": max_connections, "server_header": False}


def _workers_spawn_cleanly() -> None:
    """The heavy workers are spawned interpreters (`gpuplan.web.worker`); multiprocessing re-imports the
    parent's `__main__` in each unless it is a package's `__main__`. Under the `gpuplan` script that would be
    the whole CLI: name it as `python -m gpuplan` does."""
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__spec__", None) is None:
        from importlib.machinery import ModuleSpec

        main.__spec__ = ModuleSpec("gpuplan.__main__", None)


def run(config: dict[str, Any], *, host: str, port: int, workers: int = 1, app: Any = None,
        max_connections: int = MAX_CONNECTIONS) -> None:
    """Serve `create_app(**config)` until interrupted. `app`: the one-process app, if already built from
    `config`. `max_connections` is per process."""
    import uvicorn

    from gpuplan.web.app import CONFIG_ENV, create_app, ready

    _workers_spawn_cleanly()
    if workers <= 1:
        web = ready(app if app is not None else create_app(**config))
        uvicorn.run(web, host=host, port=port, **options(max_connections))
        return
    if sys.platform == "linux":
        _supervise(config, host=host, port=port, workers=workers, max_connections=max_connections)
        return
    from uvicorn.supervisors import Multiprocess

    os.environ[CONFIG_ENV] = json.dumps(config)  # each worker is a fresh interpreter: it rebuilds the app
    cfg = uvicorn.Config("gpuplan.web.app:app_from_env", factory=True, workers=workers, host=host, port=port,
                         **options(max_connections))
    sock = cfg.bind_socket()
    _no_delay(sock)
    Multiprocess(cfg, sockets=[sock]).run()


def _no_delay(sock: socket.socket) -> None:
    """uvicorn creates its sockets with protocol 0, so asyncio does not turn on TCP_NODELAY for the connections
    accepted from them, and a response written in two parts (head, body) then waits for the client's delayed
    ACK: about 40 ms per request. Linux copies the option from the listening socket to accepted ones."""
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def listener(host: str, port: int, *, listen: bool = True) -> socket.socket:
    """A TCP socket bound to (host, port) with SO_REUSEPORT, listening unless `listen` is False."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    _no_delay(sock)
    sock.bind((host.strip("[]"), port))
    if listen:
        sock.listen(options()["backlog"])
    return sock


def serve_worker(config: dict[str, Any], host: str, port: int, max_connections: int) -> None:
    """One of `--workers N` processes: the app built and warmed before its socket listens, so connections
    only reach a ready process. Exits with uvicorn's STARTUP_FAILURE when it could not start."""
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    from gpuplan.web.app import create_app, ready

    try:
        web = ready(create_app(**config))
        sock = listener(host, port)
    except Exception:
        log.exception("a server process could not start")
        sys.exit(STARTUP_FAILURE)
    server = uvicorn.Server(uvicorn.Config(web, **options(max_connections)))
    server.run(sockets=[sock])
    if not server.started:
        sys.exit(STARTUP_FAILURE)


def _supervise(config: dict[str, Any], *, host: str, port: int, workers: int, max_connections: int) -> None:
    """Start `workers` processes (`serve_worker`), replace one that dies, stop them all on SIGINT or SIGTERM.
    A process that could not start stops the server (it would fail the same way again). The parent keeps a
    bound socket that never listens: it holds the port (port 0: picks it) while processes come and go."""
    import multiprocessing

    from uvicorn.config import STARTUP_FAILURE

    ctx = multiprocessing.get_context("spawn")
    try:
        keep = listener(host, port, listen=False)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", field="--port",
                         hint="another program may hold it: choose another with --port (0: any free one).") from None
    port = keep.getsockname()[1]
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())

    def start() -> Any:
        proc = ctx.Process(target=serve_worker, args=(config, host, port, max_connections), name="gpuplan-serve")
        proc.start()
        return proc

    procs = [start() for _ in range(workers)]
    failed = False
    while not stop.wait(0.5):
        for i, proc in enumerate(procs):
            if proc.is_alive():
                continue
            if proc.exitcode == STARTUP_FAILURE:
                failed = True
                stop.set()
                break
            log.warning("server process %s exited (%s); starting another", proc.pid, proc.exitcode)
            procs[i] = start()
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join()
    keep.close()
    if failed:
        log.error("a server process failed to start; stopping")
        sys.exit(STARTUP_FAILURE)

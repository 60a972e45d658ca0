"""Running the app under uvicorn: one process, or `--workers N` processes sharing one listening socket."""

from __future__ import annotations

import json
import os
import socket
from typing import Any, TypedDict


class _UvicornOptions(TypedDict):
    """Options both serving paths give uvicorn (typed, so each is checked against uvicorn's own)."""

    log_level: str
    access_log: bool
    backlog: int


UVICORN: _UvicornOptions = {"log_level": "warning", "access_log": False, "backlog": 1024}


def run(config: dict[str, Any], *, host: str, port: int, workers: int = 1, app: Any = None) -> None:
    """Serve `create_app(**config)` until interrupted. Access logging is off (one line per request costs as
    much as a small request); warnings and errors are still logged. `app`: the one-process app, if already
    built from `config`."""
    import uvicorn

    from gpuplan.web.app import CONFIG_ENV, create_app, warm_up

    if workers <= 1:
        web = app if app is not None else create_app(**config)
        warm_up(web)
        freeze_heap()
        uvicorn.run(web, host=host, port=port, **UVICORN)
        return
    from uvicorn.supervisors import Multiprocess

    os.environ[CONFIG_ENV] = json.dumps(config)  # each worker is a fresh interpreter: it rebuilds the app
    cfg = uvicorn.Config("gpuplan.web.app:app_from_env", factory=True, workers=workers, host=host, port=port,
                         **UVICORN)
    sock = cfg.bind_socket()
    # uvicorn creates this socket with protocol 0, so asyncio does not turn on TCP_NODELAY for the connections
    # accepted from it, and a response written in two parts (head, body) then waits for the client's delayed
    # ACK: about 40 ms per request. Linux copies the option from the listening socket to accepted ones.
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    Multiprocess(cfg, sockets=[sock]).run()


def freeze_heap() -> None:
    """Move everything built at start-up (modules, the catalog, the app: ~100k objects) out of the garbage
    collector's view. A full collection otherwise walks them all, ~40 ms during which every request in
    flight waits; with them frozen it only walks what requests leave behind."""
    import gc

    gc.collect()
    gc.freeze()

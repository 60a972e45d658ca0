"""`gpuplan serve`: one page to edit a scenario and see the answer, and a JSON API.

- `POST /api/compare` returns exactly `gpuplan compare -o json` for the scenario text it is given.
- `POST /api/plan`, `/api/simulate`, `/api/audit` return their commands' `-o json`. They call
  `gpuplan.api` in a worker process (typed calls, never a command line) with a hard time limit and a
  memory bound, on uploads written into a private temporary folder: the request never names a server path.
- `POST /api/commit` returns `gpuplan commit -o json` (run in a worker process, at most 20,000 paths).
- `/api/quotes` lists (GET) and adds (POST) quotes of the server's quote database (`GPUPLAN_DB`, or
  `create_app(db=...)`, else SQLite in the user's data folder); `/api/quotes/import` stores a quotes CSV,
  `/api/quotes/trend` fits the drift, `/api/quotes/chart` draws the price history of one GPU and mode.
- `POST /api/report` returns the HTML report (whole file, or the `<main>` fragment the page shows).
- Every error is JSON: 400 for a malformed request, 401 without the server's token, 403 for a cross-site
  write, 413 for a body over the limit, 415 for a JSON endpoint not sent as application/json, 422 for
  input the engines reject (the same `GpuplanError.to_dict()` fields as the CLI: file, line, field, hint),
  503 when a request runs past the time limit or its memory bound, and 500 "internal error" for a bug.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import lru_cache
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from gpuplan.errors import GpuplanError
from gpuplan.web.edge import LOOPBACK_NAMES, Edge, EdgeSettings
from gpuplan.web.errors import ApiError, from_gpuplan
from gpuplan.web.routers import editor, engines, meta, quotes, reports
from gpuplan.web.runtime import Runtime, Settings

CONFIG_ENV = "GPUPLAN_SERVE_CONFIG"


def create_app(
    *,
    catalog: str | Path | None = None,
    max_body_mb: float = 20.0,
    timeout_s: float = 20.0,
    heavy_timeout_s: float = 120.0,
    heavy_memory_mb: float = 2048.0,
    workers: int = 4,
    inline_max_kb: float = 4.0,
    db: str | None = None,
    token: str | None = None,
    allowed_hosts: tuple[str, ...] | list[str] = (),
    login_code: str | None = None,
    login_mark: str | None = None,
    body_timeout_s: float = 60.0,
) -> FastAPI:
    """The web app. `catalog` is an extra catalog file given on the server's command line; requests
    can never name a file. `heavy_memory_mb` bounds each heavy worker process (0: no bound). `db` is the
    quotes database (a URL; default `GPUPLAN_DB`, else `quotes.sqlite` in the user's data folder): the
    quotes endpoints read and write it, and commit fits the drifts its scenario leaves out from it.
    `token`: every request must carry it (see `gpuplan.web.edge`); `allowed_hosts`: names the Host header
    may have besides the loopback names; `login_code`: the one-time code of the login link."""
    from gpuplan.inputs.catalog import load_catalog
    from gpuplan.quotes.store import ENV as DB_ENV
    from gpuplan.quotes.store import default_url

    settings = Settings(catalog=str(catalog) if catalog else None, max_body_bytes=int(max_body_mb * 1024 * 1024),
                        timeout_s=timeout_s, heavy_timeout_s=heavy_timeout_s,
                        heavy_memory_bytes=int(heavy_memory_mb * 1024 * 1024), workers=workers,
                        inline_max_chars=int(inline_max_kb * 1024))
    settings.db = db or os.environ.get(DB_ENV) or default_url()  # resolved once: every call uses the same one
    rt = Runtime(settings, load_catalog(settings.catalog))  # the catalog fails at start, not on a request

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        rt.close()

    app = FastAPI(lifespan=lifespan, title="gpuplan", version=_version(),
                  summary="Where GPU work should run: containers, bare metal or a hybrid pool.",
                  description=(__doc__ or "").split("\n\n", 1)[-1])
    app.state.rt = rt
    app.state.settings = settings
    app.state.heavy = rt.heavy
    app.state.catalog = rt.catalog
    app.state.shutdown = rt.close
    app.state.health_body, app.state.catalog_body = meta.fixed_bodies(rt.catalog, _version())
    for r in (meta.router, engines.router, quotes.router, reports.router, editor.router):
        app.include_router(r)
    _map_errors(app)
    hosts = tuple(dict.fromkeys([*LOOPBACK_NAMES, *(h.strip().lower().strip("[]") for h in allowed_hosts)]))
    app.add_middleware(Edge, settings=EdgeSettings(
        allowed_hosts=hosts, token=token or None, login_code=login_code, login_mark=login_mark,
        max_body_bytes=settings.max_body_bytes, body_timeout_s=body_timeout_s))
    return app


def _map_errors(app: FastAPI) -> None:
    """The one error mapping (`gpuplan.web.errors`): the user's input is 4xx with its fields; what no handler
    takes reaches the edge, which answers 500 "internal error"."""

    @app.exception_handler(ApiError)
    async def _api_error(_req: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body, status_code=exc.status)

    @app.exception_handler(GpuplanError)
    async def _input_error(_req: Request, exc: GpuplanError) -> JSONResponse:
        e = from_gpuplan(exc)
        return JSONResponse(e.body, status_code=e.status)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_req: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": "http", "message": str(exc.detail), "file": None, "line": None, "field": None,
                             "hint": None}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def _validation(_req: Request, exc: RequestValidationError) -> JSONResponse:
        e = exc.errors()[0] if exc.errors() else {"msg": "invalid request", "loc": ()}
        return JSONResponse({"error": "request", "message": str(e.get("msg")), "file": None, "line": None,
                             "field": ".".join(str(p) for p in e.get("loc", ())), "hint": None}, status_code=400)


def app_from_env() -> FastAPI:
    """The app of one `gpuplan serve --workers N` process: `create_app` with the settings the parent put in
    the environment (uvicorn starts each worker in a fresh interpreter)."""
    return ready(create_app(**json.loads(os.environ[CONFIG_ENV])))


def ready(app: FastAPI) -> FastAPI:
    """`app` warmed up (`warm_up`) and its start-up objects out of the collector's view (`freeze_heap`):
    what every serving process does before it listens."""
    warm_up(app)
    freeze_heap()
    return app


def warm_up(app: FastAPI) -> None:
    """Answer the starter scenario once in each language (its compare JSON and report fragment; the cache
    keeps neither) before the server listens: the engines' and renderers' modules are imported, and the
    message catalogs and templates loaded, at start-up, so `freeze_heap` puts them out of the collector's
    view too and the first users do not wait for them (~0.3 s, and a module imported later is walked by
    every full collection)."""
    from gpuplan.web.page import render_page, starter_scenario
    from gpuplan.web.routers.engines import compare_json
    from gpuplan.web.routers.reports import compare_report

    cat = app.state.catalog
    for lang in ("en", "zh"):
        compare_json(starter_scenario(), lang, cat)
        compare_report(starter_scenario(), lang, cat, True)
        render_page(lang)


def freeze_heap() -> None:
    """Move everything built at start-up (modules, the catalog, the app: ~100k objects) out of the garbage
    collector's view. A full collection otherwise walks them all, ~40 ms during which every request in
    flight waits; with them frozen it only walks what requests leave behind."""
    import gc

    gc.collect()
    gc.freeze()


@lru_cache(maxsize=1)
def _version() -> str:
    try:
        from importlib.metadata import version

        return version("gpuplan")
    except Exception:  # pragma: no cover
        return "dev"

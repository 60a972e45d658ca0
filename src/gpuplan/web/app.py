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
- Every error is JSON: 400 for a malformed request, 413 for a body over the limit, 422 for input the
  engines reject (the same `GpuplanError.to_dict()` fields as the CLI: file, line, field, hint),
  503 when a request runs past the time limit or its memory bound.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, cast

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuplan.constants import DEFAULT_QUEUEING, PACKINGS, QUEUEINGS, Packing, Queueing
from gpuplan.errors import GpuplanError
from gpuplan.web import limits
from gpuplan.web.worker import (
    SCENARIO_NAME,
    AuditCall,
    Call,
    CommitCall,
    ExportCall,
    HeavyPool,
    Inputs,
    PlanCall,
    SimulateCall,
    Upload,
)

log = logging.getLogger("gpuplan.web")

ENGINES = ("compare", "plan", "simulate", "audit", "export", "commit")


# --- request models ------------------------------------------------------------------------------


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CompareIn(_In):
    scenario: str = Field(description="The scenario YAML text (what `gpuplan compare FILE` reads).")
    lang: Literal["en", "zh"] = "en"


class PlanIn(_In):
    scenario: str = Field(description="The scenario YAML text.")
    lang: Literal["en", "zh"] = "en"
    demand_csv: str | None = Field(default=None, description="Optional demand CSV text (`time,gpu,gpus`).")
    queueing: Queueing = Field(default=DEFAULT_QUEUEING, description="How the leased pool queues (plan --queueing).")


class CommitIn(_In):
    scenario: str = Field(description="The scenario YAML text (offers with `terms:`, `market:`).")
    lang: Literal["en", "zh"] = "en"
    paths: int = Field(default=10_000, description="Monte Carlo paths (1 to 20,000 on this server).")
    seed: int = Field(default=0, description="Seed of the paths (0 to 2^32-1): the same seed, the same answer.")


class QuoteIn(_In):
    """One quote, as `gpuplan quotes add` takes it (every field is checked as the command line checks it)."""

    provider: str = ""
    gpu: str = ""
    mode: str = Field(default="", description="bare-metal or container")
    term: str | None = Field(default=None, description="Lease term, e.g. 12mo (empty: none).")
    price: float | str = Field(default="", description="The amount per `per`.")
    per: str = Field(default="", description="gpu-hour, gpu-day, gpu-month, node-hour, node-day, node-month")
    currency: str = Field(default="", description="ISO 4217 code, e.g. CNY.")
    date: str = Field(default="", description="Day of the quote, YYYY-MM-DD.")
    note: str = ""


class ReportIn(_In):
    kind: Literal["compare", "plan", "simulate", "audit", "commit"] = "compare"
    lang: Literal["en", "zh"] = "en"
    scenario: str | None = Field(default=None, description="compare/plan/commit: the scenario YAML text.")
    paths: int = Field(default=10_000, description="commit: Monte Carlo paths (1 to 20,000).")
    seed: int = Field(default=0, description="commit: seed of the paths.")
    data: Any = Field(default=None, description="plan/simulate/audit: the JSON the API returned, to render.")
    fragment: bool = Field(default=False, description="Only the report's <main> element (for the page).")


class ExportIn(_In):
    target: Literal["kueue", "slurm", "volcano", "skypilot"]
    plan: dict[str, Any] = Field(description="The plan: the JSON /api/plan returned (`gpuplan.plan/1`).")
    name: str = Field(default="gpuplan", description="Name of the queues/partition (a DNS label).")


class FieldsIn(_In):
    scenario: str


class EditIn(_In):
    scenario: str
    set: dict[str, float | int | str] = Field(
        description="Field path -> new value, e.g. {\"workloads[0].hours_per_day\": 12}.")


# --- errors ------------------------------------------------------------------------------------


@dataclass
class ApiError(Exception):
    status: int
    body: dict[str, Any]


def _err(status: int, error: str, message: str, **extra: Any) -> ApiError:
    body: dict[str, Any] = {"error": error, "message": message, "file": None, "line": None, "field": None,
                            "hint": None}
    body.update(extra)
    return ApiError(status, body)


def _json_error(e: ApiError) -> JSONResponse:
    return JSONResponse(e.body, status_code=e.status)


class BodyTooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: refuse bodies over `max_bytes` with 413 JSON (by Content-Length, or while
    streaming when the length is not declared)."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        for k, v in scope.get("headers", []):
            if k == b"content-length":
                try:
                    n = int(v)
                except ValueError:
                    n = -1
                if n < 0 or n > limit:
                    await self._send_413(send, limit)
                    return
        seen = 0
        started = False

        async def receive_limited() -> Any:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge()
            return msg

        async def send_tracked(msg: Any) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, receive_limited, send_tracked)
        except BodyTooLarge:
            if not started:
                await self._send_413(send, limit)

    @staticmethod
    async def _send_413(send: Any, limit: int) -> None:
        body = json.dumps({"error": "too-large", "message": f"the request body is over {limit / 1e6:g} MB",
                           "file": None, "line": None, "field": None,
                           "hint": "send a smaller file, or start the server with a larger --max-body-mb."}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


# --- the app -----------------------------------------------------------------------------------


@dataclass
class Settings:
    catalog: str | None = None
    max_body_bytes: int = 20 * 1024 * 1024
    timeout_s: float = 20.0
    heavy_timeout_s: float = 120.0
    heavy_memory_bytes: int = 2 * 1024**3
    workers: int = 4
    heavy_concurrency: int = 2
    cache_entries: int = 256
    inline_max_chars: int = 4096
    db: str | None = None  # the quotes database URL (None: GPUPLAN_DB, else SQLite in the user's data folder)


CONFIG_ENV = "GPUPLAN_SERVE_CONFIG"


def app_from_env() -> FastAPI:
    """The app of one `gpuplan serve --workers N` process: `create_app` with the settings the parent put in
    the environment (uvicorn starts each worker in a fresh interpreter)."""
    from gpuplan.web.server import freeze_heap

    app = create_app(**json.loads(os.environ[CONFIG_ENV]))
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

    cat = app.state.catalog
    for lang in ("en", "zh"):
        _compare_json(starter_scenario(), lang, cat)
        _compare_report(starter_scenario(), lang, cat, True)
        render_page(lang)


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
) -> FastAPI:
    """The web app. `catalog` is an extra catalog file given on the server's command line; requests
    can never name a file. `heavy_memory_mb` bounds each heavy worker process (0: no bound). `db` is the
    quotes database (a URL; default `GPUPLAN_DB`, else `quotes.sqlite` in the user's data folder): the
    quotes endpoints read and write it, and commit fits the drifts its scenario leaves out from it."""
    from contextlib import asynccontextmanager

    from gpuplan.inputs.catalog import load_catalog

    settings = Settings(catalog=str(catalog) if catalog else None,
                        max_body_bytes=int(max_body_mb * 1024 * 1024), timeout_s=timeout_s,
                        heavy_timeout_s=heavy_timeout_s, heavy_memory_bytes=int(heavy_memory_mb * 1024 * 1024),
                        workers=workers, inline_max_chars=int(inline_max_kb * 1024))
    from gpuplan.quotes.store import ENV as DB_ENV
    from gpuplan.quotes.store import default_url

    settings.db = db or os.environ.get(DB_ENV) or default_url()  # resolved once: every call uses the same one
    cat = load_catalog(settings.catalog)  # fail at start, not on the first request
    pool = ThreadPoolExecutor(max_workers=settings.workers, thread_name_prefix="gpuplan-engine")
    heavy = HeavyPool(settings.heavy_concurrency, settings.heavy_memory_bytes)  # workers start on first use

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        heavy.close()

    app = FastAPI(
        lifespan=lifespan,
        title="gpuplan",
        summary="Where GPU work should run: containers, bare metal or a hybrid pool.",
        version=_version(),
        description=(__doc__ or "").split("\n\n", 1)[-1],
    )
    app.state.settings = settings
    app.state.heavy = heavy
    app.state.catalog = cat
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)

    @app.exception_handler(ApiError)
    async def _api_error(_req: Request, exc: ApiError) -> JSONResponse:
        return _json_error(exc)

    @app.exception_handler(BodyTooLarge)
    async def _too_large(_req: Request, _exc: BodyTooLarge) -> JSONResponse:
        return JSONResponse({"error": "too-large", "message": "the request body is over the limit", "file": None,
                             "line": None, "field": None, "hint": "send a smaller file."}, status_code=413)

    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException as StarletteHTTPException

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_req: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": "http", "message": str(exc.detail), "file": None, "line": None, "field": None,
                             "hint": None}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def _validation(_req: Request, exc: RequestValidationError) -> JSONResponse:
        e = exc.errors()[0] if exc.errors() else {"msg": "invalid request", "loc": ()}
        return JSONResponse({"error": "request", "message": str(e.get("msg")), "file": None, "line": None,
                             "field": ".".join(str(p) for p in e.get("loc", ())), "hint": None}, status_code=400)

    def small(text: str) -> bool:
        """Small enough to answer inline in the event loop: a scenario this short costs a few ms (about
        0.7 ms per workload), and without YAML anchors/aliases no short text can expand into a big one."""
        return len(text) <= settings.inline_max_chars and "&" not in text and "*" not in text

    async def run_engine(fn: Any, *args: Any, inline: bool = False, **kw: Any) -> Any:
        if inline:
            return _call(fn, *args, **kw)
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(pool, lambda: _call(fn, *args, **kw))
        try:
            return await asyncio.wait_for(fut, settings.timeout_s)
        except TimeoutError:
            raise _err(503, "timeout", f"the request took longer than {settings.timeout_s:g} s",
                       hint="make the scenario smaller, or run the command line instead.") from None

    # --- pages ---

    pages: dict[str, bytes] = {}  # the page depends only on its language: rendered once each

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index(lang: str = "en") -> HTMLResponse:
        from gpuplan.web.page import render_page

        lang = lang if lang in ("en", "zh") else "en"
        if lang not in pages:
            pages[lang] = render_page(lang).encode()
        return HTMLResponse(pages[lang])

    # --- API ---

    # answers that never change while the server runs: encoded once
    health_body = _dumps({"ok": True, "version": _version(), "engines": dict.fromkeys(ENGINES, True)})
    catalog_body = _dumps({
        "files": list(cat.files),
        "gpus": [g.model_dump(mode="json") for g in cat.gpus.values()],
        "offers": [{k: v for k, v in o.items() if not k.startswith("_")} for o in cat.offers.values()],
        "defaults": cat.defaults,
    })

    @app.get("/api/health", tags=["meta"])
    async def health() -> Response:
        """`{"ok": true, "version": …, "engines": {"compare": true, "plan": true, …}}`"""
        return Response(health_body, media_type="application/json")

    @app.get("/api/catalog", tags=["catalog"])
    async def get_catalog() -> Response:
        """The GPUs, offers and defaults the server uses (bundled plus its --catalog file)."""
        return Response(catalog_body, media_type="application/json")

    @app.get("/api/example", tags=["meta"])
    async def example() -> dict[str, str]:
        """A starter scenario (what `gpuplan init` writes)."""
        from gpuplan.web.page import starter_scenario

        return {"scenario": starter_scenario()}

    cache = _Lru(settings.cache_entries)

    async def cached(key: tuple[str, ...], media: str, fn: Any, *args: Any, inline: bool = False) -> Response:
        """The answer for `key`, computed once: the page asks for the same scenario several times (the
        view, the JSON download, the report). Input errors (422) are remembered too; nothing else is."""
        hit = cache.get(key)
        if hit is None:
            def job() -> bytes:
                out = fn(*args)
                return out.encode() if isinstance(out, str) else _dumps(out)

            try:
                hit = (200, await run_engine(job, inline=inline))
            except ApiError as exc:
                if exc.status != 422:
                    raise
                hit = (422, _dumps(exc.body))
            cache.put(key, hit)
        status, content = hit
        return Response(content, status_code=status, media_type=media if status == 200 else "application/json")

    @app.post("/api/compare", tags=["engines"], openapi_extra=_body_schema(CompareIn))
    async def api_compare(request: Request) -> Response:
        """Exactly what `gpuplan compare FILE -o json --lang LANG` prints for this scenario text."""
        body = await _read_model(request, CompareIn)
        return await cached(("compare", body.lang, body.scenario), "application/json", _compare_json, body.scenario,
                            body.lang, cat, inline=small(body.scenario))

    async def run_heavy(call: Call, media: str = "application/json") -> Response:
        """Run `call` in a worker process; past `heavy_timeout_s` (queue included) the worker is killed."""
        job = heavy.submit(call)
        try:
            status, body = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(job.future)),
                                                  settings.heavy_timeout_s)
        except TimeoutError:
            if heavy.abandon(job):
                raise _err(503, "timeout", f"the request took longer than {settings.heavy_timeout_s:g} s",
                           hint="use a smaller input here, or run the command line.") from None
            raise _err(503, "busy", "the server is busy with other heavy requests", hint="try again shortly.") from None
        return Response(body, status_code=status, media_type=media if status == 200 else "application/json")

    @app.post("/api/plan", tags=["engines"], openapi_extra=_body_schema(PlanIn))
    async def api_plan(request: Request) -> Response:
        """What `gpuplan plan FILE -o json` prints."""
        body = await _read_model(request, PlanIn)
        await run_engine(limits.check_scenario, body.scenario, inline=small(body.scenario))
        if body.demand_csv is not None:
            await run_engine(limits.check_demand_csv, body.demand_csv, inline=small(body.demand_csv))
        return await run_heavy(PlanCall(scenario=body.scenario, lang=body.lang, demand_csv=body.demand_csv,
                                        queueing=body.queueing,
                                        catalog=settings.catalog))

    @app.post("/api/simulate", tags=["engines"])
    async def api_simulate(request: Request) -> Response:
        """Multipart form: `trace` (file), `reserved` (e.g. `8` or `0:32:4`), optional `wait`, `queueing`,
        `packing`, `gpus_per_node`, `trace_format`, `scenario` (text), `gpu` (which of the scenario's GPUs
        prices the replay: needed when it offers several), `max_wait` (the waiting budget, e.g. `p95=2h`).
        What `gpuplan simulate -o json` prints."""
        form = await _read_form(request)
        traces = await _uploads(form, "trace", one=True)
        reserved = _text(form, "reserved")
        if not reserved:
            raise _err(400, "request", "`reserved` is required", field="reserved", hint="e.g. 8, 4,8,16 or 0:32:4")
        _call(limits.check_reserved, reserved)
        scenario = _text(form, "scenario", limit=None)
        if scenario is not None:
            await run_engine(limits.check_scenario, scenario, inline=small(scenario))
        _text(form, "lang", choices=("en", "zh"))
        gpn = _whole(form, "gpus_per_node")
        call = SimulateCall(
            trace=traces[0],
            reserved=reserved,
            wait=_text(form, "wait") or "0",
            queueing=cast(Queueing, _text(form, "queueing", choices=QUEUEINGS) or DEFAULT_QUEUEING),
            packing=cast(Packing, _text(form, "packing", choices=PACKINGS) or "gpu"),
            gpus_per_node=gpn,
            trace_format=_text(form, "trace_format") or "auto",
            scenario=scenario,
            gpu=_text(form, "gpu"),
            max_wait=_text(form, "max_wait"),
            catalog=settings.catalog,
        )
        return await run_heavy(call)

    @app.post("/api/audit", tags=["engines"])
    async def api_audit(request: Request) -> Response:
        """Multipart form: `files` (one or more nvidia-smi CSV or Prometheus JSON files), optional `price`
        (e.g. `8/gpu-hour`) or `offer` (an offer id of `scenario`, the scenario text), `currency`,
        `gpus_per_node` (splits a node price), `lang`. What `gpuplan audit FILES -o json` prints. With `demand_mode`
        (`util` or `busy`; `gpu_type` names the GPU when the data does not): what `audit --demand-out
        demand.csv -o json` prints, plus `demand_csv`, the curve's CSV text (what `/api/plan` takes as demand)."""
        form = await _read_form(request)
        files = await _uploads(form, "files", one=False)
        _text(form, "lang", choices=("en", "zh"))
        mode = _text(form, "demand_mode", choices=("util", "busy"))
        gpn = _whole(form, "gpus_per_node")
        scenario = _text(form, "scenario", limit=None)
        if scenario is not None:
            await run_engine(limits.check_scenario, scenario, inline=small(scenario))
        call = AuditCall(files=tuple(files), price=_text(form, "price"), currency=_text(form, "currency") or "USD",
                         demand_mode=cast(Literal["util", "busy"] | None, mode), gpu_type=_text(form, "gpu_type"),
                         offer=_text(form, "offer"), scenario=scenario, gpus_per_node=gpn, catalog=settings.catalog)
        return await run_heavy(call)

    @app.post("/api/export", tags=["engines"], openapi_extra=_body_schema(ExportIn))
    async def api_export(request: Request) -> Response:
        """What `gpuplan export TARGET PLAN.json` writes, for the plan JSON /api/plan returned:
        `{"target", "stdout": <the one stream>, "files": [{"name", "text"}, …]}` (the files of `-o DIR`)."""
        body = await _read_model(request, ExportIn)
        return await run_heavy(ExportCall(target=body.target, plan=_dumps(body.plan).decode(), name=body.name,
                                          catalog=settings.catalog))

    @app.post("/api/commit", tags=["engines"], openapi_extra=_body_schema(CommitIn))
    async def api_commit(request: Request) -> Response:
        """What `gpuplan commit FILE --paths N --seed S -o json` prints (`gpuplan.commit/1`), with the server's
        quote database filling the drifts the scenario's `market:` leaves out (as `--db`)."""
        body = await _read_model(request, CommitIn)
        _call(limits.check_commit, body.paths, body.seed)
        await run_engine(limits.check_scenario, body.scenario, inline=small(body.scenario))
        return await run_heavy(CommitCall(scenario=body.scenario, paths=body.paths, seed=body.seed, lang=body.lang,
                                          db=settings.db, catalog=settings.catalog))

    # --- quotes: the server's quote database ---

    store_lock = threading.Lock()

    def open_db() -> None:
        """Open the quote database (once; cached afterwards, and the api's own open_store returns it). Opening
        runs Alembic, whose context lives in module globals: one thread at a time. Called after the input is
        checked, so that a bad value is a 422 even when the database is down."""
        from gpuplan.quotes.store import open_store

        with store_lock:
            open_store(settings.db)

    async def quotes_db(fn: Any, *args: Any, **kw: Any) -> Any:
        """A call on the quote database in the thread pool: input errors 422; a database the server cannot
        use (the error names `--db`) is the server's problem, 503."""
        try:
            return await run_engine(fn, *args, **kw)
        except ApiError as exc:
            if exc.status == 422 and exc.body.get("field") == "--db":
                exc.body["error"] = "database"
                exc.body["field"] = None
                raise ApiError(503, exc.body) from None
            raise

    def mode_arg(mode: str | None) -> str | None:
        from gpuplan.quotes import MODES

        if mode in (None, ""):
            return None
        if mode not in MODES:
            raise _err(422, "input", f"mode: expected bare-metal or container, got {mode!r}", field="mode")
        return mode

    @app.get("/api/quotes", tags=["quotes"])
    async def api_quotes(gpu: str | None = None, mode: str | None = None) -> Response:
        """The stored quotes, oldest first (what `gpuplan quotes list -o json` prints), optionally of one GPU
        and mode."""
        from gpuplan import api

        md = mode_arg(mode)
        def listed() -> list[dict[str, Any]]:
            open_db()
            return [q.to_json() for q in api.quotes_list(db=settings.db, gpu=gpu or None, mode=md)]

        qs = await quotes_db(listed)
        return Response(_dumps(qs), media_type="application/json")

    @app.post("/api/quotes", tags=["quotes"], openapi_extra=_body_schema(QuoteIn))
    async def api_quote_add(request: Request) -> Response:
        """Store one quote (`gpuplan quotes add`); a bad field is a 422 naming it, and nothing is stored."""
        from gpuplan import api
        from gpuplan.quotes.csvio import make_quote

        body = await _read_model(request, QuoteIn)

        def add() -> dict[str, Any]:
            q = make_quote(provider=body.provider, gpu=body.gpu, mode=body.mode, term=body.term, price=body.price,
                           per=body.per, currency=body.currency, when=body.date, note=body.note)
            open_db()
            return {"added": api.quotes_add([q], db=settings.db), "quote": q.to_json()}

        return Response(_dumps(await quotes_db(add)), status_code=201, media_type="application/json")

    @app.post("/api/quotes/import", tags=["quotes"])
    async def api_quotes_import(request: Request) -> Response:
        """Multipart form: `file`, a quotes CSV (`provider,gpu,mode,term,price,per,currency,date,note`) or a
        catalog `.yaml`, as `gpuplan quotes import` reads. Every row is checked first: a bad one is a 422
        naming the file (the upload's name), line and column, and nothing is stored."""
        from gpuplan import api

        form = await _read_form(request)
        up = (await _uploads(form, "file", one=True))[0]
        _call(limits.check_quotes_file, up.data, up.name)

        def load() -> dict[str, Any]:
            import tempfile

            with tempfile.TemporaryDirectory(prefix="gpuplan-web-") as tmp:
                inputs = Inputs(Path(tmp))
                path = inputs.add(up.name, up.data)
                try:
                    qs = api.quotes_read_csv(path)
                except GpuplanError as exc:
                    raise ApiError(422, inputs.unlabel(exc.to_dict())) from None
            open_db()
            return {"imported": api.quotes_add(qs, db=settings.db), "file": inputs.label(str(path))}

        return Response(_dumps(await quotes_db(load)), status_code=201, media_type="application/json")

    @app.get("/api/quotes/trend", tags=["quotes"])
    async def api_quotes_trend(gpu: str | None = None, mode: str | None = None) -> Response:
        """The drift a year per (GPU, mode) with its 90% range (what `gpuplan quotes trend -o json` prints)."""
        from gpuplan import api

        md = mode_arg(mode)
        def fitted() -> list[dict[str, Any]]:
            open_db()
            return api.quotes_trend(db=settings.db, gpu=gpu or None, mode=md)

        fits = await quotes_db(fitted)
        return Response(_dumps(fits), media_type="application/json")

    @app.get("/api/quotes/chart", tags=["quotes"])
    async def api_quotes_chart(gpu: str | None = None, mode: str | None = None, lang: str = "en") -> Response:
        """The price history of one GPU and mode (default: the first the database has): `{"gpu", "mode",
        "currency", "quotes", "trend", "series": [{"term_months", "points": [[date, price per GPU-hour]],
        "fit": [[date, price], [date, price]]}], "groups": [{"gpu", "mode", "quotes"}], "svg"}`."""
        from gpuplan import api
        from gpuplan.web.quotes import groups, history, history_svg

        md = mode_arg(mode)
        lg = lang if lang in ("en", "zh") else "en"

        def chart() -> dict[str, Any]:
            open_db()
            qs = [q.to_json() for q in api.quotes_list(db=settings.db)]
            gs = groups(qs)
            g, m = gpu or None, md
            if g is None or m is None:
                pick = next((x for x in gs if (g is None or x["gpu"] == g) and (m is None or x["mode"] == m)), None)
                g = g or (pick["gpu"] if pick else "")
                m = m or (pick["mode"] if pick else "container")
            fits = api.quotes_trend(db=settings.db, gpu=g, mode=m)
            data = history(qs, None, g, m)
            trend = next((f for f in fits if f["currency"] == data["currency"]), None)
            data = history(qs, trend, g, m)
            data["groups"] = gs
            data["svg"] = history_svg(data, lg)
            return data

        return Response(_dumps(await quotes_db(chart)), media_type="application/json")

    @app.post("/api/report", tags=["reports"], response_class=HTMLResponse, openapi_extra=_body_schema(ReportIn))
    async def api_report(request: Request) -> Response:
        """The self-contained HTML report. compare: from `scenario`; plan: from `scenario` or `data`;
        simulate and audit: from `data` (the JSON their endpoint returned)."""
        body = await _read_model(request, ReportIn)
        if body.kind == "compare":
            if body.scenario is None:
                raise _err(400, "request", "`scenario` is required for a compare report", field="scenario")
            r = await cached(("report", body.lang, str(body.fragment), body.scenario), "text/html; charset=utf-8",
                             _compare_report, body.scenario, body.lang, cat, body.fragment)
            if r.status_code != 200 or body.fragment:
                return r
            r.headers["content-disposition"] = f'attachment; filename="gpuplan-{body.kind}-{body.lang}.html"'
            return r
        elif body.kind == "commit":
            if body.scenario is None:
                raise _err(400, "request", "`scenario` is required for a commit report", field="scenario")
            _call(limits.check_commit, body.paths, body.seed)
            await run_engine(limits.check_scenario, body.scenario, inline=small(body.scenario))
            r = await run_heavy(CommitCall(scenario=body.scenario, paths=body.paths, seed=body.seed, lang=body.lang,
                                           db=settings.db, catalog=settings.catalog,
                                           report="fragment" if body.fragment else "page"),
                                "text/html; charset=utf-8")
            if r.status_code == 200 and not body.fragment:
                r.headers["content-disposition"] = f'attachment; filename="gpuplan-commit-{body.lang}.html"'
            return r
        else:
            data = body.data
            if data is None and body.kind == "plan" and body.scenario is not None:
                r = await run_heavy(PlanCall(scenario=body.scenario, lang=body.lang, catalog=settings.catalog,
                                             report="fragment" if body.fragment else "page"),
                                    "text/html; charset=utf-8")
                if r.status_code == 200 and not body.fragment:
                    r.headers["content-disposition"] = f'attachment; filename="gpuplan-plan-{body.lang}.html"'
                return r
            if not isinstance(data, dict | list):
                raise _err(400, "request", f"`data` (the {body.kind} JSON) is required", field="data")
            html = await run_engine(_render, body.kind, data, body.lang, body.fragment)
        headers = {} if body.fragment else {
            "content-disposition": f'attachment; filename="gpuplan-{body.kind}-{body.lang}.html"'}
        return HTMLResponse(html, headers=headers)

    @app.post("/api/scenario/fields", tags=["editor"], openapi_extra=_body_schema(FieldsIn))
    async def api_fields(request: Request) -> dict[str, Any]:
        """The common fields of a scenario (for the form), with their current values, and the GPUs its
        offers provide (`gpus`: the choices of the replay's and the audit's GPU fields)."""
        from gpuplan.web.edit import common_fields, offer_ids, offered_gpus

        body = await _read_model(request, FieldsIn)

        def both(text: str) -> dict[str, Any]:
            return {"fields": common_fields(text), "gpus": offered_gpus(text, cat.offers), "offers": offer_ids(text)}

        return cast(dict[str, Any], await run_engine(both, body.scenario, inline=small(body.scenario)))

    @app.post("/api/scenario/edit", tags=["editor"], openapi_extra=_body_schema(EditIn))
    async def api_edit(request: Request) -> dict[str, Any]:
        """Set fields of the scenario text, keeping its comments and layout."""
        from gpuplan.web.edit import set_fields

        body = await _read_model(request, EditIn)
        return {"scenario": await run_engine(set_fields, body.scenario, body.set, inline=small(body.scenario))}

    def shutdown() -> None:
        pool.shutdown(wait=False, cancel_futures=True)
        heavy.close()

    app.state.shutdown = shutdown
    return app


# --- helpers -----------------------------------------------------------------------------------


class _Lru:
    """A small least-recently-used map (the event loop is its only user, so no lock is needed)."""

    MAX_KEY_CHARS = 256 * 1024

    def __init__(self, entries: int) -> None:
        from collections import OrderedDict

        self.entries = entries
        self.data: OrderedDict[tuple[str, ...], tuple[int, bytes]] = OrderedDict()

    def get(self, key: tuple[str, ...]) -> tuple[int, bytes] | None:
        hit = self.data.get(key)
        if hit is not None:
            self.data.move_to_end(key)
        return hit

    def put(self, key: tuple[str, ...], value: tuple[int, bytes]) -> None:
        if self.entries <= 0 or sum(len(k) for k in key) > self.MAX_KEY_CHARS:
            return
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.entries:
            self.data.popitem(last=False)


def _dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


@lru_cache(maxsize=1)
def _version() -> str:
    try:
        from importlib.metadata import version

        return version("gpuplan")
    except Exception:  # pragma: no cover
        return "dev"


def _body_schema(model: type[BaseModel]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


async def _read_model(request: Request, model: type[BaseModel]) -> Any:
    try:
        raw = await request.body()
    except BodyTooLarge:
        raise
    ctype = request.headers.get("content-type", "")
    if ctype and "json" not in ctype:
        raise _err(415, "request", f"expected a JSON body, got {ctype.split(';')[0]}",
                   hint="send Content-Type: application/json.")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _err(400, "request", f"the body is not JSON: {exc}", hint="send a JSON object.") from None
    if not isinstance(data, dict):
        raise _err(400, "request", "the body must be a JSON object", hint=f"fields: {', '.join(model.model_fields)}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = ".".join(str(p) for p in e["loc"])
        raise _err(400, "request", e["msg"], field=loc or None,
                   hint=f"fields: {', '.join(model.model_fields)}") from None


async def _read_form(request: Request) -> Any:
    ctype = request.headers.get("content-type", "")
    if "multipart/form-data" not in ctype:
        raise _err(415, "request", "expected multipart/form-data", hint="upload the files as a form.")
    try:
        return await request.form(max_files=64, max_fields=64)
    except BodyTooLarge:
        raise
    except Exception as exc:  # malformed multipart
        raise _err(400, "request", f"the form cannot be read: {exc}") from None


async def _uploads(form: Any, key: str, *, one: bool) -> list[Upload]:
    """The files uploaded under `key`; their names travel only as labels (see `gpuplan.web.worker`)."""
    items = [f for f in form.getlist(key) if hasattr(f, "read")]
    if not items:
        raise _err(400, "request", f"no file uploaded as `{key}`", field=key)
    if one and len(items) > 1:
        raise _err(400, "request", f"upload one file as `{key}`", field=key)
    return [Upload(name=str(up.filename or f"upload-{i}"), data=await up.read()) for i, up in enumerate(items)]


def _text(form: Any, key: str, *, choices: tuple[str, ...] | None = None, limit: int | None = 200) -> str | None:
    """A text field of the form (None when absent or blank); 400 for a file, an over-long value or a bad choice."""
    v = form.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        raise _err(400, "request", f"`{key}` must be text, not a file", field=key)
    v = v.strip()
    if not v:
        return None
    if (limit is not None and len(v) > limit) or "\x00" in v:
        raise _err(400, "request", f"bad value for `{key}`", field=key)
    if choices is not None and v not in choices:
        raise _err(400, "request", f"`{key}` must be one of {', '.join(choices)}, got {v!r}", field=key)
    return v


def _whole(form: Any, key: str) -> int | None:
    """A whole number >= 1 of the form (None when absent); 400 otherwise, or 422 past 100,000 (GPUs per node)."""
    v = _text(form, key)
    if v is None:
        return None
    if not (v.isdigit() and int(v) >= 1):
        raise _err(400, "request", f"`{key}` must be a whole number >= 1", field=key)
    if int(v) > limits.MAX_GPUS_PER_WORKLOAD:
        raise _err(422, "limit", f"`{key}`: {int(v):,} is over the limit of {limits.MAX_GPUS_PER_WORKLOAD:,}",
                   field=key)
    return int(v)


def _call(fn: Any, *args: Any, **kw: Any) -> Any:
    """Run an engine call; user-input errors become 422 with the CLI's fields, never a 500."""
    try:
        return fn(*args, **kw)
    except ApiError:
        raise
    except GpuplanError as exc:
        raise ApiError(422, exc.to_dict()) from None
    except RecursionError:
        raise _err(422, "input", "the input is nested too deeply") from None
    except (ValueError, TypeError, KeyError, IndexError, ArithmeticError, AttributeError) as exc:
        log.exception("engine failed on user input")
        raise _err(422, "input", f"this input could not be processed: {type(exc).__name__}: {exc}",
                   hint="check the values; if they look right, please report it with the input.") from None


def _compare_json(text: str, lang: str, cat: Any) -> dict[str, Any]:
    from gpuplan import api
    from gpuplan.render.compare import compare_json

    limits.check_scenario(text)
    return compare_json(api.compare_text(text, name=SCENARIO_NAME, catalog=cat).document(lang))


def _compare_report(text: str, lang: str, cat: Any, fragment: bool) -> str:
    from gpuplan import api
    from gpuplan.render.html import render_report

    limits.check_scenario(text)
    result = api.compare_text(text, name=SCENARIO_NAME, catalog=cat, hours_curves=True)
    return render_report("compare", result, lang, fragment=fragment)


def _render(kind: str, data: Any, lang: str, fragment: bool) -> str:
    from gpuplan.render.html import render_report

    try:
        return render_report(kind, data, lang, fragment=fragment)
    except Exception as exc:  # the data is the client's; a shape we cannot draw is their input error
        from jinja2 import TemplateError

        if isinstance(exc, TemplateError | ValueError | TypeError | KeyError | AttributeError | IndexError):
            raise _err(422, "input", f"`data` is not a {kind} result: {type(exc).__name__}: {exc}",
                       field="data", hint=f"send the JSON that /api/{kind} returned.") from None
        raise

"""What the routers share, one per app (`request.app.state.rt`): the settings, the catalog, the thread pool
for engine calls (with `timeout_s`), the heavy worker pool (with `heavy_timeout_s`), the answer cache, and
the quote database's writes (never stored after a timeout answer; an `Idempotency-Key` makes a retry safe)."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from gpuplan.errors import GpuplanError
from gpuplan.render.json_out import dumps_compact
from gpuplan.web.errors import INTERNAL, ApiError, err, from_gpuplan
from gpuplan.web.worker import Call, HeavyPool


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


def dumps(data: Any) -> bytes:
    """An answer's JSON: the CLI's writer (orjson; a NaN or an infinity is `null`, as in `-o json`)."""
    return dumps_compact(data)


def call(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """Run `fn`; the user's input errors (`GpuplanError`) become their 4xx. Nothing else is caught here: an
    engine's bug reaches the edge as a 500 (`gpuplan.web.errors`)."""
    try:
        return fn(*args, **kw)
    except GpuplanError as exc:
        raise from_gpuplan(exc) from None


class Lru:
    """A small least-recently-used map (the event loop is its only user, so no lock is needed)."""

    MAX_KEY_CHARS = 256 * 1024

    def __init__(self, entries: int) -> None:
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


class Runtime:
    def __init__(self, settings: Settings, catalog: Any) -> None:
        self.settings = settings
        self.catalog = catalog
        self.pool = ThreadPoolExecutor(max_workers=settings.workers, thread_name_prefix="gpuplan-engine")
        self.heavy = HeavyPool(settings.heavy_concurrency, settings.heavy_memory_bytes, settings.heavy_timeout_s)
        self.cache = Lru(settings.cache_entries)
        self.pages: dict[str, tuple[bytes, str]] = {}  # the page and its CSP, per language
        self.written = Lru(1024)  # Idempotency-Key -> the answer of the write it made
        self._writing: dict[str, asyncio.Future[tuple[int, bytes]]] = {}
        self._store_lock = threading.Lock()

    def small(self, text: str) -> bool:
        """Small enough to answer inline in the event loop: a scenario this short costs a few ms (about
        0.7 ms per workload), and without YAML anchors/aliases no short text can expand into a big one."""
        return len(text) <= self.settings.inline_max_chars and "&" not in text and "*" not in text

    async def run(self, fn: Callable[..., Any], *args: Any, inline: bool = False, **kw: Any) -> Any:
        """`call(fn, ...)` inline, or in the thread pool with the `timeout_s` limit (503 past it)."""
        if inline:
            return call(fn, *args, **kw)
        fut = asyncio.get_running_loop().run_in_executor(self.pool, lambda: call(fn, *args, **kw))
        try:
            return await asyncio.wait_for(fut, self.settings.timeout_s)
        except TimeoutError:
            raise err(503, "timeout", f"the request took longer than {self.settings.timeout_s:g} s",
                      hint="make the scenario smaller, or run the command line instead.") from None

    async def cached(self, key: tuple[str, ...], media: str, fn: Callable[..., Any], *args: Any,
                     inline: bool = False) -> Response:
        """The answer for `key`, computed once: the page asks for the same scenario several times (the
        view, the JSON download, the report). Input errors (4xx) are remembered too; nothing else is."""
        hit = self.cache.get(key)
        if hit is None:
            def job() -> bytes:
                out = fn(*args)
                return out.encode() if isinstance(out, str) else dumps(out)

            try:
                hit = (200, await self.run(job, inline=inline))
            except ApiError as exc:
                if exc.status not in (400, 422):
                    raise
                hit = (exc.status, dumps(exc.body))
            self.cache.put(key, hit)
        status, content = hit
        return Response(content, status_code=status, media_type=media if status == 200 else "application/json")

    async def heavy_call(self, c: Call, media: str = "application/json") -> Response:
        """Run `c` in a worker process; past `heavy_timeout_s` (queue included) it is stopped (503)."""
        fut = self.heavy.submit(c)
        waiting = asyncio.wrap_future(fut)
        # asyncio.wait, not wait_for: the call's own TimeoutError (pebble's, or a worker wedged on its memory
        # bound) is the call's outcome for `reply`, not this server's time limit
        done, _ = await asyncio.wait({waiting}, timeout=self.settings.heavy_timeout_s)
        if not done:
            waiting.cancel()  # reaches pebble's future: a running call's worker is killed
            raise err(503, "timeout", f"the request took longer than {self.settings.heavy_timeout_s:g} s",
                      hint="use a smaller input here, or run the command line.")
        status, body = self.heavy.reply(fut)
        return Response(body, status_code=status, media_type=media if status == 200 else "application/json")

    def open_db(self) -> None:
        """Open the quote database (once; cached afterwards, and the api's own open_store returns it). Opening
        runs Alembic, whose context lives in module globals: one thread at a time. Called after the input is
        checked, so that a bad value is a 422 even when the database is down."""
        from gpuplan.quotes.store import open_store

        with self._store_lock:
            open_store(self.settings.db)

    async def db(self, fn: Callable[..., Any], *args: Any) -> Any:
        """A read of the quote database in the thread pool: a database the server cannot use (the error
        names `--db`) is the server's problem, 503."""
        try:
            return await self.run(fn, *args)
        except ApiError as exc:
            raise _db_unusable(exc) from None

    async def write(self, request: Request, fn: Callable[[], Any]) -> tuple[int, bytes]:
        """A write to the quote database: (201, its JSON answer). Never stored after a timeout answer: past
        `timeout_s` a write that has not started is dropped (503, nothing stored), and one that has started is
        waited for (the store's own lock wait bounds it) and answered as it went. With an `Idempotency-Key`
        header, a retry with the same key gets the first answer instead of storing again (this process
        remembers the last 1,024 keys)."""
        key = request.headers.get("idempotency-key")
        if key is not None:
            if len(key) > 200:
                raise err(400, "request", "the Idempotency-Key is over 200 characters", field="Idempotency-Key")
            done = self.written.get(("w", key))
            if done is not None:
                return done
            if key in self._writing:
                return await asyncio.shield(self._writing[key])
            mine: asyncio.Future[tuple[int, bytes]] = asyncio.get_running_loop().create_future()
            self._writing[key] = mine
        try:
            answer = await self._write(fn)
        except ApiError as exc:
            answer = (exc.status, dumps(exc.body))
        except BaseException:  # a bug (the edge answers 500 and logs it): a retry waiting on it gets a 500 too
            if key is not None and not mine.done():
                mine.set_result((500, dumps(INTERNAL)))
            raise
        finally:
            if key is not None:
                self._writing.pop(key, None)
        if key is not None:
            if answer[0] < 500:
                self.written.put(("w", key), answer)
            mine.set_result(answer)
        return answer

    async def _write(self, fn: Callable[[], Any]) -> tuple[int, bytes]:
        cf: Future[Any] = self.pool.submit(call, fn)
        af = asyncio.wrap_future(cf)
        try:
            out = await asyncio.wait_for(asyncio.shield(af), self.settings.timeout_s)
        except TimeoutError:
            if cf.cancel():
                raise err(503, "timeout", f"the write did not start within {self.settings.timeout_s:g} s; "
                          "nothing was stored", hint="retry the write (with the same Idempotency-Key).") from None
            try:
                out = await af  # started: it finishes (the store's lock wait bounds it) and says how it went
            except ApiError as exc:
                raise _db_unusable(exc) from None
        except ApiError as exc:
            raise _db_unusable(exc) from None
        return 201, dumps(out)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.heavy.close()


def _db_unusable(exc: ApiError) -> ApiError:
    if exc.status == 422 and exc.body.get("field") == "--db":
        return ApiError(503, {**exc.body, "error": "database", "field": None})
    return exc


def rt(request: Request) -> Runtime:
    """The app's runtime, for a route."""
    r: Runtime = request.app.state.rt
    return r

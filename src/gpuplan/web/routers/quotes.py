"""The server's quote database: list, add, import (writes: same-site only, see `gpuplan.web.edge`; never
stored after a timeout answer, and safe to retry with an `Idempotency-Key`), the trend and the chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import Field

import gpuplan.web.limits as limits
from gpuplan.errors import GpuplanError
from gpuplan.web.errors import ApiError, err
from gpuplan.web.requests import body_schema, read_form, read_model, uploads
from gpuplan.web.routers.engines import In
from gpuplan.web.runtime import call, dumps, rt
from gpuplan.web.worker import Inputs

router = APIRouter(tags=["quotes"])


class QuoteIn(In):
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


def mode_arg(mode: str | None) -> str | None:
    from gpuplan.quotes import MODES

    if mode in (None, ""):
        return None
    if mode not in MODES:
        raise err(422, "input", f"mode: expected bare-metal or container, got {mode!r}", field="mode")
    return mode


@router.get("/api/quotes")
async def api_quotes(request: Request, gpu: str | None = None, mode: str | None = None) -> Response:
    """The stored quotes, oldest first (what `gpuplan quotes list -o json` prints), optionally of one GPU
    and mode."""
    from gpuplan import api

    r = rt(request)
    md = mode_arg(mode)

    def listed() -> list[dict[str, Any]]:
        r.open_db()
        return [q.to_json() for q in api.quotes_list(db=r.settings.db, gpu=gpu or None, mode=md)]

    return Response(dumps(await r.db(listed)), media_type="application/json")


@router.post("/api/quotes", openapi_extra=body_schema(QuoteIn))
async def api_quote_add(request: Request) -> Response:
    """Store one quote (`gpuplan quotes add`); a bad field is a 422 naming it, and nothing is stored. Send an
    `Idempotency-Key` header to make a retry safe: the same key answers the first write's answer again."""
    from gpuplan import api
    from gpuplan.quotes.csvio import make_quote

    r = rt(request)
    body = await read_model(request, QuoteIn)

    def add() -> dict[str, Any]:
        q = make_quote(provider=body.provider, gpu=body.gpu, mode=body.mode, term=body.term, price=body.price,
                       per=body.per, currency=body.currency, when=body.date, note=body.note)
        r.open_db()
        return {"added": api.quotes_add([q], db=r.settings.db), "quote": q.to_json()}

    status, content = await r.write(request, add)
    return Response(content, status_code=status, media_type="application/json")


@router.post("/api/quotes/import")
async def api_quotes_import(request: Request) -> Response:
    """Multipart form: `file`, a quotes CSV (`provider,gpu,mode,term,price,per,currency,date,note`) or a
    catalog `.yaml`, as `gpuplan quotes import` reads. Every row is checked first: a bad one is a 422
    naming the file (the upload's name), line and column, and nothing is stored."""
    from gpuplan import api

    r = rt(request)
    form = await read_form(request)
    up = (await uploads(form, "file", one=True))[0]
    call(limits.check_quotes_file, up.data, up.name)

    def load() -> dict[str, Any]:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="gpuplan-web-") as tmp:
            inputs = Inputs(Path(tmp))
            path = inputs.add(up.name, up.data)
            try:
                qs = api.quotes_read_csv(path)
            except GpuplanError as exc:
                raise ApiError(422, inputs.unlabel(exc.to_dict())) from None
        r.open_db()
        return {"imported": api.quotes_add(qs, db=r.settings.db), "file": inputs.label(str(path))}

    status, content = await r.write(request, load)
    return Response(content, status_code=status, media_type="application/json")


@router.get("/api/quotes/trend")
async def api_quotes_trend(request: Request, gpu: str | None = None, mode: str | None = None) -> Response:
    """The drift a year per (GPU, mode) with its 90% range (what `gpuplan quotes trend -o json` prints)."""
    from gpuplan import api

    r = rt(request)
    md = mode_arg(mode)

    def fitted() -> list[dict[str, Any]]:
        r.open_db()
        return api.quotes_trend(db=r.settings.db, gpu=gpu or None, mode=md)

    return Response(dumps(await r.db(fitted)), media_type="application/json")


@router.get("/api/quotes/chart")
async def api_quotes_chart(request: Request, gpu: str | None = None, mode: str | None = None,
                           lang: str = "en") -> Response:
    """The price history of one GPU and mode (default: the first the database has): `{"gpu", "mode",
    "currency", "quotes", "trend", "series": [{"term_months", "points": [[date, price per GPU-hour]],
    "fit": [[date, price], [date, price]]}], "groups": [{"gpu", "mode", "quotes"}], "svg"}`."""
    from gpuplan import api
    from gpuplan.web.quotes import groups, history, history_svg

    r = rt(request)
    md = mode_arg(mode)
    lg = lang if lang in ("en", "zh") else "en"

    def chart() -> dict[str, Any]:
        r.open_db()
        qs = [q.to_json() for q in api.quotes_list(db=r.settings.db)]
        gs = groups(qs)
        g, m = gpu or None, md
        if g is None or m is None:
            pick = next((x for x in gs if (g is None or x["gpu"] == g) and (m is None or x["mode"] == m)), None)
            g = g or (pick["gpu"] if pick else "")
            m = m or (pick["mode"] if pick else "container")
        fits = api.quotes_trend(db=r.settings.db, gpu=g, mode=m)
        data = history(qs, None, g, m)
        trend = next((f for f in fits if f["currency"] == data["currency"]), None)
        data = history(qs, trend, g, m)
        data["groups"] = gs
        data["svg"] = history_svg(data, lg)
        return data

    return Response(dumps(await r.db(chart)), media_type="application/json")

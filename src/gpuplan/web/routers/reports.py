"""The HTML reports: compare from a scenario (cached), plan and commit from a scenario (in a worker), and
plan, simulate and audit from the JSON their endpoint returned."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import Field

import gpuplan.web.limits as limits
from gpuplan.web.errors import err
from gpuplan.web.requests import body_schema, read_model
from gpuplan.web.routers.engines import In
from gpuplan.web.runtime import call, rt
from gpuplan.web.worker import SCENARIO_NAME, CommitCall, PackCall, PlanCall

router = APIRouter(tags=["reports"])
HTML = "text/html; charset=utf-8"


class ReportIn(In):
    kind: Literal["compare", "plan", "simulate", "audit", "commit", "pack"] = "compare"
    lang: Literal["en", "zh"] = "en"
    scenario: str | None = Field(default=None, description="compare/plan/commit/pack: the scenario YAML text.")
    paths: int = Field(default=10_000, description="commit/pack: Monte Carlo paths (1 to 20,000).")
    seed: int = Field(default=0, description="commit/pack: seed of the paths.")
    data: Any = Field(default=None, description="plan/simulate/audit: the JSON the API returned, to render.")
    fragment: bool = Field(default=False, description="Only the report's <main> element (for the page).")


def compare_report(text: str, lang: str, cat: Any, fragment: bool) -> str:
    from gpuplan import api
    from gpuplan.render.html import render_report

    limits.check_scenario(text)
    result = api.compare_text(text, name=SCENARIO_NAME, catalog=cat, hours_curves=True)
    return render_report("compare", result, lang, fragment=fragment)


def render_data(kind: str, data: Any, lang: str, fragment: bool) -> str:
    """The report of a result the client sent back. The data is checked against the command's contract
    first: a shape that is not one is the client's error (422, with the field path); what the renderer
    raises on data the contract accepts is ours (500, through the one error mapping)."""
    from pydantic import ValidationError

    from gpuplan.contracts import validate
    from gpuplan.render.html import render_report

    try:
        validate(kind, data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise err(422, "input", f"`data` is not what /api/{kind} returns: {where or 'the top'}: {first['msg']}",
                  field="data" + (f".{where}" if where else ""),
                  hint=f"send the JSON that /api/{kind} returned (`gpuplan schema {kind}`).") from None
    return render_report(kind, data, lang, fragment=fragment)


def _download(r: Response, name: str) -> Response:
    if r.status_code == 200:
        r.headers["content-disposition"] = f'attachment; filename="{name}"'
    return r


@router.post("/api/report", response_class=HTMLResponse, openapi_extra=body_schema(ReportIn))
async def api_report(request: Request) -> Response:
    """The self-contained HTML report. compare, commit and pack (the decision pack of `gpuplan report`):
    from `scenario`; plan: from `scenario` or `data`; simulate and audit: from `data` (the JSON their
    endpoint returned)."""
    r = rt(request)
    body = await read_model(request, ReportIn)
    name = f"gpuplan-{body.kind}-{body.lang}.html"
    shown: Literal["page", "fragment"] = "fragment" if body.fragment else "page"
    if body.kind in ("compare", "commit", "pack") and body.scenario is None:
        raise err(400, "request", f"`scenario` is required for a {body.kind} report", field="scenario")
    if body.kind == "compare" and body.scenario is not None:
        out = await r.cached(("report", body.lang, str(body.fragment), body.scenario), HTML, compare_report,
                             body.scenario, body.lang, r.catalog, body.fragment)
    elif body.kind == "commit" and body.scenario is not None:
        call(limits.check_commit, body.paths, body.seed)
        await r.run(limits.check_scenario, body.scenario, inline=r.small(body.scenario))
        out = await r.heavy_call(CommitCall(scenario=body.scenario, paths=body.paths, seed=body.seed, lang=body.lang,
                                            db=r.settings.db, catalog=r.settings.catalog, report=shown), HTML)
    elif body.kind == "pack" and body.scenario is not None:  # the decision pack (`gpuplan report`)
        call(limits.check_commit, body.paths, body.seed)
        await r.run(limits.check_scenario, body.scenario, inline=r.small(body.scenario))
        out = await r.heavy_call(PackCall(scenario=body.scenario, paths=body.paths, seed=body.seed, lang=body.lang,
                                          db=r.settings.db, catalog=r.settings.catalog, report=shown), HTML)
    elif body.kind == "plan" and body.data is None and body.scenario is not None:
        out = await r.heavy_call(PlanCall(scenario=body.scenario, lang=body.lang, catalog=r.settings.catalog,
                                          report=shown), HTML)
    else:
        if not isinstance(body.data, dict | list):
            raise err(400, "request", f"`data` (the {body.kind} JSON) is required", field="data")
        out = HTMLResponse(await r.run(render_data, body.kind, body.data, body.lang, body.fragment))
    return out if body.fragment else _download(out, name)

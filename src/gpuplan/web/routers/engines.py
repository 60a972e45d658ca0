"""The engines: compare (in this process: a few ms, cached), and plan, simulate, audit, export and commit
(in a worker process, with the heavy time and memory bounds). Each returns its command's `-o json`."""

from __future__ import annotations

from typing import Any, Literal, cast

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

import gpuplan.web.limits as limits
from gpuplan.constants import DEFAULT_QUEUEING, PACKINGS, QUEUEINGS, Packing, Queueing
from gpuplan.web.errors import err
from gpuplan.web.requests import body_schema, read_form, read_model, text, uploads, whole
from gpuplan.web.runtime import call, dumps, rt
from gpuplan.web.worker import SCENARIO_NAME, AuditCall, CommitCall, ExportCall, PlanCall, SimulateCall

router = APIRouter(tags=["engines"])


class In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CompareIn(In):
    scenario: str = Field(description="The scenario YAML text (what `gpuplan compare FILE` reads).")
    lang: Literal["en", "zh"] = "en"


class PlanIn(In):
    scenario: str = Field(description="The scenario YAML text.")
    lang: Literal["en", "zh"] = "en"
    demand_csv: str | None = Field(default=None, description="Optional demand CSV text (`time,gpu,gpus`).")
    queueing: Queueing = Field(default=DEFAULT_QUEUEING, description="How the leased pool queues (plan --queueing).")


class CommitIn(In):
    scenario: str = Field(description="The scenario YAML text (offers with `terms:`, `market:`).")
    lang: Literal["en", "zh"] = "en"
    paths: int = Field(default=10_000, description="Monte Carlo paths (1 to 20,000 on this server).")
    seed: int = Field(default=0, description="Seed of the paths (0 to 2^32-1): the same seed, the same answer.")


class ExportIn(In):
    target: Literal["kueue", "slurm", "volcano", "skypilot"]
    plan: dict[str, Any] = Field(description="The plan: the JSON /api/plan returned (`gpuplan.plan/1`).")
    name: str = Field(default="gpuplan", description="Name of the queues/partition (a DNS label).")


def compare_json(text: str, lang: str, cat: Any) -> dict[str, Any]:
    """The document's data as `compare -o json` prints it (not validated again: the contract tests check the
    data validates and equals the validated document's dump)."""
    from gpuplan import api

    limits.check_scenario(text)
    return api.compare_text(text, name=SCENARIO_NAME, catalog=cat).document_data(lang)


@router.post("/api/compare", openapi_extra=body_schema(CompareIn))
async def api_compare(request: Request) -> Response:
    """Exactly what `gpuplan compare FILE -o json --lang LANG` prints for this scenario text."""
    r = rt(request)
    body = await read_model(request, CompareIn)
    return await r.cached(("compare", body.lang, body.scenario), "application/json", compare_json, body.scenario,
                          body.lang, r.catalog, inline=r.small(body.scenario))


@router.post("/api/plan", openapi_extra=body_schema(PlanIn))
async def api_plan(request: Request) -> Response:
    """What `gpuplan plan FILE -o json` prints."""
    r = rt(request)
    body = await read_model(request, PlanIn)
    await r.run(limits.check_scenario, body.scenario, inline=r.small(body.scenario))
    if body.demand_csv is not None:
        await r.run(limits.check_demand_csv, body.demand_csv, inline=r.small(body.demand_csv))
    return await r.heavy_call(PlanCall(scenario=body.scenario, lang=body.lang, demand_csv=body.demand_csv,
                                       queueing=body.queueing, catalog=r.settings.catalog))


@router.post("/api/simulate")
async def api_simulate(request: Request) -> Response:
    """Multipart form: `trace` (file), `reserved` (e.g. `8` or `0:32:4`), optional `wait`, `queueing`,
    `packing`, `gpus_per_node`, `trace_format`, `scenario` (text), `gpu` (which of the scenario's GPUs
    prices the replay: needed when it offers several), `max_wait` (the waiting budget, e.g. `p95=2h`).
    What `gpuplan simulate -o json` prints."""
    r = rt(request)
    form = await read_form(request)
    traces = await uploads(form, "trace", one=True)
    reserved = text(form, "reserved")
    if not reserved:
        raise err(400, "request", "`reserved` is required", field="reserved", hint="e.g. 8, 4,8,16 or 0:32:4")
    call(limits.check_reserved, reserved)
    scenario = text(form, "scenario", limit=None)
    if scenario is not None:
        await r.run(limits.check_scenario, scenario, inline=r.small(scenario))
    text(form, "lang", choices=("en", "zh"))
    return await r.heavy_call(SimulateCall(
        trace=traces[0], reserved=reserved, wait=text(form, "wait") or "0",
        queueing=cast(Queueing, text(form, "queueing", choices=QUEUEINGS) or DEFAULT_QUEUEING),
        packing=cast(Packing, text(form, "packing", choices=PACKINGS) or "gpu"),
        gpus_per_node=whole(form, "gpus_per_node"), trace_format=text(form, "trace_format") or "auto",
        scenario=scenario, gpu=text(form, "gpu"), max_wait=text(form, "max_wait"), catalog=r.settings.catalog))


@router.post("/api/audit")
async def api_audit(request: Request) -> Response:
    """Multipart form: `files` (one or more nvidia-smi CSV or Prometheus JSON files), optional `price`
    (e.g. `8/gpu-hour`) or `offer` (an offer id of `scenario`, the scenario text), `currency`,
    `gpus_per_node` (splits a node price), `lang`. What `gpuplan audit FILES -o json` prints. With `demand_mode`
    (`util` or `busy`; `gpu_type` names the GPU when the data does not): what `audit --demand-out
    demand.csv -o json` prints, plus `demand_csv`, the curve's CSV text (what `/api/plan` takes as demand)."""
    r = rt(request)
    form = await read_form(request)
    files = await uploads(form, "files", one=False)
    text(form, "lang", choices=("en", "zh"))
    mode = text(form, "demand_mode", choices=("util", "busy"))
    gpn = whole(form, "gpus_per_node")
    scenario = text(form, "scenario", limit=None)
    if scenario is not None:
        await r.run(limits.check_scenario, scenario, inline=r.small(scenario))
    return await r.heavy_call(AuditCall(
        files=tuple(files), price=text(form, "price"), currency=text(form, "currency") or "USD",
        demand_mode=cast(Literal["util", "busy"] | None, mode), gpu_type=text(form, "gpu_type"),
        offer=text(form, "offer"), scenario=scenario, gpus_per_node=gpn, catalog=r.settings.catalog))


@router.post("/api/export", openapi_extra=body_schema(ExportIn))
async def api_export(request: Request) -> Response:
    """What `gpuplan export TARGET PLAN.json` writes, for the plan JSON /api/plan returned:
    `{"target", "stdout": <the one stream>, "files": [{"name", "text"}, …]}` (the files of `-o DIR`)."""
    r = rt(request)
    body = await read_model(request, ExportIn)
    return await r.heavy_call(ExportCall(target=body.target, plan=dumps(body.plan).decode(), name=body.name,
                                         catalog=r.settings.catalog))


@router.post("/api/commit", openapi_extra=body_schema(CommitIn))
async def api_commit(request: Request) -> Response:
    """What `gpuplan commit FILE --paths N --seed S -o json` prints (`gpuplan.commit/1`), with the server's
    quote database filling the drifts the scenario's `market:` leaves out (as `--db`)."""
    r = rt(request)
    body = await read_model(request, CommitIn)
    call(limits.check_commit, body.paths, body.seed)
    await r.run(limits.check_scenario, body.scenario, inline=r.small(body.scenario))
    return await r.heavy_call(CommitCall(scenario=body.scenario, paths=body.paths, seed=body.seed, lang=body.lang,
                                         db=r.settings.db, catalog=r.settings.catalog))

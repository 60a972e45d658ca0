"""The page's form: the common fields of a scenario text, and setting them (comments and layout kept)."""

from __future__ import annotations

from typing import Any, cast

from fastapi import APIRouter, Request
from pydantic import Field

from gpuplan.web.requests import body_schema, read_model
from gpuplan.web.routers.engines import In
from gpuplan.web.runtime import rt

router = APIRouter(tags=["editor"])


class FieldsIn(In):
    scenario: str


class EditIn(In):
    scenario: str
    set: dict[str, float | int | str] = Field(
        description="Field path -> new value, e.g. {\"workloads[0].hours_per_day\": 12}.")


@router.post("/api/scenario/fields", openapi_extra=body_schema(FieldsIn))
async def api_fields(request: Request) -> dict[str, Any]:
    """The common fields of a scenario (for the form), with their current values, and the GPUs its
    offers provide (`gpus`: the choices of the replay's and the audit's GPU fields)."""
    from gpuplan.web.edit import common_fields, offer_ids, offered_gpus

    r = rt(request)
    body = await read_model(request, FieldsIn)

    def both(text: str) -> dict[str, Any]:
        return {"fields": common_fields(text), "gpus": offered_gpus(text, r.catalog.offers), "offers": offer_ids(text)}

    return cast(dict[str, Any], await r.run(both, body.scenario, inline=r.small(body.scenario)))


@router.post("/api/scenario/edit", openapi_extra=body_schema(EditIn))
async def api_edit(request: Request) -> dict[str, Any]:
    """Set fields of the scenario text, keeping its comments and layout."""
    from gpuplan.web.edit import set_fields

    r = rt(request)
    body = await read_model(request, EditIn)
    return {"scenario": await r.run(set_fields, body.scenario, body.set, inline=r.small(body.scenario))}

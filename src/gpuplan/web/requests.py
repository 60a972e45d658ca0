"""Reading a request's body: JSON for the JSON endpoints (`Content-Type: application/json` exactly, else 415:
a browser sends `text/plain` cross-site without asking first), multipart for uploads; malformed is 400."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect

import gpuplan.web.limits as limits
from gpuplan.web.edge import BodyTimeout, BodyTooLarge
from gpuplan.web.errors import err
from gpuplan.web.worker import Upload

_PASS = (BodyTooLarge, BodyTimeout, ClientDisconnect)  # the edge answers these


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


async def read_model(request: Request, model: type[BaseModel]) -> Any:
    """The body as `model`: 415 unless it is sent as application/json, 400 if it is not a JSON object of
    `model`'s fields."""
    ctype = media_type(request)
    if ctype != "application/json":
        raise err(415, "request", f"expected Content-Type: application/json, got {ctype or 'none'}",
                  hint="send the body as JSON with Content-Type: application/json.")
    raw = await request.body()
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise err(400, "request", f"the body is not JSON: {exc}", hint="send a JSON object.") from None
    if not isinstance(data, dict):
        raise err(400, "request", "the body must be a JSON object", hint=f"fields: {', '.join(model.model_fields)}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = ".".join(str(p) for p in e["loc"])
        raise err(400, "request", e["msg"], field=loc or None,
                  hint=f"fields: {', '.join(model.model_fields)}") from None


async def read_form(request: Request) -> Any:
    """The multipart form of an upload: 415 for any other content type, 400 if it cannot be read."""
    if media_type(request) != "multipart/form-data":
        raise err(415, "request", "expected multipart/form-data", hint="upload the files as a form.")
    try:
        return await request.form(max_files=64, max_fields=64)
    except _PASS:
        raise
    except Exception as exc:  # a malformed multipart body (the parser's own errors)
        raise err(400, "request", f"the form cannot be read: {exc}") from None


async def uploads(form: Any, key: str, *, one: bool) -> list[Upload]:
    """The files uploaded under `key`; their names travel only as labels (see `gpuplan.web.worker`)."""
    items = [f for f in form.getlist(key) if hasattr(f, "read")]
    if not items:
        raise err(400, "request", f"no file uploaded as `{key}`", field=key)
    if one and len(items) > 1:
        raise err(400, "request", f"upload one file as `{key}`", field=key)
    return [Upload(name=str(up.filename or f"upload-{i}"), data=await up.read()) for i, up in enumerate(items)]


def text(form: Any, key: str, *, choices: tuple[str, ...] | None = None, limit: int | None = 200) -> str | None:
    """A text field of the form (None when absent or blank); 400 for a file, an over-long value or a bad choice."""
    v = form.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        raise err(400, "request", f"`{key}` must be text, not a file", field=key)
    v = v.strip()
    if not v:
        return None
    if (limit is not None and len(v) > limit) or "\x00" in v:
        raise err(400, "request", f"bad value for `{key}`", field=key)
    if choices is not None and v not in choices:
        raise err(400, "request", f"`{key}` must be one of {', '.join(choices)}, got {v!r}", field=key)
    return v


def whole(form: Any, key: str) -> int | None:
    """A whole number >= 1 of the form (None when absent); 400 otherwise, or 422 past 100,000 (GPUs per node)."""
    v = text(form, key)
    if v is None:
        return None
    if not (v.isdigit() and int(v) >= 1):
        raise err(400, "request", f"`{key}` must be a whole number >= 1", field=key)
    if int(v) > limits.MAX_GPUS_PER_WORKLOAD:
        raise err(422, "limit", f"`{key}`: {int(v):,} is over the limit of {limits.MAX_GPUS_PER_WORKLOAD:,}",
                  field=key)
    return int(v)


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that reads `model` itself (for /docs)."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}

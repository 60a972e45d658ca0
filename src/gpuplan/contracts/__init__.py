"""Typed contracts of the `-o json` outputs: one pydantic model per schema (`gpuplan.<name>/1`).

The models describe the JSON the commands print today, field for field; `json_schema(name)` is what
`gpuplan schema NAME` prints. Models load lazily (the registry holds import paths) and so does pydantic:
importing this package (as the document builders and result objects beside the models do) costs nothing.

Versioning: a `/1` contract keeps its field names and meanings; changes are additions. A removal or
a change of meaning is a new version (`/2`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

CONTRACTS: dict[str, str] = {
    "compare": "gpuplan.contracts.compare:CompareResult",
    "plan": "gpuplan.contracts.plan:PlanResult",
    "simulate": "gpuplan.contracts.simulate:SimulateOutput",
    "audit": "gpuplan.contracts.audit:AuditResult",
    "probe": "gpuplan.contracts.probe:ProbeResult",
    "commit": "gpuplan.contracts.commit:CommitResult",
    "vendors": "gpuplan.contracts.vendors:VendorsResult",
}
VERSION = 1
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE = "https://gpuplan.dev/schema"


class UnknownContract(KeyError):
    """A name that is not in `CONTRACTS`."""


def schema_id(name: str) -> str:
    """The value of the JSON's `schema` field: `gpuplan.<name>/1`."""
    _check(name)
    return f"gpuplan.{name}/{VERSION}"


def schema_url(name: str) -> str:
    return f"{SCHEMA_BASE}/{schema_id(name)}.json"


def _check(name: str) -> None:
    if name not in CONTRACTS:
        raise UnknownContract(f"unknown contract {name!r}; expected one of {', '.join(CONTRACTS)}")


def _load(path: str) -> type[BaseModel]:
    module, _, attr = path.partition(":")
    from pydantic import BaseModel

    model = getattr(importlib.import_module(module), attr)
    assert isinstance(model, type) and issubclass(model, BaseModel)
    return model


def model(name: str) -> type[BaseModel]:
    """The pydantic model of contract `name` (one JSON object of that command)."""
    _check(name)
    return _load(CONTRACTS[name])


def validate(name: str, data: Any) -> BaseModel:
    """`data` (decoded JSON) checked against contract `name`; raises `pydantic.ValidationError`.

    Before `gpuplan.simulate/1` wrapped its runs, simulate printed one run, or a list of runs for
    several R: those still validate, as `SimulateResult` and `SimulateResults`."""
    if name == "simulate" and isinstance(data, list):
        return _load("gpuplan.contracts.simulate:SimulateResults").model_validate(data)
    if name == "simulate" and isinstance(data, dict) and "schema" not in data:
        return _load("gpuplan.contracts.simulate:SimulateResult").model_validate(data)
    return model(name).model_validate(data)


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of contract `name`, as `gpuplan schema NAME` prints it.

    Every object schema carries `properties` and `required` (empty for maps and for records whose
    keys are all optional), so a reader can tell a record's keys from a map's at a glance."""
    m = model(name)
    body = m.model_json_schema(mode="validation")
    out: dict[str, Any] = {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": schema_url(name),
        "title": schema_id(name),
    }
    out.update({k: v for k, v in body.items() if k != "title"})
    _complete(out)
    return out


def _complete(node: Any) -> None:
    """Give every object schema explicit `properties` and `required` (pydantic omits empty ones)."""
    if isinstance(node, dict):
        if node.get("type") == "object":
            node.setdefault("properties", {})
            node.setdefault("required", [])
        for value in node.values():
            _complete(value)
    elif isinstance(node, list):
        for value in node:
            _complete(value)


__all__ = [
    "CONTRACTS",
    "UnknownContract",
    "json_schema",
    "model",
    "schema_id",
    "schema_url",
    "validate",
]

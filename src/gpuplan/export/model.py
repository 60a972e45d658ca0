"""The plan (`gpuplan plan -o json`, schema `gpuplan.plan/1`) as a small typed model for the exporters.

The JSON is checked against the plan contract (`gpuplan.contracts.plan`), then for what the exporters
need beyond it (cards fit the nodes, each workload's GPU has a pool, placements agree with
requirements). A bad value raises `ExportError` naming the JSON field path (`pools[0].reserved_gpus`),
what was expected and a hint.
"""

from __future__ import annotations

import math
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuplan.errors import ExportError

SCHEMA = "gpuplan.plan/1"
BARE_METAL_REQUIREMENTS = frozenset({"compliance", "custom-driver"})
CONTAINER_REQUIREMENTS = frozenset({"elastic"})
_HINT = "Produce the plan with `gpuplan plan SCENARIO -o json > plan.json`, or pass the scenario itself."


@dataclass(frozen=True)
class Pool:
    """One GPU type: the leased (bare-metal) cards and the elastic (container) spill behind them."""

    gpu: str
    vendor: str
    offer_bare_metal: str | None
    offer_container: str | None
    reserved_gpus: int
    nodes: int
    gpus_per_node: int
    lease_unit: str
    demand_peak: float
    demand_mean: float
    # GPU-hours a month the plan runs in containers for this GPU (spill above the leased cards +
    # elastic work); 0 means the plan spills nothing and no exporter creates elastic capacity.
    container_gpu_hours: float = 0.0
    # the spot tier (issue 26): the offer and S, the spot work's peak in whole instances (0: no tier)
    spot_offer: str | None = None
    spot_gpus: int = 0
    spot_gpus_per_node: int = 8

    @property
    def slug(self) -> str:
        return slugify(self.gpu)


@dataclass(frozen=True)
class Assignment:
    workload: str
    placement: str
    reason: str
    gpu: str
    gpus: int
    kind: str
    requires: tuple[str, ...]

    @property
    def bare_metal_only(self) -> bool:
        """Runs only on the leased pool: placed there by the plan, or requiring it."""
        return self.placement == "bare-metal" or bool(BARE_METAL_REQUIREMENTS & set(self.requires))

    @property
    def core(self) -> bool:
        """Core work (high priority) unless the plan calls it an experiment."""
        return self.kind != "experiment"


@dataclass(frozen=True)
class Plan:
    source: str
    scenario: str | None
    generated_at: str | None
    currency: str
    queueing: str
    pools: tuple[Pool, ...]
    assignments: tuple[Assignment, ...] = field(default_factory=tuple)

    def pool(self, gpu: str) -> Pool:
        for p in self.pools:
            if p.gpu == gpu:
                return p
        raise KeyError(gpu)

    def bare_metal_gpus(self, gpu: str) -> int:
        """Leased cards the bare-metal-only workloads of this GPU type claim (capped at the pool)."""
        want = sum(a.gpus for a in self.assignments if a.gpu == gpu and a.bare_metal_only)
        return min(want, self.pool(gpu).reserved_gpus)

    def elastic_gpus(self, gpu: str) -> int:
        """Elastic cards to allow: none when the plan runs no GPU-hour of this type in containers;
        else the peak above the leased pool, and at least the largest container-placed workload of
        this GPU type (so it can be admitted at all)."""
        p = self.pool(gpu)
        if p.container_gpu_hours <= 1e-9:
            return 0
        spill = max(math.ceil(p.demand_peak - 1e-9) - p.reserved_gpus, 0)
        largest = max(
            (a.gpus for a in self.assignments if a.gpu == gpu and a.placement in ("container", "split")),
            default=0,
        )
        return max(spill, largest)

    @property
    def has_bare_metal_only(self) -> bool:
        return any(a.bare_metal_only for a in self.assignments)


def spread(gpus: int, per_node: int) -> tuple[int, int]:
    """(nodes, cards per node) for a job of `gpus` cards on servers of `per_node`: as few nodes as
    fit, the cards spread evenly (12 on 8-card nodes -> 2 x 6; 64 -> 8 x 8)."""
    nodes = max(math.ceil(gpus / per_node), 1)
    return nodes, math.ceil(gpus / nodes)


def slugify(text: str) -> str:
    """A DNS-1123 label fragment: lower case, [a-z0-9-], no leading/trailing dash."""
    s = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return re.sub(r"-{2,}", "-", s) or "x"


# --- checking against the contract ------------------------------------------------------------


def field_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as the JSON path users read: ('pools', 0, 'gpu') -> pools[0].gpu."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(annotation: Any) -> str:
    """What a contract field holds, in words ("a whole number", "'gpu' or 'node'", "a string or null")."""
    from pydantic import BaseModel

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _describe(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(_describe(a) for a in typing.get_args(annotation)))
    if origin is typing.Literal:
        values = [repr(v) for v in typing.get_args(annotation)]
        return values[0] if len(values) == 1 else f"one of {', '.join(values)}"
    if origin is list:
        return "a list"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "a mapping"
    names = {int: "a whole number", float: "a number", str: "a string", bool: "true or false", type(None): "null"}
    return names.get(annotation, str(annotation))


def _expected(loc: tuple[int | str, ...]) -> str | None:
    """The description of the contract field at `loc`, or None when `loc` leaves the contract."""
    from pydantic import BaseModel

    from gpuplan.contracts.plan import PlanResult

    current: Any = PlanResult
    for part in loc:
        origin = typing.get_origin(current)
        if origin is typing.Annotated:
            current = typing.get_args(current)[0]
            origin = typing.get_origin(current)
        if origin in (typing.Union, types.UnionType):  # Optional[X]: step into X
            current = next(a for a in typing.get_args(current) if a is not type(None))
            origin = typing.get_origin(current)
        if isinstance(part, int) and origin is list:
            current = typing.get_args(current)[0]
        elif isinstance(part, str) and isinstance(current, type) and issubclass(current, BaseModel):
            found = [f for name, f in current.model_fields.items() if (f.alias or name) == part]
            if not found:
                return None
            current = found[0].rebuild_annotation()
        else:
            return None
    return _describe(current)


class _Short:
    """An input value for a message: its repr, cut short (a wrong `hourly` list can be long)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        text = repr(self.value)
        return text if len(text) <= 60 else text[:57] + "..."


def _short(value: Any) -> Any:
    return _Short(value) if isinstance(value, list | dict | str) else value


_BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}


def _error(exc: Any, source: str) -> ExportError:
    """The first error of a pydantic `ValidationError` as an `ExportError` (field path, expected, got)."""
    errors = exc.errors(include_url=False)
    err = errors[0]
    loc = tuple(err["loc"])
    path = field_path(loc)
    kind = err["type"]
    got = _short(err.get("input"))
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    if not loc:
        return ExportError(
            f"expected a JSON object (the plan), got {type(err.get('input')).__name__}{more}",
            file=source,
            hint=_HINT,
        )
    if kind == "missing":
        message = f"missing; expected {_expected(loc) or 'a value'}"
    elif kind == "extra_forbidden":
        hint = "Remove it (a misspelt key?); a plan written by a newer gpuplan may need that version to export."
        return ExportError(f"is not a field of {SCHEMA}{more}", file=source, field=path, hint=hint)
    elif kind in _BOUNDS:
        bound = next(iter(err.get("ctx", {}).values()), "?")
        message = f"must be {_expected(loc) or 'a number'} {_BOUNDS[kind]} {bound}, got {got!r}"
    else:
        message = f"expected {_expected(loc) or err['msg'].removeprefix('Input should be ')}, got {got!r}"
    return ExportError(message + more, file=source, field=path, hint=_HINT)


def _container_gpu_hours(raw: Any, assignments: Any) -> float:
    """GPU-hours a month in containers: the plan's `gpu_hours_per_month` (spill + elastic) when it
    has them; older plans: the hours the demand curve runs above the leased cards, or any hour
    at all when a workload of this GPU requires elastic capacity."""
    hours = raw.gpu_hours_per_month
    if hours is not None:
        return float(hours.spill + hours.elastic)
    above = sum(max(h - raw.reserved_gpus, 0.0) for h in raw.demand.hourly)
    if any(a.gpu == raw.gpu and "elastic" in a.requires for a in assignments):
        above = max(above, 1.0)
    return float(above)


def _check_names(contract: Any, fail: Any) -> None:
    """Ids and names at the edge (gpuplan.limits.name_problem): one line of at most 128 characters."""
    from gpuplan.limits import name_problem

    fields = [(f"pools[{i}].{k}", getattr(p, k)) for i, p in enumerate(contract.pools)
              for k in ("gpu", "vendor", "offer_bare_metal", "offer_container")]
    fields += [(f"assignments[{i}].{k}", getattr(a, k)) for i, a in enumerate(contract.assignments)
               for k in ("workload", "gpu")]
    for path, value in fields:
        problem = name_problem(value) if isinstance(value, str) else None
        if problem is not None:
            raise fail(path, f"{_short(value)!r} {problem}")


def parse_plan(data: Any, source: str = "<plan>") -> Plan:
    """Check the plan JSON (already decoded) against `gpuplan.plan/1` and convert it into a `Plan`."""
    from pydantic import ValidationError

    from gpuplan.contracts.plan import PlanResult

    def fail(path: str, message: str) -> ExportError:
        return ExportError(message, file=source, field=path, hint=_HINT)

    if isinstance(data, dict) and "schema" in data and data["schema"] != SCHEMA:
        # before the field checks: another schema (or version) fails on many fields, and this is why
        raise fail("schema", f"expected {SCHEMA!r}, got {data['schema']!r}")
    try:
        contract = PlanResult.model_validate(data)
    except ValidationError as exc:
        raise _error(exc, source) from None

    if not contract.pools:
        raise fail("pools", "is empty; the plan sizes no pool, so there is nothing to export")
    _check_names(contract, fail)
    pools: list[Pool] = []
    for i, raw in enumerate(contract.pools):
        path = f"pools[{i}]"
        pool = Pool(
            gpu=raw.gpu,
            vendor=raw.vendor,
            offer_bare_metal=raw.offer_bare_metal,
            offer_container=raw.offer_container,
            reserved_gpus=raw.reserved_gpus,
            nodes=raw.nodes,
            gpus_per_node=raw.gpus_per_node,
            lease_unit=raw.lease_unit,
            demand_peak=raw.demand.peak,
            demand_mean=raw.demand.mean,
            container_gpu_hours=_container_gpu_hours(raw, contract.assignments),
            spot_offer=raw.spot.offer if raw.spot is not None else None,
            spot_gpus=raw.spot.gpus if raw.spot is not None else 0,
            spot_gpus_per_node=raw.spot.gpus_per_node if raw.spot is not None else 8,
        )
        if pool.reserved_gpus > pool.nodes * pool.gpus_per_node:
            raise fail(
                f"{path}.reserved_gpus",
                f"{pool.reserved_gpus} cards do not fit on {pool.nodes} node(s) of {pool.gpus_per_node}",
            )
        if pool.reserved_gpus > 0 and pool.nodes == 0:
            raise fail(f"{path}.nodes", "is 0 but reserved_gpus is above 0")
        if any(p.gpu == pool.gpu for p in pools):
            raise fail(f"{path}.gpu", f"{pool.gpu!r} appears in two pools")
        pools.append(pool)

    gpus = {p.gpu for p in pools}
    assignments: list[Assignment] = []
    for i, raw_a in enumerate(contract.assignments):
        path = f"assignments[{i}]"
        a = Assignment(
            workload=raw_a.workload,
            placement=raw_a.placement,
            reason=raw_a.reason,
            gpu=raw_a.gpu,
            gpus=raw_a.gpus,
            kind=raw_a.kind,
            requires=tuple(raw_a.requires),
        )
        if a.gpu not in gpus:
            raise fail(f"{path}.gpu", f"{a.gpu!r} is not the gpu of any pool ({', '.join(sorted(gpus))})")
        if BARE_METAL_REQUIREMENTS & set(a.requires) and a.placement != "bare-metal":
            raise fail(
                f"{path}.placement",
                f"workload {a.workload!r} requires {', '.join(a.requires)} and must be bare-metal, got {a.placement!r}",
            )
        if CONTAINER_REQUIREMENTS & set(a.requires) and a.placement != "container":
            raise fail(
                f"{path}.placement",
                f"workload {a.workload!r} requires elastic and must be container, got {a.placement!r}",
            )
        if a.placement == "spot" and "no-preemption" in a.requires:
            raise fail(f"{path}.placement", f"workload {a.workload!r} requires no-preemption and cannot be spot")
        if a.placement == "spot" and next(p for p in pools if p.gpu == a.gpu).spot_gpus == 0:
            raise fail(f"{path}.placement", f"workload {a.workload!r} is placed on spot but the {a.gpu} pool "
                       "has no spot tier (pools[].spot)")
        if a.bare_metal_only and next(p for p in pools if p.gpu == a.gpu).reserved_gpus == 0:
            raise fail(
                f"{path}.placement",
                f"workload {a.workload!r} must run on bare metal but the {a.gpu} pool leases 0 cards",
            )
        assignments.append(a)
    return Plan(
        source=source,
        scenario=contract.scenario,
        generated_at=contract.generated_at,
        currency=contract.currency,
        queueing=contract.queueing,
        pools=tuple(pools),
        assignments=tuple(assignments),
    )


def load_plan(path: str | Path) -> Plan:
    """A plan from `PLAN.json`. (A scenario is planned by the api first: `api.export` hands its plan
    JSON to `parse_plan`; export itself never plans.)"""
    p = Path(path)
    if not p.is_file():
        raise ExportError("file not found", file=str(path), hint="Pass a plan JSON or a scenario YAML.")
    if p.suffix.lower() in (".yaml", ".yml"):
        raise ExportError("a scenario, not a plan", file=str(path),
                          hint="plan it first (`gpuplan plan -o json`, or `gpuplan.api.export`, which plans a "
                               "scenario YAML and exports the result).")
    from gpuplan.limits import load_json

    data = load_json(p, file=str(path), hint=_HINT, error=ExportError)
    return parse_plan(data, str(path))

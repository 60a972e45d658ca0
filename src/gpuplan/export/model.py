"""The plan (`gpuplan plan -o json`, schema `gpuplan.plan/1`) as a small typed model for the exporters.

Only the keys the exporters need are read; each is checked, and a bad value raises `ExportError`
naming the JSON field path (`pools[0].reserved_gpus`), what was expected and a hint.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuplan.errors import ExportError

SCHEMA = "gpuplan.plan/1"
PLACEMENTS = ("bare-metal", "container", "split")
QUEUEING = ("best-effort-fifo", "strict-fifo")
LEASE_UNITS = ("gpu", "node")
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
        """Elastic cards to allow: the peak above the leased pool, and at least the largest
        container-placed workload of this GPU type (so it can be admitted at all)."""
        p = self.pool(gpu)
        spill = max(math.ceil(p.demand_peak - 1e-9) - p.reserved_gpus, 0)
        largest = max(
            (a.gpus for a in self.assignments if a.gpu == gpu and a.placement in ("container", "split")),
            default=0,
        )
        return max(spill, largest)

    @property
    def has_bare_metal_only(self) -> bool:
        return any(a.bare_metal_only for a in self.assignments)


def slugify(text: str) -> str:
    """A DNS-1123 label fragment: lower case, [a-z0-9-], no leading/trailing dash."""
    s = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return re.sub(r"-{2,}", "-", s) or "x"


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str, hint: str | None = _HINT) -> ExportError:
        return ExportError(message, file=self.source, field=path, hint=hint)

    def get(
        self,
        obj: dict[str, Any],
        key: str,
        path: str,
        kind: type | tuple[type, ...],
        *,
        required: bool = True,
        default: Any = None,
    ) -> Any:
        full = f"{path}.{key}" if path else key
        if key not in obj or obj[key] is None:
            if required:
                raise self.fail(full, f"missing; expected {_kind_name(kind)}")
            return default
        value = obj[key]
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.fail(full, f"expected {_kind_name(kind)}, got {value!r}")
        if not isinstance(value, kind):
            raise self.fail(full, f"expected {_kind_name(kind)}, got {type(value).__name__} {value!r}")
        return value

    def count(
        self,
        obj: dict[str, Any],
        key: str,
        path: str,
        *,
        minimum: int,
        required: bool = True,
        default: int = 0,
    ) -> int:
        value = self.get(obj, key, path, (int, float), required=required, default=default)
        if isinstance(value, float):
            if not value.is_integer():
                raise self.fail(f"{path}.{key}", f"must be a whole number, got {value!r}")
            value = int(value)
        if value < minimum:
            raise self.fail(f"{path}.{key}", f"must be a whole number >= {minimum}, got {value!r}")
        return int(value)

    def choice(
        self,
        obj: dict[str, Any],
        key: str,
        path: str,
        choices: tuple[str, ...],
        *,
        required: bool = True,
        default: str | None = None,
    ) -> str:
        value = self.get(obj, key, path, str, required=required, default=default)
        if value not in choices:
            raise self.fail(
                f"{path}.{key}" if path else key, f"expected one of {', '.join(choices)}, got {value!r}"
            )
        return str(value)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", int: "a number", float: "a number", list: "a list", dict: "a mapping"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def parse_plan(data: Any, source: str = "<plan>") -> Plan:
    """Check and convert the plan JSON (already decoded) into a `Plan`."""
    r = _Reader(source)
    if not isinstance(data, dict):
        raise r.fail("", f"expected a JSON object (the plan), got {type(data).__name__}")
    schema = r.get(data, "schema", "", str)
    if schema != SCHEMA:
        raise r.fail("schema", f"expected {SCHEMA!r}, got {schema!r}")
    currency = r.get(data, "currency", "", str)
    scenario = r.get(data, "scenario", "", str, required=False)
    generated_at = r.get(data, "generated_at", "", str, required=False)
    queueing = r.choice(data, "queueing", "", QUEUEING, required=False, default="best-effort-fifo")

    raw_pools = r.get(data, "pools", "", list)
    if not raw_pools:
        raise r.fail("pools", "is empty; the plan sizes no pool, so there is nothing to export")
    pools: list[Pool] = []
    for i, raw in enumerate(raw_pools):
        path = f"pools[{i}]"
        if not isinstance(raw, dict):
            raise r.fail(path, f"expected a mapping, got {type(raw).__name__}")
        demand = r.get(raw, "demand", path, dict)
        peak = r.get(demand, "peak", f"{path}.demand", (int, float))
        mean = r.get(demand, "mean", f"{path}.demand", (int, float), required=False, default=0.0)
        if peak < 0 or mean < 0:
            raise r.fail(f"{path}.demand", f"peak and mean must be >= 0, got peak={peak} mean={mean}")
        pool = Pool(
            gpu=r.get(raw, "gpu", path, str),
            vendor=r.get(raw, "vendor", path, str),
            offer_bare_metal=r.get(raw, "offer_bare_metal", path, str, required=False),
            offer_container=r.get(raw, "offer_container", path, str, required=False),
            reserved_gpus=r.count(raw, "reserved_gpus", path, minimum=0),
            nodes=r.count(raw, "nodes", path, minimum=0),
            gpus_per_node=r.count(raw, "gpus_per_node", path, minimum=1),
            lease_unit=r.choice(raw, "lease_unit", path, LEASE_UNITS),
            demand_peak=float(peak),
            demand_mean=float(mean),
        )
        if pool.reserved_gpus > pool.nodes * pool.gpus_per_node:
            raise r.fail(
                f"{path}.reserved_gpus",
                f"{pool.reserved_gpus} cards do not fit on {pool.nodes} node(s) of {pool.gpus_per_node}",
            )
        if pool.reserved_gpus > 0 and pool.nodes == 0:
            raise r.fail(f"{path}.nodes", "is 0 but reserved_gpus is above 0")
        if any(p.gpu == pool.gpu for p in pools):
            raise r.fail(f"{path}.gpu", f"{pool.gpu!r} appears in two pools")
        pools.append(pool)

    raw_assignments = r.get(data, "assignments", "", list, required=False, default=[])
    gpus = {p.gpu for p in pools}
    assignments: list[Assignment] = []
    for i, raw in enumerate(raw_assignments):
        path = f"assignments[{i}]"
        if not isinstance(raw, dict):
            raise r.fail(path, f"expected a mapping, got {type(raw).__name__}")
        requires = r.get(raw, "requires", path, list, required=False, default=[])
        for j, item in enumerate(requires):
            if not isinstance(item, str):
                raise r.fail(f"{path}.requires[{j}]", f"expected a string, got {item!r}")
        a = Assignment(
            workload=r.get(raw, "workload", path, str),
            placement=r.choice(raw, "placement", path, PLACEMENTS),
            reason=r.get(raw, "reason", path, str, required=False, default=""),
            gpu=r.get(raw, "gpu", path, str),
            gpus=r.count(raw, "gpus", path, minimum=1),
            kind=r.get(raw, "kind", path, str, required=False, default="training"),
            requires=tuple(requires),
        )
        if a.gpu not in gpus:
            raise r.fail(f"{path}.gpu", f"{a.gpu!r} is not the gpu of any pool ({', '.join(sorted(gpus))})")
        if BARE_METAL_REQUIREMENTS & set(a.requires) and a.placement != "bare-metal":
            raise r.fail(
                f"{path}.placement",
                f"workload {a.workload!r} requires {', '.join(a.requires)} and must be bare-metal, "
                f"got {a.placement!r}",
            )
        if CONTAINER_REQUIREMENTS & set(a.requires) and a.placement != "container":
            raise r.fail(
                f"{path}.placement",
                f"workload {a.workload!r} requires elastic and must be container, got {a.placement!r}",
            )
        if a.bare_metal_only and next(p for p in pools if p.gpu == a.gpu).reserved_gpus == 0:
            raise r.fail(
                f"{path}.placement",
                f"workload {a.workload!r} must run on bare metal but the {a.gpu} pool leases 0 cards",
            )
        assignments.append(a)
    return Plan(
        source=source,
        scenario=scenario,
        generated_at=generated_at,
        currency=currency,
        queueing=queueing,
        pools=tuple(pools),
        assignments=tuple(assignments),
    )


def load_plan(path: str | Path, catalog: str | Path | None = None) -> Plan:
    """A plan from `PLAN.json`, or computed from `SCENARIO.yaml` with `gpuplan.api.plan_scenario`."""
    p = Path(path)
    if not p.is_file():
        raise ExportError("file not found", file=str(path), hint="Pass a plan JSON or a scenario YAML.")
    if p.suffix.lower() in (".yaml", ".yml"):
        try:
            from gpuplan.api import plan_scenario  # type: ignore[attr-defined]
        except ImportError as exc:
            raise ExportError(
                "exporting straight from a scenario needs gpuplan.api.plan_scenario, which this build lacks",
                file=str(path),
                hint="Run `gpuplan plan SCENARIO -o json > plan.json` and export plan.json.",
            ) from exc
        data = plan_scenario(str(path), catalog=str(catalog) if catalog else None)
        return parse_plan(data, str(path))
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ExportError(f"not valid JSON: {exc.msg}", file=str(path), line=exc.lineno, hint=_HINT) from exc
    except UnicodeDecodeError as exc:
        raise ExportError("not UTF-8 text", file=str(path), hint=_HINT) from exc
    return parse_plan(data, str(path))

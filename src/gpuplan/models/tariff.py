"""The one money model: what a lease and a container offer charge, used by compare, plan, simulate and audit.

Prices are per GPU-hour (`units.price_per_gpu_hour` normalises node and day prices) as a range;
`point` picks its low, mid or high end. `eng` is the team's engineer cost per hour, `M` the hours in
a month (days_per_month x 24).

Bare metal (a lease):
    billed(g)      = g, or whole nodes: ceil(g / gpus_per_node) x gpus_per_node when leased by the node
    lease_hours    = max(setup + work_hours, min_term)     (a finite project: paid from hand-over, idle or not)
                   = work_hours                            (a repeating sample: no term, no one-off setup)
    rental         = billed(g) x lease_hours x price
    ops            = ops_hours x units(g) x lease_hours / M x eng
                     units: whole nodes ceil(g / gpus_per_node) for `node-month`, billed GPUs for
                     `gpu-month`, 1 for `month`
    setup          = setup_hours x eng, once per deployment (one engineer brings the pool up)

Containers (billed while running):
    rental         = gpu_hours x slowdown x price          (gpu_hours: dedicated GPU-hours of work;
                                                            a container needs `slowdown` times as many)
    ops            = container GPU-hours x ops_hours x eng / (M x GPUs per unit)  (per GPU-hour used)
    setup          = setup_hours x eng, once per workload that runs there

Owned servers (`mode: owned`, gpuplan.models.owned) bill as a node lease at capex + colocation + idle
power per node-hour held, and add the busy draw's excess for every GPU-hour they run:
    busy           = gpu_hours_run x busy_extra_per_gpu_hour   (extra_per_node_hour / gpus_per_node; 0 for a lease)

A pool of R leased GPUs that spills to containers, over `hours` of demand:
    total(R)       = rental(R) + ops(R) + busy(GPU-hours the pool serves) + container rental and ops of the
                     spilled GPU-hours

Per month: every command divides a total by the calendar time of its demand, never by a span that
a container slowdown stretched:
    per_month      = total x M / horizon
    horizon        = max(longest workload duration, M)      (schedules: at least one month)
                   = the sample's span                      (a demand CSV or a trace: it repeats)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from gpuplan.errors import UsageError

if TYPE_CHECKING:  # types only: `simulate` without a scenario should not load pydantic
    import numpy as np  # arrays only for pools (`pool_costs`): `compare` never loads numpy

    from gpuplan.inputs.scenario_types import Offer, Range, Scenario

PricePoint = Literal["low", "mid", "high"]
FloatOrArray = TypeVar("FloatOrArray", float, "np.ndarray")
POINTS: tuple[PricePoint, ...] = ("low", "mid", "high")


def _at(r: Range, point: PricePoint) -> float:
    return {"low": r.low, "mid": r.mid, "high": r.high}[point]


def nodes_for(gpus: float, gpus_per_node: int) -> int:
    """Whole nodes that hold `gpus` cards."""
    return math.ceil(gpus / gpus_per_node - 1e-9) if gpus > 0 else 0


@dataclass(frozen=True)
class Tariff:
    """What one offer charges, with the scenario's team cost and month length."""

    offer: str
    mode: str
    currency: str
    price: Range  # per GPU-hour
    lease_unit: Literal["gpu", "node"]
    gpus_per_node: int
    min_term_hours: float
    setup_hours: float
    ops_hours: float
    ops_per: str  # node-month | gpu-month | month
    engineer_hour_cost: float
    days_per_month: float
    spare_gpus: int = 0  # leased spare nodes' GPUs (issue 17): paid with any non-empty lease
    busy_extra_per_gpu_hour: float = 0.0  # owned servers: the busy draw above the idle one, per GPU-hour run
    lead_hours: float = 0.0  # owned servers: order to delivery (the pool has none of them before)

    @classmethod
    def of(cls, offer: Offer, scenario: Scenario, price: Range | None = None) -> Tariff:
        """The offer's tariff; `price` overrides its price per GPU-hour (break-even and flip searches)."""
        return cls(
            offer=offer.id, mode=offer.mode, currency=scenario.currency,
            price=offer.price_per_gpu_hour if price is None else price,
            lease_unit=offer.lease_unit, gpus_per_node=offer.gpus_per_node, min_term_hours=offer.min_term_hours,
            setup_hours=offer.setup_hours, ops_hours=offer.ops_hours, ops_per=offer.ops_per,
            engineer_hour_cost=scenario.team.engineer_hour_cost or 0.0, days_per_month=scenario.days_per_month,
            spare_gpus=offer.spares * offer.gpus_per_node if offer.mode == "bare-metal" else 0,
            busy_extra_per_gpu_hour=offer.owned.extra_per_node_hour / offer.gpus_per_node if offer.owned else 0.0,
            lead_hours=offer.owned.lead_time_hours if offer.owned else 0.0,
        )

    @property
    def month_hours(self) -> float:
        return self.days_per_month * 24.0

    def unit_price(self, point: PricePoint = "mid") -> float:
        return _at(self.price, point)

    @property
    def setup_cost(self) -> float:
        """One deployment's labour (one engineer)."""
        return self.setup_hours * self.engineer_hour_cost

    # ---------------------------------------------------------------- leases

    @property
    def step(self) -> int:
        """The smallest amount of GPUs the lease sells: a node when leased by the node."""
        return self.gpus_per_node if self.lease_unit == "node" else 1

    def billed_gpus(self, gpus: float) -> int:
        """GPUs paid for: whole nodes when leased by the node, plus the leased spares of a non-empty lease."""
        spares = self.spare_gpus if gpus > 1e-9 else 0
        if self.lease_unit == "node":
            return nodes_for(gpus, self.gpus_per_node) * self.gpus_per_node + spares
        return math.ceil(gpus - 1e-9) + spares

    def check_pool_size(self, reserved: int, field: str = "--reserved") -> None:
        """A node lease sells whole nodes: refuse a pool size that is not one (with the two nearest)."""
        if self.lease_unit == "node" and reserved % self.gpus_per_node:
            g = self.gpus_per_node
            below, above = reserved // g * g, (reserved // g + 1) * g
            raise UsageError(
                f"{reserved} GPUs is not a whole number of {g}-GPU nodes, and `{self.offer}` is leased by the node",
                field=field, hint=f"use {below} or {above} (or a range in steps of {g}, e.g. 0:{4 * g}:{g}).")

    def lease_hours(self, work_hours: float, *, project: bool) -> float:
        """Paid hours of a lease: a project pays setup and at least the min term; a repeating sample neither."""
        return max(self.setup_hours + work_hours, self.min_term_hours) if project else work_hours

    def ops_units(self, gpus: float) -> float:
        if gpus <= 0:
            return 0.0
        if self.ops_per == "node-month":
            return float(nodes_for(gpus, self.gpus_per_node))
        return float(self.billed_gpus(gpus)) if self.ops_per == "gpu-month" else 1.0

    def lease_rental(self, gpus: float, lease_hours: float, point: PricePoint = "mid") -> float:
        return self.billed_gpus(gpus) * lease_hours * self.unit_price(point)

    def lease_ops(self, gpus: float, lease_hours: float) -> float:
        return self.ops_hours * self.ops_units(gpus) * lease_hours / self.month_hours * self.engineer_hour_cost

    def busy_cost(self, gpu_hours_run: FloatOrArray) -> FloatOrArray:
        """Owned servers' power above their idle draw for the GPU-hours they run (0 for a lease)."""
        return gpu_hours_run * self.busy_extra_per_gpu_hour

    def lease_ops_hours(self, gpus: float, lease_hours: float) -> float:
        return self.ops_hours * self.ops_units(gpus) * lease_hours / self.month_hours

    # ---------------------------------------------------------------- containers

    def container_ops_hours(self, container_gpu_hours: float) -> float:
        """Ops hours for GPU-hours a container runs (its ops spread over the GPUs it covers)."""
        per_unit = self.ops_hours / self.month_hours
        per_gpu = {"node-month": per_unit / self.gpus_per_node, "gpu-month": per_unit, "month": 0.0}[self.ops_per]
        return container_gpu_hours * per_gpu

    @property
    def ops_per_gpu_hour(self) -> float:
        """Ops labour per GPU-hour a container runs."""
        return self.container_ops_hours(1.0) * self.engineer_hour_cost

    def container_ops(self, container_gpu_hours: float) -> float:
        return container_gpu_hours * self.ops_per_gpu_hour

    def container_cost(self, container_gpu_hours: FloatOrArray, point: PricePoint = "mid") -> FloatOrArray:
        """Rental and ops of GPU-hours as billed by the container (already stretched by its slowdown)."""
        return container_gpu_hours * (self.unit_price(point) + self.ops_per_gpu_hour)


@dataclass(frozen=True)
class PoolBill:
    """A pool of `reserved` leased GPUs over `lease_hours`, spilling `container_gpu_hours` to containers."""

    reserved: int
    billed_gpus: int
    nodes: int
    lease_hours: float
    container_gpu_hours: float
    lease: float
    ops: float
    burst: float
    total: float


def pool_bill(lease: Tariff | None, container: Tariff | None, reserved: int, lease_hours: float,
              container_gpu_hours: float, point: PricePoint = "mid") -> PoolBill:
    """The bill of one pool size (a scalar `pool_costs`)."""
    lease_cost = lease.lease_rental(reserved, lease_hours, point) if lease is not None and reserved > 0 else 0.0
    ops = lease.lease_ops(reserved, lease_hours) if lease is not None and reserved > 0 else 0.0
    burst = 0.0
    if container is not None and container_gpu_hours > 0:
        burst = container.container_cost(container_gpu_hours, point)
    return PoolBill(
        reserved=int(reserved), billed_gpus=lease.billed_gpus(reserved) if lease is not None else 0,
        nodes=nodes_for(reserved, lease.gpus_per_node) if lease is not None else 0, lease_hours=lease_hours,
        container_gpu_hours=container_gpu_hours, lease=lease_cost, ops=ops, burst=burst,
        total=lease_cost + ops + burst)


def pool_costs(lease: Tariff | None, container: Tariff | None, reserved: Iterable[int] | np.ndarray,
               lease_hours: float, container_gpu_hours: np.ndarray, point: PricePoint = "mid") -> np.ndarray:
    """`pool_bill(...).total` for many pool sizes at once (the plan's cost curve)."""
    import numpy as np

    rs = np.asarray(list(reserved) if not isinstance(reserved, np.ndarray) else reserved, dtype=np.int64)
    ch = np.asarray(container_gpu_hours, dtype=np.float64)
    out = np.zeros(len(rs), dtype=np.float64)
    if lease is not None:
        out += np.array([lease.lease_rental(int(r), lease_hours, point) + lease.lease_ops(int(r), lease_hours)
                         if r > 0 else 0.0 for r in rs])
    if container is not None:
        out += container.container_cost(ch, point)
    return out


def horizon_hours(durations: Iterable[float], days_per_month: float) -> float:
    """The calendar time of a set of schedules: the longest duration, at least one month."""
    return max(max(durations, default=0.0), days_per_month * 24.0)


def per_month(total: float, horizon: float, days_per_month: float) -> float:
    return total * days_per_month * 24.0 / horizon if horizon > 0 else 0.0

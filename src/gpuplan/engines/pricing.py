"""The tariffs a pool or a telemetry audit needs, taken from a scenario's offers.

A pool of one GPU type is priced by the cheapest bare-metal offer (the lease) and the cheapest
container offer (the spill), each as a `gpuplan.models.tariff.Tariff`, and one container slowdown:

    container_slowdown = mean of perf.slowdown(w, container offer) x delays.rework_factor(w, container
                         offer) (lost work re-run after interruptions) over the workloads of that GPU,
                         weighted by their GPU-hours when the demand comes from their schedules and
                         equally otherwise (a trace or a demand CSV does not say which workload ran);
                         a single-GPU job when the scenario has no workload on that GPU.

`plan` and `simulate` both take their slowdown from `pool_slowdown`, so the same pool and usage cost
the same in both. With the bare-metal offer in place of the container one, `pool_slowdown` is s_b, the
same work on the lease (compare bills rework after interruptions on bare metal too, so it is included);
`plan` bills the leased cards' (s_b - 1) x served GPU-hours as lease overtime (`engines.planner`), and
`commit` each bare-metal offer's own (`engines.commit`).
`simulate --scenario` reads a trace's durations as `plan --trace` does: the work's time on the reference
(ideal dedicated bare metal with a full fabric, compare's reference), not on the lease being priced. The
replay holds a leased card for the recorded duration (as plan's pool, cards are never added for the
stretch), and the GPU-hours the leased cards run pay s_b - 1 card-hours of lease overtime each at the
lease's price + ops per card-hour (`PoolPricing.overtime_per_gpu_hour`); a burst runs s_c x its
duration in containers. So a dedicated GPU-hour costs s_b x the lease's card-hour on the pool and
s_c x the container's in a burst, as in `plan` (s_c / s_b container GPU-hours a leased-card GPU-hour).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpuplan.errors import GpuplanError
from gpuplan.inputs.catalog import Catalog, load_catalog
from gpuplan.inputs.scenario import load_scenario
from gpuplan.inputs.scenario_types import Offer, Scenario, Workload
from gpuplan.models.delays import rework_factor
from gpuplan.models.perf import slowdown
from gpuplan.models.tariff import PricePoint, Tariff


def _probe_workload(gpu: str) -> Workload:
    return Workload(id="_unit", kind="experiment", gpus_allowed=(gpu,), gpus=1, hours_per_day=1.0, days_per_week=7,
                    duration_hours=24.0, utilization=1.0, communication=0.0, requires=frozenset())


def cheapest(scenario: Scenario, gpu: str, mode: str, work: Sequence[Workload] | None = None,
             catalog: Catalog | None = None, weights: Mapping[str, float] | None = None) -> Offer | None:
    """The cheapest offer of a GPU that bills as `mode`, spot capacity aside (its own tier, `cheapest_spot`),
    by its mid price per GPU-hour in use (an owned server's price per hour held plus its busy draw above
    the idle one: a lease and a bought server compare at full use). With `work` (and `catalog`), where
    several offers qualify: by that price x the work's slowdown there (`pool_slowdown`), the price of a
    dedicated GPU-hour of it, so a cheap lease on a slow network loses to a dearer one on a fast one when
    it runs the work more than its discount slower."""
    offers = [o for o in scenario.offers if o.gpu == gpu and o.mode == mode and o.capacity != "spot"]

    def in_use(o: Offer) -> float:
        return o.price_per_gpu_hour.mid + (o.owned.extra_per_node_hour / o.gpus_per_node if o.owned else 0.0)

    if work is not None and catalog is not None and len(offers) > 1:
        wls = list(work)
        return min(offers, key=lambda o: (in_use(o) * pool_slowdown(wls, gpu, o, catalog, weights), o.id))
    return min(offers, key=lambda o: (in_use(o), o.id)) if offers else None


def cheapest_spot(scenario: Scenario, gpu: str) -> Offer | None:
    """The cheapest spot offer of a GPU (issue 26: plan's spot tier)."""
    offers = [o for o in scenario.offers if o.gpu == gpu and o.capacity == "spot"]
    return min(offers, key=lambda o: (o.price_per_gpu_hour.mid, o.id)) if offers else None


def pool_workloads(scenario: Scenario, gpu: str) -> list[Workload]:
    """The workloads a pool's spill comes from: those of `gpu` that may use the pool (all, if every one is elastic)."""
    wls = [w for w in scenario.workloads if w.gpus_allowed[0] == gpu]
    return [w for w in wls if "elastic" not in w.requires] or wls


def pool_slowdown(workloads: Sequence[Workload], gpu: str, ct: Offer | None, catalog: Catalog,
                  weights: Mapping[str, float] | None = None) -> float:
    """The container slowdown of a pool's work (see the module docstring); 1.0 without a container offer."""
    if ct is None:
        return 1.0
    wls = list(workloads) or [_probe_workload(gpu)]
    w = [float(weights.get(x.id, 0.0)) if weights is not None else 1.0 for x in wls]
    values = [slowdown(x, ct, catalog).total * rework_factor(x, ct) for x in wls]
    if sum(w) <= 0:
        w = [1.0] * len(wls)
    return float(np.average(values, weights=w))


@dataclass(frozen=True)
class PoolPricing:
    """How one GPU type's hybrid pool is priced: the lease, the containers, and the container slowdown."""

    gpu: str
    currency: str
    days_per_month: float
    lease: Tariff | None
    container: Tariff | None
    container_slowdown: float
    bare_metal_slowdown: float = 1.0  # s_b: the pool's work on the bare-metal offer (1.0 without one)

    def overtime_per_gpu_hour(self, point: PricePoint = "mid") -> float:
        """Lease overtime per GPU-hour the leased cards run: (s_b - 1) x (lease price + ops per card-hour),
        as `plan` bills it (ops per node spread over its cards; 0 without a lease)."""
        if self.lease is None or self.bare_metal_slowdown <= 1.0:
            return 0.0
        return (self.bare_metal_slowdown - 1.0) * (self.lease.unit_price(point) + self.lease.ops_per_gpu_hour)

    @property
    def offer_bare_metal(self) -> str | None:
        return self.lease.offer if self.lease else None

    @property
    def offer_container(self) -> str | None:
        return self.container.offer if self.container else None

    @property
    def gpus_per_node(self) -> int:
        t = self.lease or self.container
        return t.gpus_per_node if t else 8

    @property
    def lease_per_gpu_hour(self) -> float:
        return self.lease.unit_price() if self.lease else math.nan

    @property
    def container_per_gpu_hour(self) -> float:
        return self.container.unit_price() if self.container else math.nan

    def summary(self) -> dict[str, Any]:
        """The prices a report states (per GPU-hour; ops per GPU-hour of a full node)."""
        ops = 0.0
        if self.lease is not None:
            ops = self.lease.lease_ops(self.lease.gpus_per_node, self.lease.month_hours) / (
                self.lease.gpus_per_node * self.lease.month_hours)
        return {
            "gpu": self.gpu, "currency": self.currency, "days_per_month": self.days_per_month,
            "offer_bare_metal": self.offer_bare_metal, "offer_container": self.offer_container,
            "lease_per_gpu_hour": self.lease_per_gpu_hour, "ops_per_gpu_hour": ops,
            "container_per_gpu_hour": self.container_per_gpu_hour, "container_slowdown": self.container_slowdown,
            "bare_metal_slowdown": self.bare_metal_slowdown, "overtime_per_gpu_hour": self.overtime_per_gpu_hour(),
            "lease_unit": self.lease.lease_unit if self.lease else "gpu", "gpus_per_node": self.gpus_per_node,
        }


def pool_prices(scenario: Scenario, gpu: str | None = None, catalog: Catalog | None = None) -> PoolPricing:
    """The pricing of `gpu`'s pool (the only GPU offered when None), as `plan` prices a trace or demand CSV."""
    cat = catalog or load_catalog()
    gpus = sorted({o.gpu for o in scenario.offers})
    if gpu is None:
        if len(gpus) != 1:
            raise GpuplanError("the scenario offers several GPUs; say which", field="gpu",
                               hint=f"GPUs offered: {', '.join(gpus)}")
        gpu = gpus[0]
    work = pool_workloads(scenario, gpu)
    bm = cheapest(scenario, gpu, "bare-metal", work, cat)
    ct = cheapest(scenario, gpu, "container", work, cat)
    if bm is None and ct is None:
        raise GpuplanError(f"no offer for GPU `{gpu}`", field="offers", hint=f"GPUs offered: {', '.join(gpus)}")
    return PoolPricing(
        gpu=gpu, currency=scenario.currency, days_per_month=scenario.days_per_month,
        lease=Tariff.of(bm, scenario) if bm else None, container=Tariff.of(ct, scenario) if ct else None,
        container_slowdown=pool_slowdown(pool_workloads(scenario, gpu), gpu, ct, cat),
        bare_metal_slowdown=pool_slowdown(pool_workloads(scenario, gpu), gpu, bm, cat),
    )


@dataclass(frozen=True)
class OfferPrice:
    offer: str
    per_gpu_hour: float
    low: float
    high: float
    currency: str
    mode: str
    gpu: str


def offer_price(offer_id: str, scenario_path: str | Path | None = None,
                catalog_path: str | Path | None = None) -> OfferPrice:
    """The per-GPU-hour price of an offer from a scenario or, without one, from the catalog."""
    cat = load_catalog(catalog_path)
    if scenario_path is not None:
        scen = load_scenario(scenario_path, cat)
        try:
            o = scen.offer(offer_id)
        except KeyError:
            raise GpuplanError(f"no offer `{offer_id}` in the scenario", file=scenario_path, field="--offer",
                               hint=f"offers: {', '.join(x.id for x in scen.offers)}") from None
        return _offer_price(o, scen)
    if offer_id not in cat.offers:
        raise GpuplanError(f"no catalog offer `{offer_id}`", field="--offer",
                           hint="`gpuplan catalog offers` lists them, or pass --scenario with your own offers.")
    from gpuplan.inputs.scenario import _Locator, build_scenario

    entry = cat.offers[offer_id]
    currency = entry.get("currency", "USD")
    scen = build_scenario({"version": 1, "currency": currency, "offers": [{"use": offer_id}],
                           "workloads": [{"id": "x", "kind": "experiment", "gpu": entry["gpu"], "gpus": 1,
                                          "hours_per_day": 1, "duration": "1d"}]},
                          _Locator("<catalog>"), cat)
    return _offer_price(scen.offers[0], scen)


def _offer_price(o: Offer, scen: Scenario) -> OfferPrice:
    """An audit prices observed GPU-hours at the tariff's unit price (a node price over its GPUs)."""
    t = Tariff.of(o, scen)
    return OfferPrice(o.id, t.unit_price("mid"), t.unit_price("low"), t.unit_price("high"), scen.currency, o.mode,
                      o.gpu)


__all__ = ["OfferPrice", "PoolPricing", "cheapest", "offer_price", "pool_prices", "pool_slowdown"]

"""The portfolio plan: per GPU type, how many cards to lease and what spills to containers.

Per GPU type (a workload's first GPU):
- pool demand = workloads that may use the pool (all but `elastic` ones); pinned demand = those that
  require bare metal (`compliance`, `custom-driver`), so R >= their peak;
- R* = `pool.size_pool` over every candidate R (whole nodes when the bare-metal offer leases nodes);
- spill is priced at the container price x the GPU-hour-weighted container slowdown of the workloads;
- elastic demand always runs in containers;
- assignments: each hour the pool serves pinned work first, then workloads by steadiness (share of
  the horizon they run, highest first: core training before experiments); a workload served >= 99%
  by the pool is `bare-metal`, <= 1% `container`, else `split`;
- all-bare-metal leases the peak of all demand; all-container runs everything in containers (both
  for comparison, ignoring hard rules);
- money per month = horizon total x (days_per_month x 24 / horizon hours). One-off setup is left out.
- a lease's min_term holds over a horizon built from schedules (a 90-day term for 30 days of work is
  paid for 90 days); a demand CSV or a trace is a sample of usage that repeats, so its lease is
  costed per hour of the sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gpuplan.catalog import Catalog
from gpuplan.demand import Demand
from gpuplan.errors import GpuplanError
from gpuplan.models import Offer, Scenario, Workload
from gpuplan.perf import slowdown
from gpuplan.pool import Marginal, Sizing, marginal, size_pool
from gpuplan.pricing import cheapest

PINNED = frozenset({"compliance", "custom-driver"})


@dataclass(frozen=True)
class PoolPlan:
    gpu: str
    vendor: str
    bm: Offer | None
    ct: Offer | None
    reserved: int
    nodes: int
    step: int
    demand_total: np.ndarray
    demand_pool: np.ndarray
    demand_elastic: np.ndarray
    pinned_peak: float
    slowdown: float
    slowdown_elastic: float
    sizing: Sizing
    sizing_low: Sizing
    sizing_high: Sizing
    marginal: Marginal
    lease_per_gpu_hour: float
    ops_per_month: float
    lease_per_month: float
    spill_per_month: float
    elastic_per_month: float
    hybrid_per_month: float
    hybrid_low_per_month: float
    hybrid_high_per_month: float
    all_bare_metal_per_month: float
    all_container_per_month: float
    reserved_utilization: float
    spill_gpu_hours_per_month: float


@dataclass(frozen=True)
class Assignment:
    workload: Workload
    placement: str
    reason_key: str
    params: dict[str, float | str] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanResult:
    scenario: Scenario
    demand: Demand
    pools: list[PoolPlan]
    assignments: list[Assignment]
    queueing: str

    def per_month(self, attr: str) -> float:
        return float(sum(getattr(p, attr) for p in self.pools))


def _ops_fn(bm: Offer, scenario: Scenario, hours: float):  # type: ignore[no-untyped-def]
    eng = scenario.team.engineer_hour_cost or 0.0
    months = hours / 24 / scenario.days_per_month

    def ops(r: int) -> float:
        if r <= 0:
            return 0.0
        units = {"node-month": math.ceil(r / bm.gpus_per_node), "gpu-month": r, "month": 1}[bm.ops_per]
        return bm.ops_hours * units * months * eng

    return ops


def _weighted_slowdown(workloads: list[Workload], ct: Offer | None, cat: Catalog, demand: Demand) -> float:
    if ct is None:
        return 1.0
    weights, values = [], []
    for w in workloads:
        curve = demand.by_workload.get(w.id)
        weight = float(curve.sum()) if curve is not None else 1.0
        weights.append(weight)
        values.append(slowdown(w, ct, cat).total)
    if not weights or sum(weights) == 0:
        return 1.0
    return float(np.average(values, weights=weights))


@dataclass(frozen=True)
class _SizingInputs:
    demand: np.ndarray
    bm: Offer | None
    ct: Offer | None
    slowdown: float
    step: int
    ops_fn: Callable[[int], float] | None
    pinned_peak: float
    term: float


def _run(x: _SizingInputs, lease_p: float, ct_p: float) -> Sizing:
    """Size one pool at one pair of prices (containers only, bare metal only, or the hybrid optimum)."""
    peak = float(x.demand.max())
    if x.bm is None:  # containers only
        return size_pool(x.demand, lease_per_gpu_hour=0.0, container_per_gpu_hour=ct_p, slowdown=x.slowdown,
                         max_reserved=0)
    if x.ct is None:  # bare metal only: lease the peak
        r = math.ceil(peak / x.step - 1e-9) * x.step
        return size_pool(x.demand, lease_per_gpu_hour=lease_p, container_per_gpu_hour=0.0, slowdown=1.0,
                         ops_cost=x.ops_fn, step=x.step, min_reserved=r, min_term_hours=x.term, max_reserved=r)
    return size_pool(x.demand, lease_per_gpu_hour=lease_p, container_per_gpu_hour=ct_p, slowdown=x.slowdown,
                     ops_cost=x.ops_fn, step=x.step, min_reserved=x.pinned_peak, min_term_hours=x.term)


def plan_pools(scenario: Scenario, demand: Demand, cat: Catalog, queueing: str = "best-effort-fifo") -> PlanResult:
    per_month_factor = scenario.days_per_month * 24 / demand.hours
    pools: list[PoolPlan] = []
    assignments: list[Assignment] = []
    for gpu in sorted(demand.by_gpu):
        wls = [w for w in scenario.workloads if w.gpus_allowed[0] == gpu]
        bm = cheapest(scenario, gpu, "bare-metal")
        ct = cheapest(scenario, gpu, "container")
        if bm is None and ct is None:
            raise GpuplanError(f"no offer for GPU `{gpu}` in the demand", field="offers",
                               hint="add a bare-metal and a container offer for it.")
        total = demand.by_gpu[gpu]
        n = len(total)
        from_schedules = bool(demand.by_workload)
        term = bm.min_term_hours if (bm is not None and from_schedules) else 0.0
        zeros = np.zeros(n)
        elastic = sum((demand.by_workload[w.id] for w in wls if "elastic" in w.requires), zeros) if from_schedules \
            else zeros
        pinned = sum((demand.by_workload[w.id] for w in wls if w.requires & PINNED), zeros) if from_schedules \
            else zeros
        pool_demand = total - elastic
        pinned_peak = float(pinned.max()) if n else 0.0
        if bm is None and pinned_peak > 0:
            raise GpuplanError(f"work that requires bare metal needs a bare-metal offer for `{gpu}`", field="offers",
                               hint="add a bare-metal offer for that GPU.")
        if ct is None and float(elastic.max()) > 0:
            raise GpuplanError(f"elastic work needs a container offer for `{gpu}`", field="offers",
                               hint="add a container offer for that GPU.")
        sd = _weighted_slowdown([w for w in wls if "elastic" not in w.requires] or wls, ct, cat, demand)
        sd_elastic = _weighted_slowdown([w for w in wls if "elastic" in w.requires] or wls, ct, cat, demand)
        step = bm.gpus_per_node if bm is not None and bm.lease_unit == "node" else 1
        lease = bm.price_per_gpu_hour if bm is not None else None
        ct_price = ct.price_per_gpu_hour if ct is not None else None
        ops_fn = _ops_fn(bm, scenario, n) if bm is not None else None

        ctx = _SizingInputs(pool_demand, bm, ct, sd, step, ops_fn, pinned_peak, term)
        mid = _run(ctx, lease.mid if lease else 0.0, ct_price.mid if ct_price else 0.0)
        low = _run(ctx, lease.low if lease else 0.0, ct_price.low if ct_price else 0.0)
        high = _run(ctx, lease.high if lease else 0.0, ct_price.high if ct_price else 0.0)
        r = mid.reserved
        ct_mid = ct_price.mid if ct_price else 0.0
        elastic_h = float(elastic.sum())
        elastic_cost = elastic_h * ct_mid * sd_elastic
        # the parts of the optimum's cost (mid.cost = lease + ops + spill)
        lease_cost = r * (lease.mid if lease else 0.0) * (max(float(n), term) if bm else 0.0)
        ops_cost = ops_fn(r) if ops_fn else 0.0
        spill_h = float(mid.spill[int(np.searchsorted(mid.candidates, r))])
        spill_cost = spill_h * ct_mid * sd
        hybrid = mid.cost + elastic_cost
        hybrid_low = low.cost + elastic_h * (ct_price.low if ct_price else 0.0) * sd_elastic
        hybrid_high = high.cost + elastic_h * (ct_price.high if ct_price else 0.0) * sd_elastic
        peak_all = float(total.max())
        if bm is not None:
            r_all = math.ceil(peak_all / step - 1e-9) * step
            all_bm = r_all * lease.mid * max(float(n), term) + (ops_fn(r_all) if ops_fn else 0.0)
        else:
            all_bm = math.nan
        all_ct = (float(pool_demand.sum()) * sd + elastic_h * sd_elastic) * ct_mid if ct is not None else math.nan
        served = np.minimum(pool_demand, r)
        util = float(served.sum()) / (r * n) if r > 0 else 0.0
        mg = marginal(pool_demand, r, step, lease.mid if lease else 0.0, ct_mid, sd) if (bm and ct) else \
            Marginal(math.nan, math.nan, math.nan)
        spec = cat.gpus.get(gpu)
        pools.append(PoolPlan(
            gpu=gpu, vendor=spec.vendor if spec else "other", bm=bm, ct=ct, reserved=r,
            nodes=math.ceil(r / (bm.gpus_per_node if bm else 8)) if r else 0, step=step,
            demand_total=total, demand_pool=pool_demand, demand_elastic=elastic, pinned_peak=pinned_peak,
            slowdown=sd, slowdown_elastic=sd_elastic, sizing=mid, sizing_low=low, sizing_high=high, marginal=mg,
            lease_per_gpu_hour=lease.mid if lease else math.nan,
            ops_per_month=ops_cost * per_month_factor, lease_per_month=lease_cost * per_month_factor,
            spill_per_month=spill_cost * per_month_factor, elastic_per_month=elastic_cost * per_month_factor,
            hybrid_per_month=hybrid * per_month_factor, hybrid_low_per_month=hybrid_low * per_month_factor,
            hybrid_high_per_month=hybrid_high * per_month_factor,
            all_bare_metal_per_month=all_bm * per_month_factor, all_container_per_month=all_ct * per_month_factor,
            reserved_utilization=util, spill_gpu_hours_per_month=(spill_h + elastic_h) * per_month_factor,
        ))
        assignments += _assign(wls, demand, r, n, bm is not None, ct is not None)
    return PlanResult(scenario, demand, pools, assignments, queueing)


def _assign(wls: list[Workload], demand: Demand, reserved: int, n: int, has_bm: bool,
            has_ct: bool) -> list[Assignment]:
    if not demand.by_workload:
        return [Assignment(w, "split", "a_external", {"source": demand.source}) for w in wls]

    def steadiness(w: Workload) -> float:
        return float(np.count_nonzero(demand.by_workload[w.id])) / n

    order = sorted((w for w in wls if "elastic" not in w.requires),
                   key=lambda w: (not (w.requires & PINNED), -steadiness(w), w.id))
    left = np.full(n, float(reserved))
    out: dict[str, Assignment] = {}
    for w in order:
        curve = demand.by_workload[w.id]
        got = np.minimum(curve, left)
        left = left - got
        total = float(curve.sum())
        share = float(got.sum()) / total if total > 0 else 0.0
        if w.requires & PINNED:
            out[w.id] = Assignment(w, "bare-metal", "a_pinned", {"req": ",".join(sorted(w.requires & PINNED))})
        elif share >= 0.99:
            out[w.id] = Assignment(w, "bare-metal", "a_pool", {"share": share, "steady": steadiness(w)})
        elif share <= 0.01:
            key = "a_spill" if has_bm else "a_no_bm"
            out[w.id] = Assignment(w, "container", key, {"share": share, "steady": steadiness(w)})
        else:
            out[w.id] = Assignment(w, "split", "a_split", {"share": share, "steady": steadiness(w)})
    for w in wls:
        if "elastic" in w.requires:
            out[w.id] = Assignment(w, "container", "a_elastic", {})
    return [out[w.id] for w in wls]

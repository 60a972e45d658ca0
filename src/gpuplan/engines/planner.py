"""The portfolio plan: per GPU type, how many cards to lease and what spills to containers.

Per GPU type (a workload's first GPU):
- pool demand = workloads that may use the pool (all but `elastic` ones); pinned demand = those that
  require bare metal (`compliance`, `custom-driver`), so R >= their peak;
- R* = `pool.size_pool` over every candidate R (whole nodes when the bare-metal offer leases nodes);
- the pool's bare-metal and container offers are each mode's cheapest per dedicated GPU-hour of the pool's
  work (mid price x that work's slowdown there, `pricing.cheapest`): a cheap lease on 10 GbE loses to a
  dearer one on InfiniBand when it runs the work more than its discount slower;
- every offer runs the work at its own slowdown against ideal dedicated bare metal with a full fabric
  (`models.perf`, as `compare` times it): s_b on the bare-metal offer, s_c on the container one, each the
  GPU-hour-weighted `pricing.pool_slowdown` of the pool's (non-elastic) work, rework after interruptions
  included (compare's GPU-hours used over the scheduled ones on that offer: compare bills rework on bare
  metal too). The leased cards hold the work at its width (a job of g GPUs takes g cards) and run it
  s_b times as long: the s_b - 1 extra card-hours of every dedicated GPU-hour they serve are lease
  overtime, paid at the lease's price and ops per card-hour (the cards held longer, as `compare` stretches
  a bare-metal lease by the slowdown). With served(R) = sum_t min(d_t, R) and spill(R) = sum_t max(0, d_t - R):
      cost(R) = lease(R) + ops(R) + (s_b - 1) x served(R) x (lease price + ops per card-hour)
                + spill(R) x s_c x (container price + ops)
  so a dedicated GPU-hour costs s_b x the lease per card-hour on busy cards and s_c x the container's in
  containers (s_c / s_b container GPU-hours a leased-card GPU-hour), and no s_b moves R by a jump: cards
  are never added for the stretch itself (s_b = 1: the plan before issue 24);
- money comes from `gpuplan.models.tariff` (the one money model compare and simulate use too): the lease is
  billed in whole nodes when leased by the node, ops per whole node over the lease, spill at the
  container price (and ops) x s_c, as above;
- elastic demand always runs in containers;
- assignments: each hour the pool serves pinned work first, then workloads by steadiness (share of
  the horizon they run, highest first: core training before experiments); a workload served >= 99%
  by the pool is `bare-metal` (the leased cards cover its peak), <= 1% `container` (no leased card
  for it), else `split`. With a demand CSV the per-GPU demand is shared among that GPU's workloads in
  proportion to their `gpus` (one workload: all of it); a workload kept on its own schedule (no rows
  in the CSV for its GPU) has its own curve;
- all-bare-metal leases the peak of all demand and pays (s_b - 1) x its GPU-hours as lease overtime;
  all-container runs everything in containers at s_c (both for comparison, ignoring hard rules);
- schedules are a project: the lease runs from hand-over (setup) to the end of the pool's longest
  schedule, at least its min_term (a 90-day term for 30 days of work is paid for 90 days), and one-off
  setup labour is paid once for the pool and once per workload that runs in containers; per month
  divides by the horizon, the longest schedule and at least one month (as `compare` does);
- a demand CSV or a trace is a sample of usage that repeats: the lease runs for the sample's calendar
  span with no term and no setup, and per month divides by that span (as `simulate` does);
- three tiers (issue 26): with a spot offer for the GPU, tolerant work runs on spot (`placement: spot`)
  and leaves the pool's demand. Tolerant: not pinned to bare metal, not `no-preemption`, not `elastic`
  (autoscaled work keeps its container tier), not inference (serving keeps capacity that stays), and
  spot finishes it (`models.preemption`). It goes to spot when a GPU-hour of its work costs less there,
  lost work included, than in on-demand containers and than a fully used leased card:
      m_spot x (spot price + ops) < min(m_ct x (container price + ops), m_bm x lease price per GPU-hour)
  with m = compare's GPU-hours used on that offer over the workload's scheduled GPU-hours (slowdown,
  interruptions and, on spot, the work reclaims throw away; m_bm on the bare-metal offer: the lease's
  price per dedicated GPU-hour of that work). The spot tier S is the spot work's peak
  in whole spot instances; it costs its work's GPU-hours x m_spot at the spot tariff.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from gpuplan.constants import DEFAULT_QUEUEING
from gpuplan.engines.alternatives import GpuChoice, candidates, choose, on_gpu
from gpuplan.engines.cost import option_cost
from gpuplan.engines.pool import Marginal, Sizing, marginal, size_pool, spill_curve
from gpuplan.engines.pricing import cheapest, cheapest_spot, pool_slowdown
from gpuplan.errors import GpuplanError
from gpuplan.inputs.calendar import active_days
from gpuplan.inputs.catalog import Catalog
from gpuplan.inputs.demand import HORIZON_START, Demand, from_schedules, workload_curve
from gpuplan.inputs.demand import horizon_hours as demand_horizon
from gpuplan.inputs.scenario_types import Offer, Scenario, Workload
from gpuplan.models.tariff import PricePoint, Tariff, horizon_hours, nodes_for, pool_bill, pool_costs

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
    slowdown: float  # s_c: the container slowdown of the pool's work
    slowdown_elastic: float
    sizing: Sizing
    sizing_low: Sizing
    sizing_high: Sizing
    marginal: Marginal
    lease_per_gpu_hour: float
    lease_hours: float  # paid hours of the lease over the demand's horizon
    horizon_hours: float  # calendar hours the per-month figures divide by
    ops_per_month: float
    lease_per_month: float
    spill_per_month: float
    elastic_per_month: float
    setup_per_month: float  # one-off setup labour (schedules only), spread over the horizon
    hybrid_per_month: float
    hybrid_low_per_month: float
    hybrid_high_per_month: float
    all_bare_metal_per_month: float
    all_container_per_month: float
    reserved_utilization: float
    spill_gpu_hours_per_month: float  # dedicated GPU-hours in containers a month: spill and elastic
    elastic_gpu_hours_per_month: float
    lease_days_per_month: float  # paid lease days in a month of the horizon (a term or setup can make it > a month)
    container_per_gpu_hour: float  # what a container GPU-hour costs: price + ops (mid)
    curve_per_month: np.ndarray  # the hybrid cost per month for each candidate R (sizing.candidates)
    curve_low_per_month: np.ndarray | None  # at the low / high prices, when sized over the same candidates
    curve_high_per_month: np.ndarray | None
    committed_cards: int = 0  # cards already signed (`commitments:`), used first
    committed_hours: int = 0  # hours from the start they run
    committed_per_month: float = 0.0  # what they still cost (ops; rental where unpaid), in `hybrid`
    spot: SpotTier | None = None  # the pool's spot tier (issue 26), when a spot offer takes work
    power_per_month: float = 0.0  # owned servers: power above the idle draw while serving, in `hybrid`
    slowdown_bare_metal: float = 1.0  # s_b: the pool's work on the bare-metal offer
    overtime_per_month: float = 0.0  # lease overtime: (s_b - 1) x the served GPU-hours, in `hybrid`
    overtime_per_gpu_hour: float = 0.0  # a card-hour of overtime: the lease's price + ops per card-hour (mid)
    bare_metal_gpu_hours_per_month: float = 0.0  # card-hours the leased cards run the work: served x s_b


@dataclass(frozen=True)
class SpotTier:
    """Tolerant work on spot capacity: the offer, its size and what it costs and loses a month."""

    offer: Offer
    gpus: int  # S: the spot work's peak in whole instances
    per_month: float
    low_per_month: float
    high_per_month: float
    gpu_hours_per_month: float  # GPU-hours run on spot, lost work included
    lost_gpu_hours_per_month: float
    preemptions_per_month: float
    workloads: tuple[str, ...]
    factors: dict[str, float]  # m_spot / m_ct (or the lease's) per workload: for the reasons


@dataclass(frozen=True)
class Assignment:
    workload: Workload
    placement: str
    reason_key: str
    params: dict[str, float | str] = field(default_factory=dict)
    choice: GpuChoice | None = None  # why this GPU, when the workload lists several (`engines.alternatives`)


@dataclass(frozen=True)
class Project:
    """One-off work (`once: true`) and how it runs: `pool` (the standing pool's spare cards cover it
    in every hour it runs, at no new cost), `lease` (a bare-metal offer for its own term) or
    `containers`; `cost` is its whole cost (money, not per month), as `compare` prices that option."""

    workload: Workload
    gpu: str
    choice: str  # pool | lease | containers
    offer: str | None
    start_hours: float
    months: float
    cost: float
    options: tuple[tuple[str, str, float], ...]  # (choice, offer, cost) of every option priced


@dataclass(frozen=True)
class PlanResult:
    scenario: Scenario
    demand: Demand
    pools: list[PoolPlan]
    assignments: list[Assignment]
    queueing: str
    projects: list[Project] = field(default_factory=list)  # one-off work (`once: true`), outside the pools

    def per_month(self, attr: str) -> float:
        return float(sum(getattr(p, attr) for p in self.pools))


def _lease_work_hours(wls: list[Workload], demand: Demand) -> float:
    """Hours the pool's work lasts: to the end of its longest schedule, or the sample's whole span."""
    if demand.project:
        pool = [w for w in wls if "elastic" not in w.requires] or wls
        return max((w.end_hours for w in pool), default=float(demand.hours))
    return demand.calendar_hours


@dataclass(frozen=True)
class _Pricing:
    """One pool's money: the tariffs, how long a lease runs, and the container slowdowns."""

    lease: Tariff | None
    container: Tariff | None
    lease_hours: float
    slowdown: float  # s_c: container GPU-hours per dedicated GPU-hour of spill
    slowdown_elastic: float
    project: bool  # schedules (one-off setup and min term apply) or a repeating sample
    committed: int = 0  # cards already signed (`commitments:`), serving first
    committed_hours: int = 0  # hours from the start they run (to the earliest `until`)
    committed_cost: float = 0.0  # what they still cost over the horizon (ops; rental where unpaid)
    demand: np.ndarray | None = None  # the pool's hourly demand (for the spill beside signed cards)
    lead: int = 0  # owned servers: hours before delivery, when the pool has none of its cards
    stretch: float = 0.0  # s_b - 1: lease overtime per dedicated GPU-hour the cards serve
    work: float = 0.0  # the pool's dedicated GPU-hours (served(R) = work - spill(R))

    def overtime(self, rs: np.ndarray, spill: np.ndarray) -> np.ndarray:
        """Card-hours of lease overtime at each R: (s_b - 1) x the dedicated GPU-hours the cards serve
        (signed cards included; none before an owned server's delivery, when the work spills)."""
        if self.lease is None or self.stretch <= 0:
            return np.zeros(len(rs))
        return self.stretch * np.maximum(self.work - self.spill(rs, spill), 0.0)

    def overtime_rate(self, point: PricePoint) -> float:
        """A leased card's price per hour plus its ops per card-hour (ops per node spread over its cards,
        as the container ops are; a flat monthly ops fee adds none)."""
        if self.lease is None:
            return 0.0
        return self.lease.unit_price(point) + self.lease.ops_per_gpu_hour

    def spill(self, rs: np.ndarray, spill: np.ndarray) -> np.ndarray:
        """GPU-hours above the cards at each R: with C signed cards until U, the pool holds max(R, C)
        cards before U (the first C new cards start when the signed ones end) and R after:
        sum_{t<U} max(0, d_t - max(R, C)) + sum_{t>=U} max(0, d_t - R).
        Owned servers ordered with a lead time L hold no card before L: the work of those hours runs
        in containers, sum_{t<L} d_t + sum_{t>=L} max(0, d_t - R)."""
        if self.lead and not self.committed and self.demand is not None:
            r = np.asarray(rs, dtype=np.float64)
            after = spill_curve(self.demand[self.lead:], r) if self.lead < len(self.demand) else 0.0
            return np.asarray(float(self.demand[:self.lead].sum()) + after, dtype=np.float64) * np.ones(len(r))
        if not self.committed or self.demand is None:
            return spill
        u, c = self.committed_hours, float(self.committed)
        r = np.asarray(rs, dtype=np.float64)
        before = spill_curve(self.demand[:u], np.maximum(r, c)) if u > 0 else 0.0
        after = spill_curve(self.demand[u:], r) if u < len(self.demand) else 0.0
        return np.asarray(before + after, dtype=np.float64) * np.ones(len(r))

    def curve(self, rs: np.ndarray, spill: np.ndarray, point: PricePoint) -> np.ndarray:
        """Pool cost for each R: the tariff's lease + ops + spill, plus the lease's setup when R > 0.
        With signed cards: min(R, C) new cards are leased from U only, max(R - C, 0) for the whole
        lease, and the signed cards' remaining cost is added at every R."""
        if self.committed and self.lease is not None:
            r = np.asarray(rs, dtype=np.int64)
            late = np.minimum(r, self.committed)
            costs = pool_costs(self.lease, self.container, r - late, self.lease_hours,
                               self.spill(rs, spill) * self.slowdown, point) \
                + pool_costs(self.lease, None, late, max(self.lease_hours - self.committed_hours, 0.0),
                             np.zeros(len(r)), point) + self.committed_cost
        else:
            costs = pool_costs(self.lease, self.container, rs, self.lease_hours,
                               self.spill(rs, spill) * self.slowdown, point)
        if self.lease is not None and self.lease.busy_extra_per_gpu_hour and self.demand is not None:
            served = float(self.demand.sum()) - self.spill(rs, spill)
            costs = costs + self.lease.busy_cost(served * (1 + self.stretch))  # served, for s_b x its hours
        costs = costs + self.overtime(rs, spill) * self.overtime_rate(point)
        if self.project and self.lease is not None:
            costs = costs + np.where(rs > 0, self.lease.setup_cost, 0.0)
        return costs

    def bill(self, r: int, spill: float) -> tuple[float, float, float, float, float, float]:
        """(lease, ops, containers, container GPU-hours, owned servers' busy power, lease overtime) of the
        new cards at size R, mid prices."""
        if self.committed and self.lease is not None:
            late = min(r, self.committed)
            full = pool_bill(self.lease, self.container, r - late, self.lease_hours, spill * self.slowdown, "mid")
            part = pool_bill(self.lease, None, late, max(self.lease_hours - self.committed_hours, 0.0), 0.0, "mid")
            over = float(self.stretch * max(self.work - spill, 0.0)) * self.overtime_rate("mid")
            return full.lease + part.lease, full.ops + part.ops, full.burst, full.container_gpu_hours, 0.0, over
        if self.lead and self.demand is not None:  # owned servers on order: the early hours spill
            spill = float(self.spill(np.array([r]), np.array([spill]))[0])
        b = pool_bill(self.lease, self.container, r, self.lease_hours, spill * self.slowdown, "mid")
        busy = 0.0
        if self.lease is not None and self.lease.busy_extra_per_gpu_hour and self.demand is not None:
            busy = self.lease.busy_cost((float(self.demand.sum()) - spill) * (1 + self.stretch))  # owned: power
        over = float(self.stretch * max(self.work - spill, 0.0)) * self.overtime_rate("mid") \
            if self.lease is not None else 0.0
        return b.lease, b.ops, b.burst, b.container_gpu_hours, busy, over

    def elastic(self, gpu_hours: float, point: PricePoint) -> float:
        if self.container is None or gpu_hours <= 0:
            return 0.0
        return self.container.container_cost(gpu_hours * self.slowdown_elastic, point)


def _run(demand: np.ndarray, pr: _Pricing, step: int, pinned_peak: float, point: PricePoint) -> Sizing:
    """Size one pool at one price point (containers only, bare metal only, or the hybrid optimum)."""
    peak = float(demand.max())

    def cost(rs: np.ndarray, spill: np.ndarray) -> np.ndarray:
        return pr.curve(rs, spill, point)

    if pr.lease is None:  # containers only
        return size_pool(demand, cost_of=cost, max_reserved=0)
    if pr.container is None:  # bare metal only: lease the peak
        r = math.ceil(peak / step - 1e-9) * step
        return size_pool(demand, cost_of=cost, step=step, min_reserved=r, max_reserved=r)
    return size_pool(demand, cost_of=cost, step=step, min_reserved=pinned_peak)


def plan_pools(scenario: Scenario, demand: Demand, cat: Catalog,
               queueing: str = DEFAULT_QUEUEING) -> PlanResult:
    project = demand.project
    dpm = scenario.days_per_month
    # per month divides by the calendar time of the demand (see gpuplan.models.tariff)
    standing = [w for w in scenario.workloads if not w.once]
    horizon = horizon_hours([w.end_hours for w in standing or scenario.workloads], dpm) if project \
        else demand.calendar_hours
    wls_all = standing
    choices: dict[str, GpuChoice] = {}
    if demand.source == "schedules" and any(len(w.gpus_allowed) > 1 for w in wls_all):
        wls_all, choices = choose_gpus(replace(scenario, workloads=tuple(wls_all)), cat, horizon=horizon)
        demand = from_schedules(wls_all)
    pools: list[PoolPlan] = []
    assignments: list[Assignment] = []
    for gpu in sorted(demand.by_gpu):
        wls = [w for w in wls_all if w.gpus_allowed[0] == gpu]
        pool, pa = _pool(scenario, gpu, wls, demand, cat, horizon)
        pools.append(pool)
        assignments += pa
    if choices:
        assignments = [replace(a, choice=choices.get(a.workload.id)) for a in assignments]
    projects = [_project(w, scenario, cat, pools) for w in scenario.workloads if w.once]
    return PlanResult(scenario, demand, pools, assignments, queueing, projects)


def project_gpu(w: Workload, scenario: Scenario, cat: Catalog, *, need_container: bool = False) -> Workload:
    """One-off work on the listed GPU of its cheapest feasible offer (`engines.cost.option_cost`), re-expressed
    there (`alternatives.on_gpu`); `commit` places it so (with no standing pool to share)."""
    from gpuplan.engines.advise import feasibility
    from gpuplan.engines.cost import option_cost

    best: tuple[float, int, str] | None = None
    for i, gpu in enumerate(candidates(w, scenario, cat, need_container=need_container)):
        for o in scenario.offers:
            if o.gpu == gpu and feasibility(w, o, cat) is None:
                x = (option_cost(w, o, scenario, cat).total_mid, i, gpu)
                best = x if best is None or x < best else best
    return on_gpu(w, best[2], cat) if best is not None else w


def _project(w: Workload, scenario: Scenario, cat: Catalog, pools: list[PoolPlan]) -> Project:
    """How one-off work runs (see `Project`): the cheapest of the standing pools' spare cards (where they
    cover its demand in every hour it runs, through the lease), and every feasible offer of its listed
    GPUs priced by `engines.cost.option_cost` (compare's money for its own dates and duration)."""
    from gpuplan.engines.advise import feasibility
    from gpuplan.engines.cost import option_cost

    options: list[tuple[str, str, float, str]] = []  # (choice, offer, cost, gpu)
    for gpu in candidates(w, scenario, cat):
        moved = on_gpu(w, gpu, cat)
        pool = next((p for p in pools if p.gpu == gpu and p.reserved > 0), None)
        if pool is not None and "elastic" not in w.requires:
            n = len(pool.demand_pool)
            own = workload_curve(moved, n)
            inside = moved.end_hours <= min(n, pool.lease_hours + 1e-9)
            if inside and bool(np.all(own <= pool.reserved - np.minimum(pool.demand_pool, pool.reserved) + 1e-9)):
                options.append(("pool", pool.bm.id if pool.bm else "", 0.0, gpu))
        for o in scenario.offers:
            if o.gpu != gpu or feasibility(w, o, cat) is not None:
                continue
            c = option_cost(w, o, scenario, cat)
            options.append(("lease" if o.mode == "bare-metal" else "containers", o.id, c.total_mid, gpu))
    if not options:
        raise GpuplanError(f"no offer can run the one-off work `{w.id}`", field="offers",
                           hint="add an offer for one of its GPUs that its rules allow.")
    rank = {"pool": 0, "lease": 1, "containers": 2}
    best = min(options, key=lambda x: (x[2], rank[x[0]], x[1]))
    months = w.duration_hours / (scenario.days_per_month * 24)
    return Project(w, best[3], best[0], best[1] or None, w.start_hours, months, best[2],
                   tuple((c, o, x) for c, o, x, _g in options))


def choose_gpus(scenario: Scenario, cat: Catalog, *, need_container: bool = False,
                horizon: float | None = None) -> tuple[list[Workload], dict[str, GpuChoice]]:
    """Each workload's GPU among its listed ones, jointly with the pool sizes (`engines.alternatives`):
    the pool cost is this planner's optimum hybrid cost per month of the GPU's pool. `commit` takes
    the same choice (`need_container`: only GPUs with a container offer)."""
    wls = list(scenario.workloads)
    if horizon is None:
        horizon = horizon_hours([w.duration_hours for w in wls], scenario.days_per_month)
    # one horizon for every assignment: the longest schedule on any candidate GPU
    conv = [on_gpu(w, g, cat) for w in wls for g in candidates(w, scenario, cat, need_container=need_container)]
    n = demand_horizon(conv)

    def cost_of(gpu: str, members: tuple[Workload, ...]) -> float:
        curves = {w.id: workload_curve(w, n) for w in members}
        total = sum(curves.values(), np.zeros(n))
        dem = Demand(HORIZON_START, n, {gpu: total}, curves, "schedules")
        return _pool(scenario, gpu, list(members), dem, cat, horizon)[0].hybrid_per_month

    return choose(wls, scenario, cat, cost_of, need_container=need_container)


def _pool(scenario: Scenario, gpu: str, wls: list[Workload], demand: Demand, cat: Catalog,
          horizon: float) -> tuple[PoolPlan, list[Assignment]]:
    """One GPU type's pool: its sizing at the three price points, its money and its assignments."""
    project = demand.project
    dpm = scenario.days_per_month
    weights = {w.id: float(c.sum()) for w, c in ((w, demand.by_workload.get(w.id)) for w in wls)
               if c is not None} if project else None
    pool_wls = [w for w in wls if "elastic" not in w.requires] or wls
    bm = cheapest(scenario, gpu, "bare-metal", pool_wls, cat, weights)  # per dedicated GPU-hour of this work
    ct = cheapest(scenario, gpu, "container", pool_wls, cat, weights)
    if bm is None and ct is None:
        raise GpuplanError(f"no offer for GPU `{gpu}` in the demand", field="offers",
                           hint="add a bare-metal and a container offer for it.")
    total = demand.by_gpu[gpu]
    n = len(total)
    zeros = np.zeros(n)
    own = demand.by_workload  # every workload's curve with schedules; the kept ones with a CSV
    elastic = sum((own[w.id] for w in wls if "elastic" in w.requires and w.id in own), zeros)
    pinned = sum((own[w.id] for w in wls if w.requires & PINNED and w.id in own), zeros)
    spot_offer = cheapest_spot(scenario, gpu)
    spot_m = _spot_choice(wls, spot_offer, bm, ct, scenario, cat) if spot_offer is not None else {}
    curves_all = _curves(wls, demand, total) if spot_m else {}
    spot_demand = sum((curves_all[i] for i in spot_m), zeros)
    pool_demand = np.maximum(total - elastic - spot_demand, 0.0) if spot_m else total - elastic
    pinned_peak = float(pinned.max()) if n else 0.0
    if bm is None and pinned_peak > 0:
        raise GpuplanError(f"work that requires bare metal needs a bare-metal offer for `{gpu}`", field="offers",
                           hint="add a bare-metal offer for that GPU.")
    if ct is None and float(elastic.max()) > 0:
        raise GpuplanError(f"elastic work needs a container offer for `{gpu}`", field="offers",
                           hint="add a container offer for that GPU.")
    sd = pool_slowdown(pool_wls, gpu, ct, cat, weights)
    s_b = pool_slowdown(pool_wls, gpu, bm, cat, weights)  # the same work on the lease (1.0 without one)
    elastic_wls = [w for w in wls if "elastic" in w.requires]
    sd_elastic = pool_slowdown(elastic_wls or wls, gpu, ct, cat, weights)
    lease = Tariff.of(bm, scenario) if bm is not None else None
    container = Tariff.of(ct, scenario) if ct is not None else None
    step = lease.step if lease is not None else 1
    work_hours = _lease_work_hours(wls, demand)
    lease_hours = lease.lease_hours(work_hours, project=project) if lease is not None else 0.0
    signed, signed_hours, signed_cost = _signed(scenario, gpu, n, lease_hours) if lease is not None else (0, 0, 0.0)
    # owned servers (issue 28): paid from delivery, the work before it spills to containers (schedules only:
    # a repeating sample has no first hour to wait from); their busy power needs the served GPU-hours
    lead = min(int(math.ceil(lease.lead_hours)), n) if (lease is not None and project and not signed) else 0
    lease_hours = max(lease_hours - lead, 0.0)
    owned = lease is not None and lease.busy_extra_per_gpu_hour > 0
    pr = _Pricing(lease, container, lease_hours, sd, sd_elastic, project, signed, signed_hours, signed_cost,
                  pool_demand if (signed or lead or owned) else None, lead, s_b - 1.0, float(pool_demand.sum()))

    mid, low, high = (_run(pool_demand, pr, step, pinned_peak, point) for point in ("mid", "low", "high"))
    if signed or lead:  # the spill beside the signed cards or before delivery (reports and waiting read it)
        mid, low, high = (replace(x, spill=pr.spill(x.candidates, x.spill)) for x in (mid, low, high))
    r = mid.reserved
    elastic_h = float(elastic.sum())
    elastic_cost = pr.elastic(elastic_h, "mid")
    spill_r = float(mid.spill[int(np.searchsorted(mid.candidates, r))])
    b_lease, b_ops, b_burst, b_ct_hours, b_power, b_over = pr.bill(r, spill_r)
    setup_pool = lease.setup_cost if (project and lease is not None and r > 0) else 0.0
    spill_h = b_ct_hours / sd if sd else 0.0
    own_curves = _curves(wls, demand, total)
    on_pool = [w for w in wls if w.id not in spot_m]
    pa = _assign(on_pool, own_curves, r, n, bm is not None, ct is not None)
    if spot_m:
        placed = {a.workload.id: a for a in pa}
        placed.update({w.id: Assignment(w, "spot", "a_spot", {"share": 0.0, "factor": spot_m[w.id][0],
                                                              "lost": spot_m[w.id][1]})
                       for w in wls if w.id in spot_m})
        pa = [placed[w.id] for w in wls]
    # one-off container setup: each workload of a schedule that runs (partly) in containers
    ct_setup = container.setup_cost if (project and container is not None) else 0.0
    setups_hybrid = ct_setup * sum(1 for a in pa if a.placement != "bare-metal")
    setups_all_ct = ct_setup * len(wls)
    tier = _spot_tier(spot_offer, spot_m, curves_all, scenario, horizon, dpm) if spot_offer and spot_m else None
    to_total = horizon / (dpm * 24.0)  # the tier is priced per month: back to the horizon's total
    tier_mid, tier_low, tier_high = (tier.per_month * to_total, tier.low_per_month * to_total,
                                     tier.high_per_month * to_total) if tier else (0.0, 0.0, 0.0)
    hybrid = mid.cost + elastic_cost + setups_hybrid + tier_mid
    hybrid_low = low.cost + pr.elastic(elastic_h, "low") + setups_hybrid + tier_low
    hybrid_high = high.cost + pr.elastic(elastic_h, "high") + setups_hybrid + tier_high
    peak_all = float(total.max())
    if lease is not None:
        r_all = math.ceil(peak_all / step - 1e-9) * step
        all_bm = pool_bill(lease, None, r_all, lease_hours, 0.0, "mid").total + \
            (lease.setup_cost if project else 0.0) + lease.busy_cost(float(pool_demand[lead:].sum()) * s_b) + \
            (s_b - 1.0) * float(total.sum()) * pr.overtime_rate("mid")  # the stretch as lease overtime
    else:
        all_bm = math.nan
    if container is not None:
        all_ct_h = float(pool_demand.sum() + spot_demand.sum()) * sd + elastic_h * sd_elastic
        all_ct = container.container_cost(all_ct_h) + setups_all_ct
    else:
        all_ct = math.nan
    served = np.minimum(pool_demand, r)
    util = float(served.sum()) / (r * n) if r > 0 else 0.0
    lease_p = lease.unit_price() if lease else math.nan
    mg = marginal(pool_demand, r, step, lease_p, container.container_cost(1.0), sd) \
        if (lease and container) else Marginal(math.nan, math.nan, math.nan)
    if lease and container and s_b > 1.0:  # a busy card saves s_c container GPU-hours, pays s_b - 1 of overtime
        saved = container.container_cost(1.0) * sd - (s_b - 1.0) * pr.overtime_rate("mid")
        mg = replace(mg, ratio=lease_p / saved if saved > 0 else math.inf)
    f = dpm * 24.0 / horizon

    def setups_at(s: Sizing, ct_setup: float = ct_setup, wls: list[Workload] = wls,
                  own: dict[str, np.ndarray] = own_curves, n: int = n) -> np.ndarray | float:
        return ct_setup * _in_containers(wls, own, s.candidates, n) if ct_setup > 0 else 0.0

    def curve(s: Sizing, point: PricePoint, setups: float | np.ndarray, pr: _Pricing = pr, eh: float = elastic_h,
              f: float = f) -> np.ndarray:
        return (s.costs + pr.elastic(eh, point) + setups) * f

    same = len(low.candidates) == len(mid.candidates) == len(high.candidates)
    spec = cat.gpus.get(gpu)
    pool = PoolPlan(
        gpu=gpu, vendor=spec.vendor if spec else "other", bm=bm, ct=ct, reserved=r,
        nodes=nodes_for(r, bm.gpus_per_node if bm else 8), step=step,
        demand_total=total, demand_pool=pool_demand, demand_elastic=elastic, pinned_peak=pinned_peak,
        slowdown=sd, slowdown_elastic=sd_elastic, sizing=mid, sizing_low=low, sizing_high=high, marginal=mg,
        lease_per_gpu_hour=lease_p, lease_hours=lease_hours, horizon_hours=horizon,
        ops_per_month=b_ops * f, lease_per_month=b_lease * f,
        spill_per_month=b_burst * f, elastic_per_month=elastic_cost * f,
        setup_per_month=(setup_pool + setups_hybrid) * f,
        hybrid_per_month=hybrid * f, hybrid_low_per_month=hybrid_low * f,
        hybrid_high_per_month=hybrid_high * f,
        all_bare_metal_per_month=all_bm * f, all_container_per_month=all_ct * f,
        reserved_utilization=util, spill_gpu_hours_per_month=(spill_h + elastic_h) * f,
        elastic_gpu_hours_per_month=elastic_h * f, lease_days_per_month=lease_hours / 24 * f,
        container_per_gpu_hour=container.container_cost(1.0) if container else math.nan,
        curve_per_month=curve(mid, "mid", setups_at(mid)),
        curve_low_per_month=curve(low, "low", setups_at(low))
        if same else None,
        curve_high_per_month=curve(high, "high", setups_at(high))
        if same else None,
        committed_cards=signed, committed_hours=signed_hours, committed_per_month=signed_cost * f,
        spot=tier,
        power_per_month=b_power * f,
        slowdown_bare_metal=s_b, overtime_per_month=b_over * f, overtime_per_gpu_hour=pr.overtime_rate("mid"),
        bare_metal_gpu_hours_per_month=(float(pool_demand.sum()) - spill_r) * s_b * f if lease is not None else 0.0,
    )
    return pool, pa


def _signed(scenario: Scenario, gpu: str, n: int, lease_hours: float) -> tuple[int, int, float]:
    """Cards already signed for `gpu` (`commitments:`): how many, for how many hours from the start
    (the earliest `until` when there are several), and what they still cost over the horizon: their
    offer's ops over the hours they run, plus the rental where `paid: false`."""
    mine = [c for c in scenario.commitments if scenario.offer(c.offer).gpu == gpu]
    if not mine:
        return 0, 0, 0.0
    cost = 0.0
    for c in mine:
        tariff = Tariff.of(scenario.offer(c.offer), scenario)
        hours = min(c.until_hours, float(n))
        cost += tariff.lease_ops(c.cards, hours) + (0.0 if c.paid else tariff.lease_rental(c.cards, hours))
    return sum(c.cards for c in mine), int(min(min(c.until_hours for c in mine), n)), cost


def _used_per_scheduled(w: Workload, offer: Offer, scenario: Scenario,
                        cat: Catalog) -> tuple[float, float, float, bool]:
    """Per scheduled GPU-hour of the workload: compare's GPU-hours used on `offer` (m) and, on spot, the
    expected reclaims; the share of the used GPU-hours reclaims throw away; whether spot finishes it."""
    c = option_cost(w, offer, scenario, cat)
    scheduled = w.gpus * w.hours_per_day * active_days(w.duration_hours, w.days_per_week)
    m = c.gpu_hours_used / scheduled if scheduled > 0 else 1.0
    lw = c.preemption
    lost = lw.lost_hours / lw.expected_hours if lw is not None and lw.expected_hours > 0 else 0.0
    n = lw.preemptions / scheduled if lw is not None and scheduled > 0 else 0.0
    return m, lost, n, lw is None or lw.finishes


def _spot_choice(wls: list[Workload], spot: Offer, bm: Offer | None, ct: Offer | None, scenario: Scenario,
                 cat: Catalog) -> dict[str, tuple[float, float, float, float]]:
    """The tolerant workloads spot runs cheapest (module docstring): id -> (its cost per GPU-hour of work
    on spot over the best alternative's, lost share, m_spot, reclaims per scheduled GPU-hour)."""
    spot_t = Tariff.of(spot, scenario)
    ct_t = Tariff.of(ct, scenario) if ct is not None else None
    lease_p = Tariff.of(bm, scenario).unit_price() if bm is not None else math.inf  # per card-hour
    out: dict[str, tuple[float, float, float, float]] = {}
    for w in wls:
        if w.requires & (PINNED | {"no-preemption", "elastic"}) or w.kind == "inference":
            continue
        m, lost, n, finishes = _used_per_scheduled(w, spot, scenario, cat)
        if not finishes:
            continue
        here = m * spot_t.container_cost(1.0)
        on_demand = _used_per_scheduled(w, ct, scenario, cat)[0] * ct_t.container_cost(1.0) \
            if ct is not None and ct_t is not None else math.inf
        # the lease per GPU-hour of this work: x m_bm (compare's GPU-hours used there per scheduled one)
        on_lease = _used_per_scheduled(w, bm, scenario, cat)[0] * lease_p if bm is not None else math.inf
        best = min(on_demand, on_lease)
        if here < best:
            out[w.id] = (here / best, lost, m, n)
    return out


def _spot_tier(spot: Offer, chosen: dict[str, tuple[float, float, float, float]], curves: dict[str, np.ndarray],
               scenario: Scenario, horizon: float, dpm: float) -> SpotTier:
    t = Tariff.of(spot, scenario)
    demand = sum((curves[i] for i in chosen), np.zeros(len(next(iter(curves.values())))))
    peak = float(demand.max()) if len(demand) else 0.0
    gpn = spot.gpus_per_node
    used = sum(float(curves[i].sum()) * chosen[i][2] for i in chosen)
    lost = sum(float(curves[i].sum()) * chosen[i][2] * chosen[i][1] for i in chosen)
    f = dpm * 24.0 / horizon
    reclaims = sum(float(curves[i].sum()) * chosen[i][3] for i in chosen)  # compare's expected count, per work
    return SpotTier(
        offer=spot, gpus=math.ceil(peak / gpn - 1e-9) * gpn,
        per_month=float(t.container_cost(used)) * f, low_per_month=float(t.container_cost(used, "low")) * f,
        high_per_month=float(t.container_cost(used, "high")) * f, gpu_hours_per_month=used * f,
        lost_gpu_hours_per_month=lost * f, preemptions_per_month=reclaims * f,
        workloads=tuple(chosen), factors={i: v[0] for i, v in chosen.items()})


def _curves(wls: list[Workload], demand: Demand, total: np.ndarray) -> dict[str, np.ndarray]:
    """Each workload's hourly demand: its own curve when it has one (schedules, or kept on its
    schedule), else a share of the measured demand of its GPU in proportion to its `gpus`."""
    own = {w.id: demand.by_workload[w.id] for w in wls if w.id in demand.by_workload}
    measured = [w for w in wls if w.id not in own]
    if measured:
        rest = np.maximum(total - sum(own.values(), np.zeros(len(total))), 0.0)
        size = sum(w.gpus for w in measured)
        for w in measured:
            own[w.id] = rest * (w.gpus / size)
    return own


def _in_containers(wls: list[Workload], curves: dict[str, np.ndarray], rs: np.ndarray, n: int) -> np.ndarray:
    """For each pool size R: how many workloads run (partly) in containers, as `_assign` places them
    (elastic work always; the rest in its order while the pool serves < 99% of its GPU-hours). Each
    pays the container setup once, so the cost curve adds the setups of each size, not the optimum's."""
    if not len(rs):
        return np.zeros(0)
    if len(rs) * n > 4_000_000:  # bounded memory: sizes in chunks
        k = max(1, 4_000_000 // max(n, 1))
        return np.concatenate([_in_containers(wls, curves, rs[i:i + k], n) for i in range(0, len(rs), k)])

    def steadiness(w: Workload) -> float:
        return float(np.count_nonzero(curves[w.id])) / n if n else 0.0

    order = sorted((w for w in wls if "elastic" not in w.requires),
                   key=lambda w: (not (w.requires & PINNED), -steadiness(w), w.id))
    left = np.repeat(np.asarray(rs, dtype=np.float64)[:, None], n, axis=1)
    count = np.full(len(rs), float(sum(1 for w in wls if "elastic" in w.requires)))
    for w in order:
        curve = curves[w.id][None, :]
        got = np.minimum(curve, left)
        left = left - got
        total = float(curve.sum())
        if not w.requires & PINNED:
            count += (got.sum(axis=1) / total < 0.99) if total > 0 else 1.0
    return count


def _assign(wls: list[Workload], curves: dict[str, np.ndarray], reserved: int, n: int, has_bm: bool,
            has_ct: bool) -> list[Assignment]:
    def steadiness(w: Workload) -> float:
        return float(np.count_nonzero(curves[w.id])) / n if n else 0.0

    order = sorted((w for w in wls if "elastic" not in w.requires),
                   key=lambda w: (not (w.requires & PINNED), -steadiness(w), w.id))
    left = np.full(n, float(reserved))
    out: dict[str, Assignment] = {}
    for w in order:
        curve = curves[w.id]
        got = np.minimum(curve, left)
        left = left - got
        total = float(curve.sum())
        share = float(got.sum()) / total if total > 0 else 0.0
        if w.requires & PINNED:
            out[w.id] = Assignment(w, "bare-metal", "a_pinned", {"req": ",".join(sorted(w.requires & PINNED))})
        elif share >= 0.99:
            out[w.id] = Assignment(w, "bare-metal", "a_pool", {"share": share, "steady": steadiness(w)})
        elif share <= 0.01:
            key = ("a_spill_steady" if steadiness(w) >= 0.99 else "a_spill") if has_bm else "a_no_bm"
            out[w.id] = Assignment(w, "container", key, {"share": share, "steady": steadiness(w)})
        else:
            out[w.id] = Assignment(w, "split", "a_split", {"share": share, "steady": steadiness(w)})
    for w in wls:
        if "elastic" in w.requires:
            out[w.id] = Assignment(w, "container", "a_elastic", {})
    return [out[w.id] for w in wls]

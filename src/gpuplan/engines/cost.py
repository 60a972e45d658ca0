"""Total cost of one workload on one offer over its duration, and the time it takes.

Time (per GPU, hours); a schedule starts on a Monday and works the first days_per_week days of each
week (the same calendar `demand.from_schedules` lays out for `plan`):
    active_days  = 7-day weeks * days_per_week + min(rest of the duration in days, days_per_week)
    run_hours    = hours_per_day * active_days * s * g        (s: perf slowdown, g: GPU speed factor)
    daily_run    = min(24, hours_per_day * max(1, s * g))     (slower work runs longer each day, up to 24 h;
                                                               faster work keeps the day and ends sooner)
    run_hours   x= k, the rework factor of interruptions (models.delays: lost work re-run, paid)
    run_hours   x= E[T] / W on spot capacity (models.preemption: work lost to reclaims and restarts,
                   re-run and paid; the rate's middle for time and the mid total, its ends for low/high)
    calendar_h   = 24 * (7 * whole weeks + rest), for the run_hours / daily_run working days needed,
                   + a `once` data transfer (before the first step)
                   + max(0, spread waits - slack), spread waits = recovery from interruptions + per-run
                     and daily transfers, slack = (24 - daily_run) x working days (a wait that fits in
                     the hours the schedule leaves free does not move the end date)
    wall_hours   = setup + calendar_h

Money (low / mid / high from the price range), all from `gpuplan.models.tariff` (the one money model):
    container:   rental = gpus * run_hours * price_per_gpu_hour          (billed while running; a fraction
                 of a shared card is billed as its slice: perf.card_slice, MIG rounded up to k/7)
                 ops    = container GPU-hours * the offer's ops per GPU-hour
    bare metal:  lease_hours = max(setup + max(duration, calendar_h), min_term)  (paid from hand-over, idle or not)
                 billed_gpus = gpus, or whole nodes * gpus_per_node when lease_unit is node
                 rental = billed_gpus * lease_hours * price_per_gpu_hour
                 ops    = ops_hours per (node|gpu|)-month * whole units * lease months * engineer_hour_cost
    setup  = setup_hours * engineer_hour_cost (one engineer per deployment)
    transfer = moves x GB x the route's cost per GB (data to an offer at another site)
    owned (`mode: owned`, gpuplan.models.owned): billed as a node lease at the price per node-hour held
                 (capex + colocation + idle power), plus the busy draw's excess while running:
                 rental = billed_gpus * lease_hours * fixed / g_node + gpus * run_hours * extra / g_node
                        = capex + power + colocation (the three items reported)
                 wall_hours += lead_time (the work waits for delivery; nothing is paid before it)
    total  = rental + ops + setup + transfer
    total_low / total_high = the price range's low / high end with the run (container) or the lease
                (bare metal) at the slowdown range's low / high end (`perf.slowdown`: overhead ranges, an
                unknown tenancy or network), and on spot at the reclaim rate's low / high end;
                wall_hours_low / high likewise
    p90_wall = wall_hours + the calendar the p90 of the spot running hours adds (= wall_hours off spot)
    idle   = rental * (1 - busy / paid), busy = gpus * run_hours * utilization  (a part of rental, not added)
    per_month = total * (days_per_month * 24) / horizon,  horizon = max(duration, one month)
                (the calendar time of the work as scheduled, never a span the slowdown stretched;
                 `plan` divides by the same horizon, so one workload costs the same in both)
    decision = total_mid + researcher_hour_cost * wall_hours   (what the verdict minimises)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from gpuplan.inputs.calendar import active_days, calendar_days
from gpuplan.inputs.catalog import Catalog
from gpuplan.inputs.scenario_types import Offer, Scenario, Workload
from gpuplan.models.delays import NO_TRANSFER, Interruptions, Transfer, interruptions, rework_factor, transfer
from gpuplan.models.owned import OwnedCost, owned_cost
from gpuplan.models.perf import Slowdown, card_slice, slowdown
from gpuplan.models.preemption import MAX_STRETCH, LostWork, lost_work
from gpuplan.models.tariff import Tariff, horizon_hours, nodes_for
from gpuplan.models.tariff import per_month as tariff_per_month


@dataclass(frozen=True)
class OptionCost:
    offer: str
    mode: str
    slowdown: Slowdown
    run_hours: float
    wall_hours: float
    calendar_hours: float
    gpu_hours_used: float
    gpu_hours_busy: float
    gpu_hours_paid: float
    billed_gpus: int
    nodes: int
    lease_hours: float
    rental_low: float
    rental_mid: float
    rental_high: float
    ops: float
    ops_hours: float
    setup: float
    idle: float
    total_low: float
    total_mid: float
    total_high: float
    per_month: float
    decision: float
    days_after_work: float
    transfer: Transfer = NO_TRANSFER
    interruptions: Interruptions = Interruptions(0.0, 0.0, 0.0)
    wall_hours_low: float = 0.0  # wall hours at the low / high end of the slowdown range
    wall_hours_high: float = 0.0
    run_hours_dedicated: float = 0.0  # the work's hours on its first GPU's reference (per GPU)
    preemption: LostWork | None = None  # spot capacity only
    p90_wall_hours: float = 0.0
    owned: OwnedCost | None = None  # an owned offer's capex, power and colocation (their sum is the rental)


def restart_hours(workload: Workload, offer: Offer) -> float:
    """One restart after a reclaim: the offer's `preemption.restart`, else its reschedule wait + reloading
    the workload's data over the node network (when both are known)."""
    p = offer.preemption
    if p is not None and p.restart_hours is not None:
        return p.restart_hours
    reload = 0.0
    if workload.data is not None and offer.network_gbps:
        reload = workload.data.size_gb * 8 / offer.network_gbps / 3600
    return offer.recovery_hours + reload


def spot_lost_work(workload: Workload, offer: Offer, work_hours: float, daily_run: float,
                   rate: float | None = None) -> LostWork:
    """`models.preemption.lost_work` of `workload` on the spot `offer` (`rate`: per node-hour, default
    the middle of the offer's)."""
    p = offer.preemption
    assert p is not None
    around_the_clock = workload.hours_per_day >= 24 and workload.days_per_week == 7
    return lost_work(work_hours, workload.gpus, rate_per_node_hour=p.rate.mid if rate is None else rate,
                     gpus_per_node=offer.gpus_per_node, checkpoint_hours=workload.checkpoint_hours,
                     restart_hours=restart_hours(workload, offer), max_lifetime_hours=p.max_lifetime_hours,
                     session_hours=None if around_the_clock else daily_run,
                     keeps_state=workload.kind != "inference")


def _spot_factor(lw: LostWork) -> float:
    # an option that cannot finish is priced at the limit (a lower bound) and marked infeasible by advise
    return lw.factor


def _tariff(offer: Offer, scenario: Scenario) -> Tariff:
    # break-even and flip searches price the same offer hundreds of times: build its tariff once
    key = (id(offer), id(scenario))
    hit = _TARIFFS.get(key)
    if hit is None or hit[0] is not offer or hit[1] is not scenario:
        hit = (offer, scenario, Tariff.of(offer, scenario))
        if len(_TARIFFS) > 4096:
            _TARIFFS.clear()
        _TARIFFS[key] = hit
    return hit[2]


_TARIFFS: dict[tuple[int, int], tuple[Offer, Scenario, Tariff]] = {}


def _slowdown(workload: Workload, offer: Offer, catalog: Catalog) -> Slowdown:
    # the same: break-even and flip searches price one (workload, offer) at many hours and durations,
    # and the slowdown depends on neither
    key = (id(workload), id(offer), id(catalog))
    hit = _SLOWDOWNS.get(key)
    if hit is None or hit[0] is not workload or hit[1] is not offer or hit[2] is not catalog:
        hit = (workload, offer, catalog, slowdown(workload, offer, catalog))
        if len(_SLOWDOWNS) > 65536:
            _SLOWDOWNS.clear()
        _SLOWDOWNS[key] = hit
    return hit[3]


_SLOWDOWNS: dict[tuple[int, int, int], tuple[Workload, Offer, Catalog, Slowdown]] = {}


def forget() -> None:
    """Empty the tariff and slowdown memos. They hold the scenario objects they were built from: a
    server answering many scenarios calls this once per answer, so that one answer's objects are
    freed (and not walked by every garbage collection) once the next begins."""
    _TARIFFS.clear()
    _SLOWDOWNS.clear()


def option_cost(
    workload: Workload,
    offer: Offer,
    scenario: Scenario,
    catalog: Catalog,
    *,
    hours_per_day: float | None = None,
    duration_hours: float | None = None,
    price_factor: float = 1.0,
) -> OptionCost:
    """Cost and time of `workload` on `offer`; keyword overrides serve break-even and flip searches.

    A service (`service:`) on another of its GPUs runs more or fewer replicas there, never a longer
    calendar (`engines.alternatives.on_gpu`)."""
    if workload.service is not None and offer.gpu != workload.gpus_allowed[0]:
        from gpuplan.engines.alternatives import on_gpu

        workload = on_gpu(workload, offer.gpu, catalog)
    h = workload.hours_per_day if hours_per_day is None else hours_per_day
    duration = workload.duration_hours if duration_hours is None else duration_hours
    sd = _slowdown(workload, offer, catalog)
    dpw = workload.days_per_week
    active = active_days(duration, dpw)
    tr = transfer(workload, offer, scenario, active)
    once = tr.hours if workload.data is not None and workload.data.moves == "once" else 0.0
    spot: dict[str, Any] = {}  # the mid run's lost work on spot and the work and day it was priced on

    def timing(stretch: float) -> tuple[float, float, Interruptions, LostWork | None, float]:
        """(run hours, calendar hours, interruptions, lost work on spot, calendar hours the p90 of the
        spot running hours adds) of the work stretched by `stretch`."""
        intr = interruptions(workload, offer, h * active * stretch)
        # lost work is re-run: more running hours, paid like any other
        stretch *= min(MAX_STRETCH, rework_factor(workload, offer, h * active * stretch))
        lw = None
        if offer.preemption is not None:
            spot["work"], spot["day"] = h * active * stretch, min(24.0, h * max(1.0, stretch))
            lw = spot_lost_work(workload, offer, spot["work"], spot["day"])
            stretch *= _spot_factor(lw)
        run_hours = h * active * stretch
        daily_run = min(24.0, h * max(1.0, stretch))
        calendar_hours = calendar_days(run_hours / daily_run, dpw) * 24 if run_hours > 0 else 0.0
        p90_extra = 0.0
        if lw is not None and run_hours > 0:
            p90_run = run_hours * lw.p90_hours / lw.expected_hours
            p90_extra = calendar_days(p90_run / daily_run, dpw) * 24 - calendar_hours
        spread = intr.recovery_hours + tr.hours - once
        slack = (24.0 - daily_run) * run_hours / daily_run if run_hours > 0 else 0.0
        calendar_hours += once + max(0.0, spread - slack)
        return run_hours, calendar_hours, intr, lw, p90_extra

    run_hours, calendar_hours, intr, lw, p90_extra = timing(sd.total * sd.gpu_speed_factor)
    lw_low = lw_high = None
    if lw is not None and offer.preemption is not None:  # the reclaim rate's ends, on the mid run's work
        lw_low = spot_lost_work(workload, offer, spot["work"], spot["day"], offer.preemption.rate.low)
        lw_high = spot_lost_work(workload, offer, spot["work"], spot["day"], offer.preemption.rate.high)
    wall_hours = offer.setup_hours + calendar_hours
    if sd.low != sd.total or sd.high != sd.total:
        run_lo, cal_lo, *_ = timing(sd.low * sd.gpu_speed_factor)
        run_hi, cal_hi, *_ = timing(sd.high * sd.gpu_speed_factor)
        timing(sd.total * sd.gpu_speed_factor)  # `spot` back to the mid run's
    else:
        run_lo = run_hi = run_hours
        cal_lo = cal_hi = calendar_hours
    lead = offer.owned.lead_time_hours if offer.owned is not None else 0.0  # owned: waiting for delivery
    wall_hours += lead

    g = workload.gpus
    gf = g * card_slice(workload, offer, catalog)[0]  # cards billed: a shared card's slice (issue 24)
    price = offer.price_per_gpu_hour.scale(price_factor) if price_factor != 1.0 else offer.price_per_gpu_hour
    tariff = _tariff(offer, scenario)  # billing rules, ops and setup; the (scaled) price enters below
    nodes = nodes_for(g, offer.gpus_per_node)
    used = gf * run_hours
    busy = used * workload.utilization
    if offer.mode == "container":
        billed = g
        lease_hours = 0.0
        paid = used
        paid_lo, paid_hi = gf * run_lo, gf * run_hi
        days_after = 0.0
        ops_hours = tariff.container_ops_hours(paid)
        ops = tariff.container_ops(paid)
        ops_lo, ops_hi = tariff.container_ops(paid_lo), tariff.container_ops(paid_hi)
    else:
        billed = tariff.billed_gpus(g)
        # the lease covers the schedule as written (its days off included) or the slower run, if longer
        scheduled = max(duration, calendar_hours)
        lease_hours = tariff.lease_hours(scheduled, project=True)
        paid = billed * lease_hours
        lease_lo = tariff.lease_hours(max(duration, cal_lo), project=True)
        lease_hi = tariff.lease_hours(max(duration, cal_hi), project=True)
        paid_lo, paid_hi = billed * lease_lo, billed * lease_hi
        days_after = (lease_hours - offer.setup_hours - scheduled) / 24  # paid only because of the term
        ops_hours = tariff.lease_ops_hours(g, lease_hours)
        ops = tariff.lease_ops(g, lease_hours)
        ops_lo, ops_hi = tariff.lease_ops(g, lease_lo), tariff.lease_ops(g, lease_hi)
    setup = tariff.setup_cost
    k_lo = k_hi = 1.0  # on spot: the reclaim rate's ends with the price's
    if lw is not None and lw_low is not None and lw_high is not None:
        k_lo, k_hi = _spot_factor(lw_low) / _spot_factor(lw), _spot_factor(lw_high) / _spot_factor(lw)
    r_low, r_mid, r_high = paid * price.low * k_lo, paid * price.mid, paid * price.high * k_hi
    idle = r_mid * max(0.0, 1.0 - busy / paid) if paid > 0 else 0.0
    busy_power, busy_lo, busy_hi, owned = _owned_power(offer, paid, used, gf * run_lo, gf * run_hi)
    r_low, r_mid, r_high = r_low + busy_power, r_mid + busy_power, r_high + busy_power
    total_mid = r_mid + ops + setup + tr.cost
    # the low / high ends: the price range's ends at the slowdown range's ends (an unknown tenancy,
    # overhead ranges); equal to the price's ends alone where the slowdown is one number
    total_low = min(paid_lo * price.low * k_lo + busy_lo + ops_lo, r_low + ops) + setup + tr.cost
    total_high = max(paid_hi * price.high * k_hi + busy_hi + ops_hi, r_high + ops) + setup + tr.cost
    per_month = tariff_per_month(total_mid, horizon_hours([duration], scenario.days_per_month),
                                 scenario.days_per_month)
    return OptionCost(
        offer=offer.id,
        mode=offer.mode,
        slowdown=sd,
        run_hours=run_hours,
        wall_hours=wall_hours,
        calendar_hours=calendar_hours,
        gpu_hours_used=used,
        gpu_hours_busy=busy,
        gpu_hours_paid=paid,
        billed_gpus=billed,
        nodes=nodes,
        lease_hours=lease_hours,
        rental_low=r_low,
        rental_mid=r_mid,
        rental_high=r_high,
        ops=ops,
        ops_hours=ops_hours,
        setup=setup,
        idle=idle,
        total_low=total_low,
        total_mid=total_mid,
        total_high=total_high,
        per_month=per_month,
        decision=total_mid + scenario.team.researcher_hour_cost * wall_hours,
        days_after_work=days_after,
        transfer=tr,
        interruptions=intr,
        wall_hours_low=offer.setup_hours + cal_lo + lead,
        wall_hours_high=offer.setup_hours + cal_hi + lead,
        run_hours_dedicated=h * active,
        preemption=lw,
        p90_wall_hours=wall_hours + p90_extra,
        owned=owned,
    )


def _owned_power(offer: Offer, paid: float, used: float, used_lo: float,
                 used_hi: float) -> tuple[float, float, float, OwnedCost | None]:
    """An owned offer's busy draw above the idle one for the GPU-hours run (mid, and at the slowdown
    range's ends), and its capex, power and colocation; zeros and None for any other offer."""
    if offer.owned is None:
        return 0.0, 0.0, 0.0, None
    extra = offer.owned.extra_per_node_hour / offer.gpus_per_node
    g = offer.gpus_per_node
    return used * extra, used_lo * extra, used_hi * extra, owned_cost(offer.owned, paid / g, used / g)


def offer_slowdown(workload: Workload, offer: Offer, catalog: Catalog) -> Slowdown:
    """`option_cost(workload, offer, ...).slowdown` without pricing anything (remembered, as there)."""
    return _slowdown(workload, offer, catalog)


Decision = Callable[[float], float]


def decision_over(workload: Workload, offer: Offer, scenario: Scenario, catalog: Catalog,
                  over: Literal["hours_per_day", "duration_hours"]) -> Decision:
    """x -> `option_cost(workload, offer, scenario, catalog, **{over: x}).decision`, the same float to
    the last bit, for the break-even and flip searches (which price one pair at dozens of x).

    What does not depend on x (the slowdown, the rework factor, the tariff's billed GPUs, ops rate and
    setup, and for hours per day the active days) is worked out once; the rest is `option_cost`'s own
    arithmetic in the same order, so that the searches, which look for exact zeros and compare signs,
    land where they did when they priced each x in full. Spot offers and work without checkpoints,
    whose lost work is not linear in the running hours, are priced in full at each x."""
    if offer.preemption is not None or math.isinf(workload.checkpoint_hours):
        def full(x: float) -> float:
            return option_cost(workload, offer, scenario, catalog, **{over: x}).decision
        return full
    if workload.service is not None and offer.gpu != workload.gpus_allowed[0]:
        from gpuplan.engines.alternatives import on_gpu

        workload = on_gpu(workload, offer.gpu, catalog)  # as option_cost prices a service there
    sd = _slowdown(workload, offer, catalog)
    stretch0 = sd.total * sd.gpu_speed_factor
    stretch = stretch0 * rework_factor(workload, offer)
    dpw = workload.days_per_week
    rate_g = offer.interruptions_per_gpu_day * workload.gpus  # interruptions(): rate x gpus x run / 24
    each_recovery = offer.recovery_hours
    d = workload.data
    moves_data = not (d is None or offer.site is None or offer.remote_data or offer.site == d.site or d.size_gb == 0)
    moves_once = d is not None and d.moves == "once"
    setup_hours = offer.setup_hours
    g = workload.gpus
    gf = g * card_slice(workload, offer, catalog)[0]
    mid = offer.price_per_gpu_hour.mid
    tariff = _tariff(offer, scenario)
    setup = tariff.setup_cost
    researcher = scenario.team.researcher_hour_cost
    container = offer.mode == "container"
    ops_per_gpu_hour = tariff.ops_per_gpu_hour if container else 0.0
    billed = 0 if container else tariff.billed_gpus(g)
    ops_units = 0.0 if container else tariff.ops_hours * tariff.ops_units(g)  # lease_ops' first product
    month_hours, eng, min_term = tariff.month_hours, tariff.engineer_hour_cost, tariff.min_term_hours
    by_hours = over == "hours_per_day"
    fixed_h, fixed_duration = workload.hours_per_day, workload.duration_hours
    fixed_active = active_days(fixed_duration, dpw)
    floor, float_dpw = math.floor, float(dpw)
    lead = offer.owned.lead_time_hours if offer.owned is not None else 0.0
    busy_extra = offer.owned.extra_per_node_hour / offer.gpus_per_node if offer.owned is not None else 0.0

    def decision(x: float) -> float:
        # calendar.active_days and calendar.calendar_days written out (a call each costs as much as the
        # sum), and min/max as conditionals that pick the same operand (`max(a, b)` is `b if b > a else a`)
        if by_hours:
            h, duration, active = x, fixed_duration, fixed_active
        else:
            h, duration = fixed_h, x
            days = x / 24
            weeks = floor(days / 7 + 1e-12)
            part = days - 7 * weeks
            part = 0.0 if part < 0.0 else part
            active = weeks * dpw + (float_dpw if float_dpw < part else part)
        recovery = rate_g * (h * active * stretch0) / 24 * each_recovery
        run_hours = h * active * stretch
        daily_run = h * (stretch if stretch > 1.0 else 1.0)
        daily_run = daily_run if daily_run < 24.0 else 24.0
        if run_hours > 0:
            working = run_hours / daily_run
            if working <= 0:
                calendar_hours: float = 0.0
            else:
                weeks = floor(working / dpw + 1e-12)
                rest = working - weeks * dpw
                rest = 0.0 if rest < 0.0 else rest
                calendar_hours = (7 * (weeks - 1) + dpw if rest <= 1e-12 else 7 * weeks + rest) * 24
            slack = (24.0 - daily_run) * run_hours / daily_run
        else:
            calendar_hours = slack = 0.0
        if moves_data:
            tr = transfer(workload, offer, scenario, active)
            tr_hours, tr_cost = tr.hours, tr.cost
            once = tr_hours if moves_once else 0.0
            late = recovery + tr_hours - once - slack
            calendar_hours += once + (late if late > 0.0 else 0.0)
        else:
            tr_cost = 0.0
            late = recovery + 0.0 - 0.0 - slack
            calendar_hours += 0.0 + (late if late > 0.0 else 0.0)
        wall_hours = setup_hours + calendar_hours
        if lead:
            wall_hours += lead
        if container:
            paid = gf * run_hours
            ops = paid * ops_per_gpu_hour
        else:
            lease_hours = setup_hours + (calendar_hours if calendar_hours > duration else duration)
            lease_hours = min_term if min_term > lease_hours else lease_hours
            paid = billed * lease_hours
            ops = ops_units * lease_hours / month_hours * eng
        if busy_extra:  # an owned offer: option_cost's r_mid + busy_power, in its order
            return paid * mid + gf * run_hours * busy_extra + ops + setup + tr_cost + researcher * wall_hours
        return paid * mid + ops + setup + tr_cost + researcher * wall_hours

    return decision

"""Total cost of one workload on one offer over its duration, and the time it takes.

Time (per GPU, hours):
    active_days  = duration_days * days_per_week / 7
    run_hours    = hours_per_day * active_days * s * g        (s: perf slowdown, g: GPU speed factor)
    daily_run    = min(24, hours_per_day * s * g)             (slower work runs longer each day, up to 24 h)
    calendar_h   = run_hours / daily_run * 7 / days_per_week * 24
    wall_hours   = setup + calendar_h

Money (low / mid / high from the price range):
    container:   rental = gpus * run_hours * price_per_gpu_hour          (billed while running)
    bare metal:  lease_hours = max(setup + calendar_h, min_term)         (paid from hand-over, idle or not)
                 billed_gpus = gpus, or whole nodes * gpus_per_node when lease_unit is node
                 rental = billed_gpus * lease_hours * price_per_gpu_hour
    ops    = ops_hours per (node|gpu|)-month * units * months_paid * engineer_hour_cost
    setup  = setup_hours * engineer_hour_cost (one engineer per deployment)
    total  = rental + ops + setup
    idle   = rental * (1 - busy / paid), busy = gpus * run_hours * utilization  (a part of rental, not added)
    per_month = total * (days_per_month * 24) / span_hours    (span: lease for bare metal, wall time for containers)
    decision = total_mid + researcher_hour_cost * wall_hours   (what the verdict minimises)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan.catalog import Catalog
from gpuplan.models import Offer, Scenario, Workload
from gpuplan.perf import Slowdown, slowdown


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
    """Cost and time of `workload` on `offer`; keyword overrides serve break-even and flip searches."""
    h = workload.hours_per_day if hours_per_day is None else hours_per_day
    duration = workload.duration_hours if duration_hours is None else duration_hours
    sd = slowdown(workload, offer, catalog)
    stretch = sd.total * sd.gpu_speed_factor
    dpw = workload.days_per_week
    active_days = duration / 24 * dpw / 7
    run_hours = h * active_days * stretch
    daily_run = min(24.0, h * stretch)
    calendar_hours = run_hours / daily_run * 7 / dpw * 24 if run_hours > 0 else 0.0
    wall_hours = offer.setup_hours + calendar_hours

    g = workload.gpus
    nodes = math.ceil(g / offer.gpus_per_node)
    eng = scenario.team.engineer_hour_cost or 0.0
    price = offer.price_per_gpu_hour.scale(price_factor)
    used = g * run_hours
    busy = used * workload.utilization
    if offer.mode == "container":
        billed = g
        lease_hours = 0.0
        paid = used
        span = wall_hours
        days_after = 0.0
    else:
        billed = nodes * offer.gpus_per_node if offer.lease_unit == "node" else g
        lease_hours = max(wall_hours, offer.min_term_hours)
        paid = billed * lease_hours
        span = lease_hours
        days_after = (lease_hours - wall_hours) / 24
    months = span / 24 / scenario.days_per_month
    units = {"node-month": nodes, "gpu-month": billed, "month": 1}[offer.ops_per]
    ops_hours = offer.ops_hours * units * months
    ops = ops_hours * eng
    setup = offer.setup_hours * eng
    r_low, r_mid, r_high = paid * price.low, paid * price.mid, paid * price.high
    idle = r_mid * max(0.0, 1.0 - busy / paid) if paid > 0 else 0.0
    total_mid = r_mid + ops + setup
    per_month = total_mid * scenario.days_per_month * 24 / span if span > 0 else 0.0
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
        total_low=r_low + ops + setup,
        total_mid=total_mid,
        total_high=r_high + ops + setup,
        per_month=per_month,
        decision=total_mid + scenario.team.researcher_hour_cost * wall_hours,
        days_after_work=days_after,
    )

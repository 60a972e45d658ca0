"""Pricing one replay with the one money model (`gpuplan.models.tariff`), as `plan` prices a trace.

A trace is a sample of usage that repeats, so the lease has no minimum term or one-off setup and runs
for the trace's calendar span (first submission to the last job's end as submitted, without queueing
or container slowdown: the same span `plan --trace` uses):

    lease  = billed(R) x span_hours x lease price per GPU-hour     (whole nodes when leased by the node)
    ops    = ops hours of R's whole nodes over the span x engineer_hour_cost
    burst  = container GPU-hours (already stretched by the container slowdown s_c) x (price + ops per GPU-hour)
    overtime = reserved GPU-hours x (s_b - 1) x (lease price + ops per card-hour)
    total  = lease + ops + burst + overtime
    per_month = total x 24 x days_per_month / span_hours

The trace's durations are the jobs' time on the reference (ideal dedicated bare metal with a full fabric),
as `plan --trace` reads them (issue 24): on the lease the work runs s_b times as long (`PoolPricing.
bare_metal_slowdown`, the lease's own network and re-run work), billed as `plan` bills it, lease overtime
on the GPU-hours the leased cards run (the replay holds a card for the recorded duration: no card is
added for the stretch, and waits are those of the recorded durations); a burst runs s_c x its duration.
A dedicated GPU-hour so costs s_b x the lease's card-hour on the pool and s_c x the container's in a
burst: s_c / s_b container GPU-hours for a leased-card one. `price_replay` adds the overtime when given
the reserved GPU-hours; otherwise `run_object` adds it from the run's reserved GPU-hours.

`total_low` / `total_high` use the low / high ends of the lease and container price ranges.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplan.engines.pricing import PoolPricing
    from gpuplan.models.tariff import PricePoint, Tariff

# The tariff is imported where a price is computed: an unpriced replay (no --scenario) runs without it.


_PENDING = "_overtime_pending"  # the lease overtime's rates, until `run_object` knows the reserved GPU-hours


def price_replay(
    prices: PoolPricing, reserved_gpus: int, span_hours: float, burst_gpu_hours: float,
    reserved_gpu_hours: float | None = None,
) -> dict[str, Any]:
    """The `cost` object of one replay (see the module docstring for the formulas)."""
    from gpuplan.models.tariff import per_month, pool_bill

    def bill(point: PricePoint) -> Any:
        return pool_bill(prices.lease, prices.container, reserved_gpus, span_hours, burst_gpu_hours, point)

    mid, low, high = bill("mid"), bill("low"), bill("high")
    dpm = prices.days_per_month
    out = {
        "currency": prices.currency,
        "offer_bare_metal": prices.offer_bare_metal or "",
        "offer_container": prices.offer_container or "",
        "span_hours": span_hours,
        "billed_gpus": mid.billed_gpus,
        "nodes": mid.nodes,
        "lease": mid.lease,
        "ops": mid.ops,
        "burst": mid.burst,
        "total": mid.total,
        "total_low": low.total,
        "total_high": high.total,
        "per_month": per_month(mid.total, span_hours, dpm),
        "per_month_low": per_month(low.total, span_hours, dpm),
        "per_month_high": per_month(high.total, span_hours, dpm),
        "bare_metal_slowdown": prices.bare_metal_slowdown,
        "overtime_per_gpu_hour": prices.overtime_per_gpu_hour(),
    }
    rates = {p: prices.overtime_per_gpu_hour(p) for p in ("mid", "low", "high")}
    if rates["high"] > 0:
        out[_PENDING] = {"rates": rates, "dpm": dpm}
    return add_overtime(out, reserved_gpu_hours) if reserved_gpu_hours is not None else out


def add_overtime(cost: dict[str, Any], reserved_gpu_hours: float) -> dict[str, Any]:
    """The `cost` object with the lease overtime of `reserved_gpu_hours` (the module docstring) in its
    totals; `overtime` only where it is > 0, as `plan` shows it."""
    from gpuplan.models.tariff import per_month

    out = dict(cost)
    pending = out.pop(_PENDING, None)
    if pending is None:
        return out
    rates, dpm = pending["rates"], pending["dpm"]
    over = rates["mid"] * reserved_gpu_hours
    if over > 0:
        out["overtime"] = over
    for key, point in (("total", "mid"), ("total_low", "low"), ("total_high", "high")):
        out[key] = cost[key] + rates[point] * reserved_gpu_hours
    for key, total in (("per_month", "total"), ("per_month_low", "total_low"), ("per_month_high", "total_high")):
        out[key] = per_month(out[total], float(out["span_hours"]), dpm)
    return out


def price_spot(cost: dict[str, Any], prices: PoolPricing, spot: Tariff, span_hours: float, spot_gpu_hours: float,
               lost_spot_gpu_hours: float, lost_on_demand_gpu_hours: float) -> dict[str, Any]:
    """The `cost` object with a spot tier (issue 26): spot GPU-hours (lost work included) at the spot
    offer's price + ops, added to the total; `lost` is the money of the lost GPU-hours (already in
    `spot` and `burst`: the spot ones at the spot price, the restarts on demand at the container's).

        spot  = spot GPU-hours x (spot price + ops per GPU-hour)
        lost  = lost spot GPU-hours x (spot price + ops) + on-demand restarts x (container price + ops)
        total = lease + ops + burst + spot (+ the lease overtime: `add_overtime`)
    """
    from gpuplan.models.tariff import per_month

    dpm = prices.days_per_month
    out = dict(cost)
    mid, low, high = (float(spot.container_cost(spot_gpu_hours, p)) for p in ("mid", "low", "high"))
    lost = float(spot.container_cost(lost_spot_gpu_hours))
    if prices.container is not None and lost_on_demand_gpu_hours > 0:
        lost += float(prices.container.container_cost(lost_on_demand_gpu_hours))
    out["offer_spot"] = spot.offer
    out["spot"] = mid
    out["lost"] = lost
    out["total"] = cost["total"] + mid
    out["total_low"] = cost["total_low"] + low
    out["total_high"] = cost["total_high"] + high
    for key, total in (("per_month", "total"), ("per_month_low", "total_low"), ("per_month_high", "total_high")):
        out[key] = per_month(out[total], span_hours, dpm)
    return out


# --- the waiting budget and the recommendation ------------------------------------------------------

SCHEMA = "gpuplan.simulate/1"
"""What `simulate -o json` prints (`gpuplan.contracts.simulate.SimulateOutput`)."""
WAIT_STATS = ("mean", "p50", "p95", "max")
ABSURD_WAIT_HOURS = 168.0
"""A p95 wait above a week is called out: nobody leases a pool whose jobs wait that long."""


def run_object(reserved: int, jobs: int, skipped: dict[str, int], burst_jobs: int,
               gpu_hours: tuple[float, float, float], waits: tuple[float, float, float, float], span_hours: float,
               cost: dict[str, Any] | None) -> dict[str, Any]:
    """One run of `gpuplan.simulate/1`: `gpu_hours` (total, reserved, burst), `waits` in hours (mean,
    p50, p95, max); the reserved pool's utilisation is its GPU-hours over R x the replay's span."""
    total_h, reserved_h, burst_h = gpu_hours
    util = reserved_h / (reserved * span_hours) if reserved > 0 and span_hours > 0 else 0.0
    if cost is not None and _PENDING in cost:  # the lease overtime of the GPU-hours the leased cards ran
        cost = add_overtime(cost, reserved_h)
    return {
        "reserved_gpus": reserved,
        "jobs": jobs,
        "skipped": dict(sorted(skipped.items())),
        "burst_jobs": burst_jobs,
        "gpu_hours": {"total": total_h, "reserved": reserved_h, "burst": burst_h},
        "wait_hours": dict(zip(WAIT_STATS, waits, strict=True)),
        "reserved_utilization": util,
        "cost": cost,
    }


def waiting_per_month(run: dict[str, Any], researcher_hour_cost: float, days_per_month: float) -> float:
    """Waiting priced per month: every replayed job's wait (mean x jobs) x researcher_hour_cost, over the
    trace's span scaled to a month like the pool's bill."""
    from gpuplan.models.tariff import per_month

    cost = run.get("cost") or {}
    job_wait_hours = float(run["wait_hours"]["mean"]) * int(run["jobs"])
    return per_month(job_wait_hours * researcher_hour_cost, float(cost.get("span_hours", 0.0)), days_per_month)


def _meets(run: dict[str, Any], max_wait: dict[str, float]) -> bool:
    return all(float(run["wait_hours"][k]) <= v + 1e-9 for k, v in max_wait.items())


def _budget_text(max_wait: dict[str, float]) -> str:
    from gpuplan.inputs.units import format_duration

    return ", ".join(f"{k} <= {format_duration(v)}" for k, v in max_wait.items())


def recommend(
    runs: list[dict[str, Any]],
    max_wait: dict[str, float],
    researcher_hour_cost: float = 0.0,
    days_per_month: float = 30.0,
) -> dict[str, Any]:
    """The cheapest R whose waits meet `max_wait` ({stat: hours}; empty: no budget).

    Cost is the pool's mid bill per month, plus the waiting priced at `researcher_hour_cost` when it
    is > 0 (each run's `cost.waiting_per_month` is set then). Ties go to the smaller R. Returns the
    keys `recommended` (or None), `no_recommendation` (why None, else None) and `cheapest` (the
    cheapest priced R whatever it waits, flagged `absurd_wait` when its p95 is over a week)."""
    priced = [r for r in runs if r.get("cost")]
    if researcher_hour_cost > 0:
        for r in priced:
            r["cost"]["waiting_per_month"] = waiting_per_month(r, researcher_hour_cost, days_per_month)

    def decision(r: dict[str, Any]) -> tuple[float, int]:
        c = r["cost"]
        return float(c["per_month"]) + float(c.get("waiting_per_month", 0.0)), int(r["reserved_gpus"])

    def summary(r: dict[str, Any]) -> dict[str, Any]:
        c = r["cost"]
        return {
            "reserved_gpus": r["reserved_gpus"],
            "cost_per_month": c["per_month"],
            "waiting_cost_per_month": c.get("waiting_per_month"),
            "wait_hours": dict(r["wait_hours"]),
        }

    cheapest = None
    if priced:
        best = min(priced, key=decision)
        cheapest = summary(best) | {"absurd_wait": float(best["wait_hours"]["p95"]) > ABSURD_WAIT_HOURS}
    meeting = [r for r in runs if _meets(r, max_wait)]
    waiting = " and priced waiting" if researcher_hour_cost > 0 else ""
    if not priced:
        smallest = min((int(r["reserved_gpus"]) for r in meeting), default=None)
        reason = "nothing is priced: pass --scenario to price the pool and the bursts"
        if max_wait and smallest is not None:
            reason += f" (the smallest R meeting {_budget_text(max_wait)} is {smallest})"
        return {"recommended": None, "cheapest": None,
                "no_recommendation": {"code": "not_priced", "reason": reason, "smallest_meeting": smallest}}
    if not meeting:
        stat = next(iter(max_wait))
        closest = min(runs, key=lambda r: (float(r["wait_hours"][stat]), int(r["reserved_gpus"])))
        reason = (f"no R meets {_budget_text(max_wait)}: the shortest {stat} wait is "
                  f"{float(closest['wait_hours'][stat]):,.2f} h at R = {closest['reserved_gpus']}; "
                  "try larger R or a longer --wait budget")
        return {"recommended": None, "cheapest": cheapest,
                "no_recommendation": {"code": "none_meets", "reason": reason, "smallest_meeting": None}}
    pick = min((r for r in meeting if r.get("cost")), key=decision, default=None)
    if pick is None:  # the runs that meet the budget carry no price (cannot happen: all or none priced)
        return {"recommended": None, "cheapest": cheapest,
                "no_recommendation": {"code": "not_priced", "reason": "nothing is priced",
                                      "smallest_meeting": None}}
    if max_wait:
        basis = "max_wait"
        reason = (f"the cheapest R per month (pool{waiting}) whose waits meet {_budget_text(max_wait)}; "
                  f"{len(meeting)} of {len(runs)} R meet it")
    else:
        basis = "cheapest"
        reason = f"the cheapest R per month (pool{waiting}); no --max-wait given"
    return {"recommended": summary(pick) | {"basis": basis, "reason": reason}, "cheapest": cheapest,
            "no_recommendation": None}


def parse_max_wait(values: str | list[str] | tuple[str, ...] | dict[str, float] | None) -> dict[str, float]:
    """`p95=2h`, `mean=30m,max=1d` (or several such options) -> {stat: hours}, in the order given."""
    from gpuplan.errors import UsageError
    from gpuplan.inputs.units import UnitError, parse_duration

    if values is None:
        return {}
    items: list[tuple[str, str | float | None]] = []
    if isinstance(values, dict):
        items = [(k, float(v)) for k, v in values.items()]
    else:
        parts = [values] if isinstance(values, str) else list(values)
        for text in (p.strip() for part in parts for p in part.split(",")):
            if not text:
                continue
            name, sep, given = text.partition("=")
            items.append((name.strip().lower(), given.strip() if sep else None))
    hint = "for example --max-wait p95=2h (also mean=30m, max=1d; several allowed)."
    out: dict[str, float] = {}
    for stat, dur in items:
        if stat not in WAIT_STATS or dur is None:
            raise UsageError(f"expected STAT=DURATION with STAT one of {', '.join(WAIT_STATS)}, got "
                             f"{stat if dur is None else f'{stat}={dur}'!r}", field="--max-wait", hint=hint)
        try:
            hours = float(dur) if isinstance(dur, int | float) else parse_duration(dur)
        except UnitError as exc:
            raise UsageError(f"{stat}: {exc}", field="--max-wait", hint=hint) from None
        if not hours >= 0 or hours == float("inf"):
            raise UsageError(f"{stat}: the budget must be a finite duration >= 0", field="--max-wait", hint=hint)
        out[stat] = hours
    return out

"""Pricing one replay with the one money model (`gpuplan.models.tariff`), as `plan` prices a trace.

A trace is a sample of usage that repeats, so the lease has no minimum term or one-off setup and runs
for the trace's calendar span (first submission to the last job's end as submitted, without queueing
or container slowdown: the same span `plan --trace` uses):

    lease  = billed(R) x span_hours x lease price per GPU-hour     (whole nodes when leased by the node)
    ops    = ops hours of R's whole nodes over the span x engineer_hour_cost
    burst  = container GPU-hours (already stretched by the container slowdown) x (price + ops per GPU-hour)
    total  = lease + ops + burst
    per_month = total x 24 x days_per_month / span_hours

`total_low` / `total_high` use the low / high ends of the lease and container price ranges.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuplan.models.tariff import PricePoint, per_month, pool_bill

if TYPE_CHECKING:
    from gpuplan.engines.pricing import PoolPricing


def price_replay(
    prices: PoolPricing, reserved_gpus: int, span_hours: float, burst_gpu_hours: float
) -> dict[str, Any]:
    """The `cost` object of one replay (see the module docstring for the formulas)."""

    def bill(point: PricePoint) -> Any:
        return pool_bill(prices.lease, prices.container, reserved_gpus, span_hours, burst_gpu_hours, point)

    mid, low, high = bill("mid"), bill("low"), bill("high")
    dpm = prices.days_per_month
    return {
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
    }

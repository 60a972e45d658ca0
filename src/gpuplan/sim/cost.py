"""Pricing one replay: lease R cards for the trace's span, pay ops on them, pay containers for bursts.

    lease  = R x span_hours x lease_per_gpu_hour
    ops    = R x span_hours x ops_per_gpu_hour
    burst  = burst_gpu_hours x container_per_gpu_hour   (burst GPU-hours already stretched by the
                                                          container slowdown)
    total  = lease + ops + burst
    per_month = total / span_hours x 24 x days_per_month

`total_low` / `total_high` use the low / high ends of the lease and container price ranges (ops
unchanged). Plain floats in, a plain dict out: the CLI maps the scenario's pool prices onto
`PoolPrices` (`from_pool_prices`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import gpuplan.pricing as gpuplan_pricing


@dataclass(frozen=True)
class PoolPrices:
    currency: str
    lease_per_gpu_hour: float
    ops_per_gpu_hour: float
    container_per_gpu_hour: float
    container_slowdown: float = 1.0
    lease_per_gpu_hour_low: float | None = None
    lease_per_gpu_hour_high: float | None = None
    container_per_gpu_hour_low: float | None = None
    container_per_gpu_hour_high: float | None = None
    offer_bare_metal: str = ""
    offer_container: str = ""
    gpus_per_node: int = 8
    days_per_month: float = 30.0

    def __post_init__(self) -> None:
        for name in ("lease_per_gpu_hour", "ops_per_gpu_hour", "container_per_gpu_hour"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a number >= 0, got {value}")
        if not (self.container_slowdown > 0 and math.isfinite(self.container_slowdown)):
            raise ValueError("container_slowdown is a factor > 0 (1.10 = 10% slower)")


def from_pool_prices(pp: gpuplan_pricing.PoolPrices, days_per_month: float = 30.0) -> PoolPrices:
    """The replay's prices from `gpuplan.pricing.pool_prices(...)`; a NaN range end (no such offer) becomes None."""

    def opt(value: float) -> float | None:
        return None if math.isnan(value) else float(value)

    return PoolPrices(
        currency=pp.currency,
        lease_per_gpu_hour=float(pp.lease_per_gpu_hour),
        ops_per_gpu_hour=float(pp.ops_per_gpu_hour),
        container_per_gpu_hour=float(pp.container_per_gpu_hour),
        container_slowdown=float(pp.container_slowdown),
        lease_per_gpu_hour_low=opt(pp.lease_low),
        lease_per_gpu_hour_high=opt(pp.lease_high),
        container_per_gpu_hour_low=opt(pp.container_low),
        container_per_gpu_hour_high=opt(pp.container_high),
        offer_bare_metal=pp.offer_bare_metal or "",
        offer_container=pp.offer_container or "",
        gpus_per_node=int(pp.gpus_per_node),
        days_per_month=days_per_month,
    )


def price_replay(
    prices: PoolPrices, reserved_gpus: int, span_hours: float, burst_gpu_hours: float
) -> dict[str, Any]:
    """The `cost` object of one replay (see the module docstring for the formulas)."""
    card_hours = reserved_gpus * span_hours

    def total(lease: float, container: float) -> float:
        return card_hours * (lease + prices.ops_per_gpu_hour) + burst_gpu_hours * container

    lease = card_hours * prices.lease_per_gpu_hour
    ops = card_hours * prices.ops_per_gpu_hour
    burst = burst_gpu_hours * prices.container_per_gpu_hour
    mid = lease + ops + burst
    low = total(
        _pick(prices.lease_per_gpu_hour_low, prices.lease_per_gpu_hour),
        _pick(prices.container_per_gpu_hour_low, prices.container_per_gpu_hour),
    )
    high = total(
        _pick(prices.lease_per_gpu_hour_high, prices.lease_per_gpu_hour),
        _pick(prices.container_per_gpu_hour_high, prices.container_per_gpu_hour),
    )
    month = 24.0 * prices.days_per_month / span_hours if span_hours > 0 else 0.0
    return {
        "currency": prices.currency,
        "offer_bare_metal": prices.offer_bare_metal,
        "offer_container": prices.offer_container,
        "span_hours": span_hours,
        "lease": lease,
        "ops": ops,
        "burst": burst,
        "total": mid,
        "total_low": low,
        "total_high": high,
        "per_month": mid * month,
        "per_month_low": low * month,
        "per_month_high": high * month,
    }


def _pick(value: float | None, default: float) -> float:
    return default if value is None else float(value)

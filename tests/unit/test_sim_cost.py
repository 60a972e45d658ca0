"""Pricing a replay, with hand numbers."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from gpuplan.sim.cost import PoolPrices, from_pool_prices, price_replay


def test_cost_by_hand() -> None:
    p = PoolPrices(
        currency="CNY",
        lease_per_gpu_hour=10.0,
        ops_per_gpu_hour=1.0,
        container_per_gpu_hour=20.0,
        container_slowdown=1.2,
        lease_per_gpu_hour_low=8.0,
        lease_per_gpu_hour_high=12.0,
        container_per_gpu_hour_low=15.0,
        container_per_gpu_hour_high=25.0,
    )
    c = price_replay(p, reserved_gpus=4, span_hours=100.0, burst_gpu_hours=50.0)
    assert (c["lease"], c["ops"], c["burst"], c["total"]) == (4000.0, 400.0, 1000.0, 5400.0)
    assert c["total_low"] == 4 * 100 * (8 + 1) + 50 * 15  # 4350
    assert c["total_high"] == 4 * 100 * (12 + 1) + 50 * 25  # 6450
    assert math.isclose(c["per_month"], 5400 / 100 * 24 * 30)
    assert c["currency"] == "CNY"


def test_no_ranges_use_the_mid_price_and_zero_span() -> None:
    p = PoolPrices(currency="USD", lease_per_gpu_hour=2.0, ops_per_gpu_hour=0.0, container_per_gpu_hour=3.0)
    c = price_replay(p, 0, 0.0, 0.0)
    assert c["total"] == c["total_low"] == c["total_high"] == 0.0 and c["per_month"] == 0.0


def test_from_pool_prices_maps_the_lead_names_and_nan() -> None:
    obj = SimpleNamespace(
        gpu="h100",
        currency="CNY",
        offer_bare_metal="bm",
        offer_container="ct",
        lease_per_gpu_hour=9.0,
        lease_low=float("nan"),
        lease_high=10.0,
        ops_per_gpu_hour=0.5,
        container_per_gpu_hour=10.0,
        container_low=8.0,
        container_high=12.0,
        container_slowdown=1.1,
        gpus_per_node=8,
    )
    p = from_pool_prices(obj, days_per_month=31)
    assert p.lease_per_gpu_hour_low is None and p.lease_per_gpu_hour_high == 10.0
    assert p.container_per_gpu_hour_low == 8.0 and p.days_per_month == 31 and p.offer_bare_metal == "bm"


def test_bad_prices_raise() -> None:
    with pytest.raises(ValueError):
        PoolPrices(currency="X", lease_per_gpu_hour=-1.0, ops_per_gpu_hour=0.0, container_per_gpu_hour=1.0)
    with pytest.raises(ValueError):
        PoolPrices(
            currency="X", lease_per_gpu_hour=float("nan"), ops_per_gpu_hour=0.0, container_per_gpu_hour=1.0
        )

"""Pricing a replay through the one tariff, with hand numbers."""

from __future__ import annotations

import math

import pytest

from gpuplan.engines.pricing import PoolPricing
from gpuplan.errors import UsageError
from gpuplan.inputs.scenario_types import Range
from gpuplan.models.tariff import Tariff
from gpuplan.sim.cost import price_replay


def tariff(offer: str, mode: str, price: Range, *, unit: str = "gpu", gpn: int = 8, ops_hours: float = 0.0,
           ops_per: str = "node-month", eng: float = 0.0, dpm: float = 30.0) -> Tariff:
    return Tariff(offer=offer, mode=mode, currency="CNY", price=price, lease_unit=unit,  # type: ignore[arg-type]
                  gpus_per_node=gpn, min_term_hours=720.0, setup_hours=12.0, ops_hours=ops_hours, ops_per=ops_per,
                  engineer_hour_cost=eng, days_per_month=dpm)


def pricing(lease: Tariff | None, ct: Tariff | None, sd: float = 1.2, dpm: float = 30.0) -> PoolPricing:
    return PoolPricing(gpu="h100", currency="CNY", days_per_month=dpm, lease=lease, container=ct,
                       container_slowdown=sd)


def test_cost_by_hand() -> None:
    # ops: 24 h per node-month at 100/h = 2,400 a node-month = 2,400 / 720 = 3.333 an hour per node
    bm = tariff("bm", "bare-metal", Range(8.0, 12.0), ops_hours=24.0, eng=100.0)
    ct = tariff("ct", "container", Range(15.0, 25.0))
    c = price_replay(pricing(bm, ct), reserved_gpus=4, span_hours=100.0, burst_gpu_hours=50.0)
    ops = 24.0 * 1 * 100.0 / 720.0 * 100.0  # one whole node for 100 h
    assert c["lease"] == 4 * 100 * 10.0 and c["ops"] == pytest.approx(ops) and c["burst"] == 50 * 20.0
    assert c["total"] == pytest.approx(4000 + ops + 1000)
    assert c["total_low"] == pytest.approx(4 * 100 * 8 + ops + 50 * 15)
    assert c["total_high"] == pytest.approx(4 * 100 * 12 + ops + 50 * 25)
    # per month divides by the calendar span, no term and no setup for a repeating trace
    assert math.isclose(c["per_month"], c["total"] / 100 * 24 * 30)
    assert c["currency"] == "CNY" and c["billed_gpus"] == 4 and c["nodes"] == 1


def test_ops_are_whole_nodes() -> None:
    bm = tariff("bm", "bare-metal", Range(1.0, 1.0), ops_hours=72.0, eng=10.0)
    c12 = price_replay(pricing(bm, None), 12, 720.0, 0.0)
    c16 = price_replay(pricing(bm, None), 16, 720.0, 0.0)
    assert c12["ops"] == c16["ops"] == pytest.approx(2 * 72.0 * 10.0)


def test_node_lease_bills_whole_nodes_and_refuses_part_nodes() -> None:
    bm = tariff("bm", "bare-metal", Range(2.0, 2.0), unit="node")
    assert bm.billed_gpus(12) == 16 and bm.billed_gpus(16) == 16 and bm.billed_gpus(0) == 0
    with pytest.raises(UsageError) as e:
        bm.check_pool_size(12)
    assert "8 or 16" in (e.value.hint or "")
    bm.check_pool_size(16)


def test_zero_span_and_no_pool() -> None:
    ct = tariff("ct", "container", Range(3.0, 3.0))
    c = price_replay(pricing(None, ct), 0, 0.0, 0.0)
    assert c["total"] == c["total_low"] == c["total_high"] == 0.0 and c["per_month"] == 0.0

"""simulate --scenario bills the lease's own slowdown s_b as plan does (issue 24): lease overtime.

A trace's durations are the jobs' time on the reference (ideal dedicated bare metal with a full fabric), as
`plan --trace` reads them; the GPU-hours the leased cards run pay (s_b - 1) card-hours each at the lease's
price + ops per card-hour, bursts run s_c x their duration (`gpuplan.sim.cost`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan import api
from gpuplan.engines.pricing import PoolPricing
from gpuplan.inputs.scenario_types import Range
from gpuplan.models.tariff import Tariff
from gpuplan.sim.cost import price_replay, run_object


def _tariff(offer: str, mode: str, price: Range, ops_hours: float = 0.0, eng: float = 0.0) -> Tariff:
    return Tariff(offer=offer, mode=mode, currency="CNY", price=price, lease_unit="gpu",  # type: ignore[arg-type]
                  gpus_per_node=8, min_term_hours=720.0, setup_hours=0.0, ops_hours=ops_hours,
                  ops_per="node-month", engineer_hour_cost=eng, days_per_month=30.0)


def test_overtime_by_hand() -> None:
    # s_b = 1.5; lease 8..12 (mid 10) CNY a card-hour, ops 24 h a node-month at 100 CNY: 24 x 100 / 720 / 8
    # = 0.41667 a card-hour; 300 GPU-hours on the leased cards: 0.5 x 10.41667 x 300 = 1,562.5 of overtime
    bm = _tariff("bm", "bare-metal", Range(8.0, 12.0), ops_hours=24.0, eng=100.0)
    ct = _tariff("ct", "container", Range(15.0, 25.0))
    prices = PoolPricing(gpu="h100", currency="CNY", days_per_month=30.0, lease=bm, container=ct,
                         container_slowdown=1.2, bare_metal_slowdown=1.5)
    ops_card_hour = 24 * 100 / 720 / 8
    assert prices.overtime_per_gpu_hour() == pytest.approx(0.5 * (10 + ops_card_hour))
    plain = price_replay(prices, reserved_gpus=4, span_hours=100.0, burst_gpu_hours=50.0)
    c = price_replay(prices, reserved_gpus=4, span_hours=100.0, burst_gpu_hours=50.0, reserved_gpu_hours=300.0)
    assert c["overtime"] == pytest.approx(1562.5)
    assert c["total"] == pytest.approx(plain["total"] + 1562.5)
    assert c["total_low"] == pytest.approx(plain["total_low"] + 0.5 * (8 + ops_card_hour) * 300)
    assert c["total_high"] == pytest.approx(plain["total_high"] + 0.5 * (12 + ops_card_hour) * 300)
    assert c["per_month"] == pytest.approx(c["total"] / 100 * 24 * 30)
    # the replay's own path: run_object adds the overtime of the run's reserved GPU-hours
    run = run_object(4, 3, {}, 1, (350.0, 300.0, 50.0), (0.0, 0.0, 0.0, 0.0), 100.0, plain)
    assert run["cost"] == c
    # s_b = 1: no overtime key, the totals as before
    same = PoolPricing(gpu="h100", currency="CNY", days_per_month=30.0, lease=bm, container=ct,
                       container_slowdown=1.2)
    one = run_object(4, 3, {}, 1, (350.0, 300.0, 50.0), (0.0, 0.0, 0.0, 0.0), 100.0,
                     price_replay(same, 4, 100.0, 50.0))["cost"]
    assert "overtime" not in one and one["total"] == pytest.approx(plain["total"])


SCENARIO = """
version: 1
currency: USD
offers:
  - {{id: bm, gpu: h100-sxm, mode: bare-metal, price: {{amount: 2.5, per: gpu-hour}}, interruptions_per_gpu_day: 0,
     ops: 0h/node-month, setup: 0h, network: {{gbps: {gbps}, rdma: {rdma}}}}}
  - {{id: ct, gpu: h100-sxm, mode: container, tenancy: dedicated, price: {{amount: 12, per: gpu-hour}},
     interruptions_per_gpu_day: 0, ops: 0h/node-month, setup: 0h, network: {{gbps: 3200, rdma: infiniband}}}}
workloads:
  - {{id: w, kind: training, gpu: h100-sxm, gpus: 64, hours_per_day: 24, duration: 30d,
     step: {{compute_s: 1.0, gradient_gb: 2.0, overlap: 0.5}}}}
"""


@pytest.mark.parametrize("net", [{"gbps": 3200, "rdma": "infiniband"}, {"gbps": 10, "rdma": "roce"}],
                         ids=["infiniband", "10gbe"])
def test_a_replay_on_a_slow_lease_pays_its_overtime_as_plan_does(tmp_path: Path, net: dict[str, object]) -> None:
    # one 64-GPU job of 100 h on 64 leased cards: 6,400 GPU-hours on the lease, no burst; the span is 100 h.
    # lease 64 x 100 x 2.5 = 16,000 USD, overtime 6,400 x (s_b - 1) x 2.5 (s_b: plan's on the same trace)
    scen = tmp_path / "s.yaml"
    scen.write_text(SCENARIO.format(**net))
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,duration,gpus\n0,360000,64\n")
    sim = api.simulate(str(trace), "64", scenario=str(scen), trace_format="generic").to_json()
    (run,) = sim["runs"]
    plan = api.plan(str(scen), trace=str(trace), trace_format="generic")
    (pool,) = plan.pools
    s_b = pool.slowdown_bare_metal
    cost = run["cost"]
    assert cost["bare_metal_slowdown"] == pytest.approx(s_b, abs=1e-6)
    assert cost["total"] == pytest.approx(16_000 + 6_400 * (s_b - 1) * 2.5, rel=1e-6)
    assert cost.get("overtime", 0.0) == pytest.approx(6_400 * (s_b - 1) * 2.5, rel=1e-6, abs=1e-9)
    # the same pool and usage cost the same in both (plan leases the job's 64 cards here)
    assert pool.reserved == 64
    assert cost["per_month"] == pytest.approx(pool.hybrid_per_month, rel=1e-4)

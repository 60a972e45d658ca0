"""plan times the work on the bare-metal offer as compare does (issue 24): a slow network costs the lease.

The leased cards hold the work at its width and run it s_b times as long (s_b: compare's slowdown of the
work on that offer against ideal dedicated bare metal with a full fabric); the extra (s_b - 1) card-hours
are lease overtime at the lease's price and ops per card-hour (`engines.planner`).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from gpuplan import api

SCENARIO = """
version: 1
currency: USD
offers:
  - {{id: bm, gpu: h100-sxm, mode: bare-metal, price: {{amount: 2.5, per: gpu-hour}}, interruptions_per_gpu_day: 0,
     ops: 0h/node-month, setup: 0h, network: {{gbps: {gbps}, rdma: {rdma}}}}}
{container}workloads:
  - {{id: w, kind: training, gpu: h100-sxm, gpus: 64, hours_per_day: 24, duration: 30d,
     step: {{compute_s: 1.0, gradient_gb: 2.0, overlap: 0.5}}}}
"""
CONTAINER = """  - {id: ct, gpu: h100-sxm, mode: container, tenancy: dedicated, price: {amount: 4.0, per: gpu-hour},
     interruptions_per_gpu_day: 0, ops: 0h/node-month, setup: 0h, network: {gbps: 3200, rdma: infiniband}}
"""
IB = {"gbps": 3200, "rdma": "infiniband"}  # 8 x 400 Gb/s a node: the reference fabric
ETH = {"gbps": 10, "rdma": "roce"}  # 10 GbE
GPU_HOURS = 64 * 24 * 30  # the job's dedicated GPU-hours in its 30 days (= one month)


def _write(tmp_path: Path, net: dict[str, object], container: bool = False) -> Path:
    p = tmp_path / f"s-{net['gbps']}-{int(container)}.yaml"
    p.write_text(SCENARIO.format(container=CONTAINER if container else "", **net))
    return p


def _compare_bm(path: Path) -> dict:
    doc = api.compare(str(path)).document_data()
    (w,) = doc["workloads"]
    return {o["offer"]: o for o in w["options"]}


def test_a_slow_network_costs_the_lease_what_compare_says(tmp_path: Path) -> None:
    plans, used = {}, {}
    for name, net in (("ib", IB), ("eth", ETH)):
        path = _write(tmp_path, net)
        (pool,) = api.plan_scenario(str(path))["pools"]
        bm = _compare_bm(path)["bm"]
        s_b = bm["time"]["slowdown"]
        assert pool["slowdown_bare_metal"] == pytest.approx(s_b, abs=1e-4)
        assert pool["reserved_gpus"] == 64  # the job's width: the stretch adds no card
        # by hand: 64 cards x 720 h x 2.5 USD, and (s_b - 1) x 46,080 GPU-hours of overtime at 2.5 USD
        lease, overtime = 64 * 720 * 2.5, (s_b - 1) * GPU_HOURS * 2.5
        assert pool["cost_per_month"]["lease"] == pytest.approx(lease)
        assert pool["cost_per_month"].get("overtime", 0.0) == pytest.approx(overtime, rel=1e-4, abs=0.01)
        assert pool["cost_per_month"]["hybrid"] == pytest.approx(lease * s_b, rel=1e-4)
        # the lease runs compare's GPU-hours used on that offer (a one-month job: per month = its total)
        assert pool["gpu_hours_per_month"]["bare_metal"] == pytest.approx(bm["time"]["gpu_hours_used"], rel=1e-6)
        assert pool["gpu_hours_per_month"]["bare_metal"] == pytest.approx(GPU_HOURS * s_b, rel=1e-4)
        plans[name], used[name] = pool["cost_per_month"]["hybrid"], s_b
    # the ring's 2 x 63/64 x 2 GB a step: hidden behind the 1 s step on the reference fabric, so s_b = 1 there;
    # on 10 GbE (1.15 GB/s) 3.4 s of it, 0.5 s hidden at most: >= 3.9 s a step (tests/unit/test_time_model.py)
    assert used["ib"] == pytest.approx(1.0)
    assert used["eth"] >= 3.0
    assert plans["eth"] / plans["ib"] == pytest.approx(used["eth"] / used["ib"], rel=1e-4)
    t_eth = 2 * 63 / 64 * 2.0 / (10 / 8 * 0.92)
    assert plans["eth"] / plans["ib"] >= 1.0 + t_eth - 0.5 - 1e-6


def test_with_containers_beside_it_plan_and_compare_choose_alike(tmp_path: Path) -> None:
    # containers at 4.0 USD on the reference fabric (s_c = 1): 46,080 x 4.0 = 184,320 a month; the lease is
    # 115,200 on InfiniBand (plan leases the job's 64 cards) and 115,200 x s_b >= 345,600 on 10 GbE (plan rents)
    for net, leased in ((IB, 64), (ETH, 0)):
        path = _write(tmp_path, net, container=True)
        doc = api.plan_scenario(str(path))
        (pool,) = doc["pools"]
        options = _compare_bm(path)
        cheapest = min(options.values(), key=lambda o: o["cost"]["total"])
        assert pool["reserved_gpus"] == leased
        assert cheapest["offer"] == ("bm" if leased else "ct")
        assert doc["cost_per_month"]["hybrid"] == pytest.approx(cheapest["cost"]["total"], rel=1e-6)
        assert doc["cost_per_month"]["hybrid"] == pytest.approx(min(115_200 * pool["slowdown_bare_metal"], 184_320),
                                                                rel=1e-4)


def test_an_ideal_offer_leaves_the_plan_as_before(tmp_path: Path) -> None:
    # s_b = 1 (the reference fabric, no interruptions): the seed article's sums exactly, no overtime.
    # 4 cards x 200 CNY x 30 days = 24,000; 2 cards x 2.5 h x 30 days = 150 GPU-hours x 10 CNY = 1,500
    text = """
version: 1
currency: CNY
offers:
  - {id: bm, gpu: ascend-910b, mode: bare-metal, price: {amount: 200, per: gpu-day}, min_term: 30d,
     ops: 0h/node-month, setup: 0h, interruptions_per_gpu_day: 0, interconnect: hccs, rdma: roce, network_gbps: 100}
  - {id: ct, gpu: ascend-910b, mode: container, price: {amount: 10, per: gpu-hour}, interruptions_per_gpu_day: 0,
     overhead: {compute: 0, interconnect: 1, jitter: 0}}
workloads:
  - {id: core, kind: training, gpu: ascend-910b, gpus: 4, hours_per_day: 24, duration: 30d, utilization: 0.85}
  - {id: exp, kind: experiment, gpu: ascend-910b, gpus: 2, hours_per_day: 2.5, window: "10:00-18:00",
     duration: 30d, utilization: 0.7}
"""
    path = tmp_path / "ideal.yaml"
    path.write_text(text)
    doc = api.plan_scenario(str(path))
    (pool,) = doc["pools"]
    assert pool["slowdown_bare_metal"] == 1.0
    assert "overtime" not in pool["cost_per_month"]
    assert pool["reserved_gpus"] == 4
    assert doc["cost_per_month"]["hybrid"] == pytest.approx(24_000 + 1_500)
    assert doc["cost_per_month"]["all_bare_metal"] == pytest.approx(6 * 200 * 30)
    assert pool["gpu_hours_per_month"]["bare_metal"] == pytest.approx(4 * 24 * 30)


def test_plan_cost_moves_continuously_with_the_network(tmp_path: Path) -> None:
    # hybrid = min over R of costs each linear in s_b with slope (served GPU-hours) x the overtime rate
    # <= 46,080 x 2.5: so |d hybrid| <= 115,200 |d s_b| between any two networks, and more Gb/s never costs more
    points = [10 * (3200 / 10) ** (i / 47) for i in range(48)]
    costs, sbs = [], []
    for g in points:
        path = tmp_path / "sweep.yaml"
        path.write_text(SCENARIO.format(container=CONTAINER, gbps=f"{g:.6f}", rdma="roce"))
        doc = api.plan_scenario(str(path))
        costs.append(doc["cost_per_month"]["hybrid"])
        sbs.append(doc["pools"][0]["slowdown_bare_metal"])
    for i in range(1, len(points)):
        assert costs[i] <= costs[i - 1] + 1e-6
        assert abs(costs[i] - costs[i - 1]) <= GPU_HOURS * 2.5 * abs(sbs[i] - sbs[i - 1]) + 0.01 + 1e-4 * costs[i]
    assert costs[0] == pytest.approx(184_320)  # 10 GbE: containers
    assert costs[-1] == pytest.approx(115_200 * sbs[-1], rel=1e-6)  # the full fabric: the lease
    assert not math.isclose(sbs[0], sbs[-1])


def test_overtime_pays_the_lease_ops_per_card_and_plan_stays_within_compare(tmp_path: Path) -> None:
    # ops 8 h a node-month at 150 USD an hour, spread over the node's 8 cards: 8 x 150 / 720 / 8 = 0.2083 USD
    # a card-hour beside the 2.5 USD lease, for each of the (s_b - 1) x 46,080 card-hours of overtime
    text = SCENARIO.format(container="", **ETH).replace("ops: 0h/node-month", "ops: 8h/node-month")
    path = tmp_path / "ops.yaml"
    path.write_text(text.replace("currency: USD", "currency: USD\nteam: {engineer_hour_cost: 150}"))
    (pool,) = api.plan_scenario(str(path))["pools"]
    s_b = pool["slowdown_bare_metal"]
    rate = 2.5 + 8 * 150 / 720 / 8
    assert pool["overtime_per_gpu_hour"] == pytest.approx(rate, rel=1e-4)
    assert pool["cost_per_month"]["overtime"] == pytest.approx((s_b - 1) * GPU_HOURS * rate, rel=1e-4)
    assert pool["cost_per_month"]["ops"] == pytest.approx(8 * 8 * 150)  # 8 nodes' ops over the month
    # compare bills the same lease stretched by s_b: the job's calendar, in whole days, so plan is no dearer
    bm = _compare_bm(path)["bm"]
    assert pool["cost_per_month"]["hybrid"] <= bm["cost"]["per_month"] + 1e-6
    assert pool["cost_per_month"]["hybrid"] == pytest.approx(bm["cost"]["per_month"], rel=2e-3)


def test_the_sites_example_plans_no_dearer_than_compare() -> None:
    # bare metal 1 Gb/s away from the data, 100 Gb/s RoCE a node against the full fabric's 8 x 400 Gb/s: s_b = 4.2
    root = Path(__file__).resolve().parents[2] / "examples" / "sites-data.yaml"
    doc = api.plan_scenario(str(root))
    (pool,) = doc["pools"]
    assert pool["slowdown_bare_metal"] > 4
    options = _compare_bm(root)
    assert doc["cost_per_month"]["hybrid"] <= min(o["cost"]["per_month"] for o in options.values()) + 1e-6


def test_the_pool_leases_the_offer_cheapest_per_dedicated_gpu_hour(tmp_path: Path) -> None:
    """Two leases of the same cards: 2.0 USD a GPU-hour on 10 GbE, 2.5 on InfiniBand. By price alone the
    10 GbE one is cheaper; per dedicated GPU-hour of this job it is 2.0 x s_b (s_b ~ 4, compare's slowdown
    there) against 2.5 x 1.0, so plan leases the InfiniBand one, as compare recommends it."""
    text = SCENARIO.format(container="", **IB)
    eth = ("  - {id: bm-eth, gpu: h100-sxm, mode: bare-metal, price: {amount: 2.0, per: gpu-hour}, "
           "interruptions_per_gpu_day: 0,\n     ops: 0h/node-month, setup: 0h, network: {gbps: 10, rdma: roce}}\n")
    path = tmp_path / "two-leases.yaml"
    path.write_text(text.replace("workloads:", eth + "workloads:"))
    options = _compare_bm(path)
    s_eth = options["bm-eth"]["time"]["slowdown"]
    assert 2.0 * s_eth > 2.5 * options["bm"]["time"]["slowdown"]  # the premise, by compare's own figures
    plan = api.plan_scenario(str(path))
    (pool,) = plan["pools"]
    assert pool["offer_bare_metal"] == "bm"
    # by hand: 64 cards x 720 h x 2.5 USD on the full fabric, no overtime
    assert pool["cost_per_month"]["hybrid"] == pytest.approx(64 * 720 * 2.5, rel=1e-6)

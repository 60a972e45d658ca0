"""commit bills the bare-metal offer's own slowdown as plan does (issue 24): lease overtime.

The leased cards run the work s_b times as long (s_b: compare's slowdown of the work on that offer against
ideal dedicated bare metal with a full fabric); each served dedicated GPU-hour takes (s_b - 1) card-hours
more at the offer's price and ops per card-hour. Figures are worked out by hand from
tests/unit/test_plan_bare_metal_slowdown.py's 64-GPU job: 46,080 dedicated GPU-hours a month, 2.5 USD a
card-hour on bare metal, s_b = 1 on 8 x 400 Gb/s InfiniBand and about 3.99 on 10 GbE RoCE.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan import api
from gpuplan.engines.commit import commit
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import load_scenario

CAT = load_catalog()
BM = """  - {{id: {id}, gpu: h100-sxm, mode: bare-metal, price: {{amount: {price}, per: gpu-hour}},
     interruptions_per_gpu_day: 0, ops: 0h/node-month, setup: 0h, network: {{gbps: {gbps}, rdma: {rdma}}}}}
"""
SCENARIO = """
version: 1
currency: USD
offers:
{bms}  - {{id: ct, gpu: h100-sxm, mode: container, tenancy: dedicated, price: {{amount: {ct}, per: gpu-hour}},
     interruptions_per_gpu_day: 0, ops: 0h/node-month, setup: 0h, network: {{gbps: 3200, rdma: infiniband}}}}
workloads:
  - {{id: w, kind: training, gpu: h100-sxm, gpus: 64, hours_per_day: 24, duration: 30d{requires},
     step: {{compute_s: 1.0, gradient_gb: 2.0, overlap: 0.5}}}}
market: {{horizon: 12mo}}
"""
IB = {"gbps": 3200, "rdma": "infiniband"}
ETH = {"gbps": 10, "rdma": "roce"}
GPU_HOURS = 64 * 24 * 30  # a month of the job's dedicated GPU-hours
LEASE = GPU_HOURS * 2.5  # 115,200 USD: 64 cards for a month at 2.5 USD


def _bm(net: dict[str, object], offer: str = "bm", price: float = 2.5) -> str:
    return BM.format(id=offer, price=price, **net)


def _run(tmp_path: Path, bms: str, ct: float, requires: str = "") -> tuple[dict, object]:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(bms=bms, ct=ct, requires=requires))
    plan = api.plan_scenario(str(path))
    return plan, commit(load_scenario(path, CAT), CAT, paths=20)


def _s_b(tmp_path: Path, net: dict[str, object]) -> float:
    plan, _ = _run(tmp_path, _bm(net), 100.0)
    return float(plan["pools"][0]["slowdown_bare_metal"])


def test_a_slow_lease_that_still_wins_costs_its_overtime_as_in_plan(tmp_path: Path) -> None:
    # containers at 12 USD (552,960 a month) lose to either lease: commit leases the 64 cards on both networks,
    # and its 12 months cost 12 x 115,200 x s_b: 1,382,400 on InfiniBand, about 5.5 million on 10 GbE
    for net in (IB, ETH):
        plan, res = _run(tmp_path, _bm(net), 12.0)
        (pool,) = plan["pools"]
        s_b = pool["slowdown_bare_metal"]
        assert {t.cards for t in res.tranches} == {64}
        assert res.gpus[0].terms[0].slowdown == pytest.approx(s_b, abs=1e-6)
        assert res.cost.expected == pytest.approx(12 * LEASE * s_b, rel=1e-5)
        assert res.cost.expected == pytest.approx(12 * pool["cost_per_month"]["hybrid"], rel=1e-6)
    assert s_b >= 3.0  # 10 GbE: the ring all-reduce's 3.4 s a step against a 1 s step (issue 24's figure)


@pytest.mark.parametrize("net", [IB, ETH], ids=["infiniband", "10gbe"])
def test_the_slow_lease_loses_to_containers_in_commit_exactly_when_it_does_in_plan(tmp_path: Path,
                                                                                 net: dict[str, object]) -> None:
    # a month of the lease costs 115,200 x s_b, of containers 46,080 x c (s_c = 1): break-even at c = 2.5 s_b.
    # Below (s_b - 1) x 2.5 / s_c a spilled GPU-hour's effective price s_c c - (s_b - 1) p is negative too.
    s_b = _s_b(tmp_path, net)
    even = 2.5 * s_b
    for c in (0.5 * even, 0.99 * even, 1.01 * even, 2 * even):
        plan, res = _run(tmp_path, _bm(net), round(c, 6))
        leased = plan["pools"][0]["reserved_gpus"]
        assert leased == (64 if c > even else 0), c
        assert {t.cards for t in res.tranches} == ({64} if leased else set()), c
        assert res.cost.expected == pytest.approx(12 * min(LEASE * s_b, GPU_HOURS * round(c, 6)), rel=1e-5)
        assert res.cost.expected == pytest.approx(12 * plan["cost_per_month"]["hybrid"], rel=1e-6)


def test_work_pinned_to_bare_metal_pays_the_overtime_even_where_containers_are_cheaper(tmp_path: Path) -> None:
    # compliance work must stay on the lease: 64 cards and their overtime, even with containers at 1 USD
    # (a spilled GPU-hour would be worth 1 - 2.5 (s_b - 1) < 0: the pinned cards still serve it)
    plan, res = _run(tmp_path, _bm(ETH), 1.0, requires=", requires: [compliance]")
    (pool,) = plan["pools"]
    s_b = pool["slowdown_bare_metal"]
    assert 1.0 - 2.5 * (s_b - 1) < 0
    assert {t.cards for t in res.tranches} == {64}
    assert res.cost.expected == pytest.approx(12 * LEASE * s_b, rel=1e-5)
    assert res.cost.expected == pytest.approx(12 * pool["cost_per_month"]["hybrid"], rel=1e-6)


def test_each_bare_metal_offer_bills_its_own_network(tmp_path: Path) -> None:
    # a 10 GbE lease at 2.4 USD and an InfiniBand one at 2.5 USD, containers at 12: the cheaper list price runs
    # the job 3.99x as long (2.4 x 3.99 = 9.57 USD a GPU-hour of work); commit signs the InfiniBand lease only
    bms = _bm(ETH, "eth", 2.4) + _bm(IB, "ib", 2.5)
    _plan, res = _run(tmp_path, bms, 12.0)
    assert {(t.offer, t.cards) for t in res.tranches} == {("ib", 64)}
    assert res.cost.expected == pytest.approx(12 * LEASE, rel=1e-5)
    slow = {o.offer: o.slowdown for o in res.gpus[0].terms}
    assert slow["ib"] == pytest.approx(1.0, abs=1e-6) and slow["eth"] >= 3.0

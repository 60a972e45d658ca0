"""Issue 24's done-when checks: one physical time model, from each offer's own GPU, links and network."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.cli import main
from gpuplan.engines.cost import option_cost
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text
from gpuplan.models.perf import slowdown

CAT = load_catalog()

NETWORKS = """
version: 1
currency: USD
offers:
  - {{id: ib, gpu: h100-sxm, mode: bare-metal, price: {{amount: 2.5, per: gpu-hour}}, interruptions_per_gpu_day: 0,
     network: {{gbps: 3200, rdma: infiniband}}}}
  - {{id: eth, gpu: h100-sxm, mode: bare-metal, price: {{amount: 1.5, per: gpu-hour}}, interruptions_per_gpu_day: 0,
     network: {{gbps: 10, rdma: {rdma}}}}}
workloads:
  - {{id: w, kind: training, gpu: h100-sxm, gpus: {gpus}, hours_per_day: 24, duration: 30d, {comm}}}
"""


def _run_hours(text: str) -> dict[str, float]:
    s = scenario_from_text(text, catalog=CAT)
    w = s.workloads[0]
    return {o.id: option_cost(w, o, s, CAT).run_hours for o in s.offers}


@pytest.mark.parametrize("rdma", ["roce", "none"])
def test_64_gpus_2gb_gradients_run_3x_longer_on_10gbe_than_on_8x400g_infiniband(rdma: str) -> None:
    # by hand: the ring moves 2 x 63/64 x 2 GB = 3.94 GB a step; on 8 x 400G IB at 0.92 efficiency
    # (368 GB/s) that is 0.011 s, hidden behind the 1 s step; on 10 GbE (1.15 GB/s, x 0.6 over TCP)
    # 3.4-5.7 s, of which at most the 0.5 s of overlappable compute hides: >= 3.9 s a step against ~1.0
    step = "step: {compute_s: 1.0, gradient_gb: 2.0, overlap: 0.5}"
    h = _run_hours(NETWORKS.format(rdma=rdma, gpus=64, comm=step))
    ring = 2 * 63 / 64 * 2.0
    t_eth = ring / (10 / 8 * 0.92 * (0.6 if rdma == "none" else 1.0))
    assert h["eth"] / h["ib"] >= 3.0
    assert h["eth"] / h["ib"] >= (1.0 + t_eth - 0.5) / (1.0 + ring / 368)
    # a `communication:` share in place of the step: clearly longer too
    h = _run_hours(NETWORKS.format(rdma=rdma, gpus=64, comm="communication: 0.2"))
    assert h["eth"] / h["ib"] >= 3.0
    # one 8-GPU node never touches the network: both run equally long
    for comm in (step, "communication: 0.2"):
        h = _run_hours(NETWORKS.format(rdma=rdma, gpus=8, comm=comm))
        assert h["eth"] == pytest.approx(h["ib"])


SPEED = """
version: 1
currency: CNY
offers:
  - {id: bm-910b, gpu: ascend-910b, mode: bare-metal, price: {amount: 220, per: gpu-day}, interruptions_per_gpu_day: 0}
  - {id: bm-h100, gpu: h100-sxm, mode: bare-metal, price: {amount: 700, per: gpu-day}, interruptions_per_gpu_day: 0}
  - {id: ct-h100, gpu: h100-sxm, mode: container, tenancy: dedicated, price: {amount: 30, per: gpu-hour}}
workloads:
  - {id: w, kind: training, gpu: [ascend-910b, h100-sxm], gpus: 8, hours_per_day: 24, duration: 30d}
"""


def test_wall_time_is_run_time_plus_setup_recovery_transfer_and_a_faster_gpu_shortens_it() -> None:
    s = scenario_from_text(SPEED, catalog=CAT)
    w = s.workloads[0]
    costs = {o.id: option_cost(w, o, s, CAT) for o in s.offers}
    for o in s.offers:
        c = costs[o.id]
        # 24 h a day, 7 days a week: the calendar is the running time plus the waits
        assert c.wall_hours == pytest.approx(o.setup_hours + c.run_hours + c.interruptions.recovery_hours
                                             + c.transfer.hours)
    slow, fast = costs["bm-910b"], costs["bm-h100"]
    factor = 300 / 989  # the roofline: dense BF16 910B against H100 (catalog)
    assert fast.slowdown.gpu_speed_factor == pytest.approx(factor)
    assert fast.run_hours == pytest.approx(slow.run_hours * factor)
    assert fast.wall_hours - 12 == pytest.approx((slow.wall_hours - 12) * factor)  # 12 h bare-metal setup
    assert fast.wall_hours < 0.35 * slow.wall_hours


def test_published_benchmark_ratio_before_the_roofline() -> None:
    text = SPEED.replace("ascend-910b", "a100-80g")
    s = scenario_from_text(text, catalog=CAT)
    sd = slowdown(s.workloads[0], s.offer("bm-h100"), CAT)
    assert sd.speed_source == "benchmark:mlperf-training-a100-h100-bf16"
    assert sd.gpu_speed_factor == pytest.approx(1 / 1.9)  # not 312 / 989 = 1 / 3.17


def test_reasons_never_say_minus_n_percent_slower_and_the_verdict_labels_match(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(SPEED.replace("price: {amount: 30, per: gpu-hour}", "price: {amount: 9, per: gpu-hour}"),
                 encoding="utf-8")
    for lang in ("en", "zh"):
        assert main(["compare", str(p), "-o", "markdown", "--lang", lang]) == 0
        out = capsys.readouterr().out
        assert not re.search(r"-\d[\d.,]*% slower", out) and not re.search(r"慢 -\d", out)
    assert main(["compare", str(p), "-o", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "3.3x faster" in out  # H100 against 910B: 989 / 300


VM = """
version: 1
currency: USD
offers:
  - {id: bm, gpu: h100-sxm, mode: bare-metal, price: {amount: 9, per: gpu-hour}, min_term: 30d}
  - {id: lambda-h100, gpu: h100-sxm, mode: vm, price: {amount: 3, per: gpu-hour}}
workloads:
  - {id: w, kind: experiment, gpu: h100-sxm, gpus: 8, hours_per_day: 6, duration: 30d}
"""


def test_verdict_platform_label_is_the_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "vm.yaml"
    p.write_text(VM, encoding="utf-8")
    assert main(["compare", str(p), "-o", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "**Verdict:** lambda-h100 (VM)" in out
    assert "| **lambda-h100** | VM |" in out


TENANCY = """
version: 1
currency: USD
offers:
  - {{id: x, gpu: h100-sxm, mode: container, {tenancy} price: {{amount: 3, per: gpu-hour}},
     network: {{gbps: 3200, rdma: infiniband}}}}
workloads:
  - {{id: w, kind: training, gpu: h100-sxm, gpus: {gpus}, hours_per_day: 24, duration: 30d}}
"""


def _sd(tenancy: str, gpus: int) -> object:
    s = scenario_from_text(TENANCY.format(tenancy=tenancy, gpus=gpus), catalog=CAT)
    return slowdown(s.workloads[0], s.offer("x"), CAT)


def test_unknown_tenancy_is_a_range_from_dedicated_to_shared_host() -> None:
    sd = _sd("", 64)
    assert sd.low <= 1.03 and sd.high >= 1.10  # type: ignore[attr-defined]
    assert sd.low == pytest.approx(_sd("tenancy: dedicated,", 64).low)  # type: ignore[attr-defined]
    # the cost's low and high ends use it: the worst corner is the shared host at the high price
    s = scenario_from_text(TENANCY.format(tenancy="", gpus=64), catalog=CAT)
    c = option_cost(s.workloads[0], s.offer("x"), s, CAT)
    assert c.total_low < c.total_mid * 0.9 and c.wall_hours_low < c.wall_hours < c.wall_hours_high + 1e-9
    # a stated tenancy is one number
    shared = _sd("tenancy: shared-node,", 64)
    assert shared.low == pytest.approx(shared.high, abs=0.03)  # type: ignore[attr-defined]


def test_jitter_is_fluctuation_one_gpu_pays_the_mean_64_the_expected_max() -> None:
    one, many = _sd("tenancy: shared-node,", 1), _sd("tenancy: shared-node,", 64)
    assert one.terms.straggler == pytest.approx(0.125 / 2)  # type: ignore[attr-defined]  # U(0, 0.125)'s mean
    assert many.terms.straggler == pytest.approx(0.125 * 64 / 65)  # type: ignore[attr-defined]
    assert one.total < many.total  # type: ignore[attr-defined]


# Continuity (issue 24): a one-point change of utilisation, overlap, data wait or communication share
# moves the slowdown by at most two points, on every platform of the catalog with a full fabric.
PLATFORMS = [
    "mode: container, tenancy: shared-node", "mode: container, tenancy: shared-gpu", "mode: container",
    "mode: container, tenancy: dedicated", "mode: vm, network: {gbps: 3200, rdma: infiniband, nic: sr-iov}",
    "mode: vm", "mode: bare-metal",
]


def _one(platform: str, gpus: int, extra: str) -> float:
    net = "" if "network:" in platform else ", network: {gbps: 3200, rdma: infiniband}"
    text = (f"version: 1\ncurrency: USD\noffers:\n  - {{id: x, gpu: h100-sxm, {platform}{net}, "
            f"price: {{amount: 3, per: gpu-hour}}}}\nworkloads:\n  - {{id: w, kind: training, gpu: h100-sxm, "
            f"gpus: {gpus}, hours_per_day: 24, duration: 30d, {extra}}}\n")
    s = scenario_from_text(text, catalog=CAT)
    return slowdown(s.workloads[0], s.offer("x"), CAT).total


@settings(max_examples=60, deadline=None)
@given(platform=st.sampled_from(PLATFORMS), gpus=st.sampled_from([1, 2, 8, 16, 64, 512]),
       x=st.floats(0.05, 0.98), other=st.floats(0.0, 0.58),
       which=st.sampled_from(["utilization", "data_wait", "communication", "overlap"]))
def test_no_cliffs_one_point_moves_slowdown_at_most_two_points(platform: str, gpus: int, x: float, other: float,
                                                               which: str) -> None:
    def extra(v: float) -> str:
        if which == "utilization":
            return f"utilization: {v:.6f}, communication: {other:.6f}"
        if which == "data_wait":
            return f"data_wait: {min(v, 0.99):.6f}, communication: {other:.6f}"
        if which == "communication":
            return f"communication: {min(v, 0.99):.6f}"
        return f"step: {{compute_s: 0.5, gradient_gb: {other * 4:.6f}, overlap: {min(v, 1.0):.6f}}}"

    a, b = _one(platform, gpus, extra(x)), _one(platform, gpus, extra(x + 0.01))
    assert abs(b - a) <= 0.02 + 1e-9, (platform, gpus, which, x, a, b)


SHARING = """
version: 1
currency: USD
offers:
  - {{id: mig, gpu: h100-sxm, mode: container, tenancy: dedicated, sharing: mig, price: {{amount: 7, per: gpu-hour}},
     overhead: {{compute: 0, jitter: 0}}, interruptions_per_gpu_day: 0}}
  - {{id: mps, gpu: h100-sxm, mode: container, tenancy: dedicated, sharing: mps, price: {{amount: 7, per: gpu-hour}},
     overhead: {{compute: 0, jitter: 0}}, interruptions_per_gpu_day: 0}}
  - {{id: ts, gpu: h100-sxm, mode: container, tenancy: dedicated, sharing: time-slicing,
     price: {{amount: 7, per: gpu-hour}}, overhead: {{compute: 0, jitter: 0}}, interruptions_per_gpu_day: 0}}
  - {{id: whole, gpu: h100-sxm, mode: container, tenancy: dedicated, price: {{amount: 7, per: gpu-hour}},
     overhead: {{compute: 0, jitter: 0}}, interruptions_per_gpu_day: 0}}
workloads:
  - {{id: w, kind: inference, gpu: h100-sxm, gpus: {gpus}, hours_per_day: 24, duration: 30d{mem}}}
"""


def test_gpu_sharing_modes_interfere_differently_and_bill_their_slice() -> None:
    s = scenario_from_text(SHARING.format(gpus=0.5, mem=""), catalog=CAT)
    w = s.workloads[0]
    assert w.gpus == 1 and w.share == 0.5
    c = {o.id: option_cost(w, o, s, CAT) for o in s.offers}
    # catalog `sharing`: MIG isolated (0), MPS +8% (GKE case study), time-slicing +30% (NVIDIA report)
    assert c["mig"].slowdown.total == pytest.approx(1.0)
    assert c["mps"].slowdown.total == pytest.approx(1.08)
    assert c["ts"].slowdown.total == pytest.approx(1.30)
    # half a card on MPS: half a card's hours times its slowdown, 24 h x 30 d
    assert c["mps"].gpu_hours_paid == pytest.approx(0.5 * 720 * 1.08)
    assert c["mps"].total_mid == pytest.approx(0.5 * 720 * 1.08 * 7 + c["mps"].setup)
    # MIG rounds half a card up to 4/7 of an H100; no sharing stated: a whole card
    assert c["mig"].gpu_hours_paid == pytest.approx(4 / 7 * 720)
    assert c["whole"].gpu_hours_paid == pytest.approx(720) and c["whole"].slowdown.total == pytest.approx(1.0)


def test_a_slice_is_checked_against_its_memory() -> None:
    res = api_compare(SHARING.format(gpus=0.25, mem=", memory_gb: 30"))
    feasible = {r.offer.id: r.feasible for r in res.advice[0].options}
    # a quarter: MIG 2/7 with 2/8 of 80 GB = 20 GB; MPS and time-slicing a quarter, 20 GB: all too small
    assert feasible == {"mig": False, "mps": False, "ts": False, "whole": True}
    res = api_compare(SHARING.format(gpus=0.5, mem=", memory_gb: 30"))
    feasible = {r.offer.id: r.feasible for r in res.advice[0].options}
    assert feasible == {"mig": True, "mps": True, "ts": True, "whole": True}  # 40 GB each


def test_fractions_pack_onto_cards_in_the_plan_demand() -> None:
    from gpuplan.inputs.demand import from_schedules

    text = SHARING.format(gpus=0.5, mem="") + (
        "  - {id: w2, kind: inference, gpu: h100-sxm, gpus: 0.5, hours_per_day: 24, duration: 30d}\n")
    s = scenario_from_text(text, catalog=CAT)
    d = from_schedules(s.workloads)
    assert float(d.by_gpu["h100-sxm"].max()) == pytest.approx(1.0)  # two halves: one leased card


def test_gpus_is_whole_or_a_fraction_of_one_card() -> None:
    with pytest.raises(Exception, match="whole number"):
        scenario_from_text(SHARING.format(gpus=1.5, mem=""), catalog=CAT)


def api_compare(text: str):  # type: ignore[no-untyped-def]
    from gpuplan import api

    return api.compare_text(text)

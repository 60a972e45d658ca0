"""Spot capacity in `gpuplan compare` (issue 26): the issue's done-when case, the rules, and the input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.cli import main

# 64 H100s for 30 days; spot at 30% of on-demand (2.064 of 6.88 USD per GPU-hour), 0.05 reclaims per node-hour
SCENARIO = """version: 1
currency: USD
offers:
  - {{id: h100-on-demand, gpu: h100-sxm, mode: vm, tenancy: dedicated, price: {{amount: 6.88, per: gpu-hour}},
     network_gbps: 3200, rdma: infiniband}}
  - id: h100-spot
    gpu: h100-sxm
    mode: vm
    tenancy: dedicated
    capacity: spot
    preemption: {{rate: 0.05, per: node-hour, notice: 2m}}
    price: {{amount: 2.064, per: gpu-hour}}
    network_gbps: 3200
    rdma: infiniband
  - {{id: h100-bare-metal, gpu: h100-sxm, mode: bare-metal, price: {{amount: 110, per: gpu-day}}, min_term: 30d,
     network_gbps: 3200, rdma: infiniband}}
workloads:
  - {{id: pretrain, kind: training, gpu: h100-sxm, gpus: 64, hours_per_day: 24, duration: 30d,
     checkpoint_interval: {ckpt}{requires}}}
"""


def _compare(tmp_path: Path, capsys: pytest.CaptureFixture[str], ckpt: str, requires: str = "") -> dict:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(ckpt=ckpt, requires=requires))
    assert main(["compare", str(path), "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)["workloads"][0]


def _options(w: dict) -> dict[str, dict]:
    return {o["offer"]: o for o in w["options"]}


def test_without_checkpoints_spot_cannot_finish_and_compare_says_why(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    w = _compare(tmp_path, capsys, "none")
    spot = _options(w)["h100-spot"]
    assert spot["capacity"] == "spot" and not spot["feasible"]
    assert "cannot finish" in spot["infeasible_reason"] and "no checkpoints" in spot["infeasible_reason"]
    assert w["recommendation"]["offer"] in ("h100-on-demand", "h100-bare-metal")
    assert any(r.startswith("spot h100-spot cannot finish") for r in w["recommendation"]["reasons"])


def test_with_30_minute_checkpoints_spot_wins_and_counts_its_lost_work(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    w = _compare(tmp_path, capsys, "30m")
    opts = _options(w)
    spot, od = opts["h100-spot"], opts["h100-on-demand"]
    assert w["recommendation"]["offer"] == "h100-spot"
    # 8 nodes x 0.05 = 0.4 reclaims an hour; each 0.5 h segment takes (e^0.2 - 1)(1/0.4 + 0.5 h) = 0.6642 h:
    # 1.3284 running hours per hour of work, and (e^0.2 - 1) / 0.5 h = 0.4428 reclaims per hour of work
    work = od["time"]["gpu_hours_used"] / 64  # per GPU: the same VM slowdown and hardware rework on both
    assert spot["time"]["gpu_hours_used"] == pytest.approx(64 * work * 1.328417, rel=1e-3)
    assert spot["time"]["preemptions"] == pytest.approx(work * 0.442806, rel=1e-3)
    assert spot["time"]["lost_gpu_hours"] == pytest.approx(64 * work * 0.328417, rel=1e-3)
    assert spot["cost"]["rental"] == pytest.approx(spot["time"]["gpu_hours_used"] * 2.064, rel=1e-6)
    assert spot["time"]["p90_wall_hours"] > spot["time"]["wall_hours"]
    words = [r for r in w["recommendation"]["reasons"] if r.startswith("spot h100-spot costs 30% of h100-on-demand")]
    assert words and "24.7% of its GPU-hours" in words[0] and "0.5-hour checkpoint interval" in words[0]


def test_no_preemption_and_compliance_never_run_on_spot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for req in ("no-preemption", "compliance"):
        w = _compare(tmp_path, capsys, "30m", f", requires: [{req}]")
        spot = _options(w)["h100-spot"]
        assert not spot["feasible"] and "reclaimed" in spot["infeasible_reason"]
        assert w["recommendation"]["offer"] != "h100-spot"


@pytest.mark.parametrize(("change", "field", "words"), [
    ("    capacity: spot\n", "offers[1].capacity", "spot capacity is sold by the hour"),
    ("    preemption: {rate: 0.05, per: node-hour, notice: 2m}\n", "offers[1].preemption", "the capacity is on-demand"),
    ("    preemption: {rate: 0.05, per: node-hour, notice: 2m}\n", "offers[1].preemption.rate", "rate"),
])
def test_bad_spot_inputs_are_exit_2_with_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   change: str, field: str, words: str) -> None:
    text = SCENARIO.format(ckpt="30m", requires="")
    if field == "offers[1].capacity":  # a spot lease
        text = text.replace("price: {amount: 2.064, per: gpu-hour}",
                            "price: {amount: 50, per: gpu-day}\n    min_term: 30d")
    elif field == "offers[1].preemption":
        text = text.replace(change.replace("preemption", "capacity: spot\n    preemption"), change)
    else:
        text = text.replace("rate: 0.05,", "rate: -1,")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert main(["compare", str(path)]) == 2
    err = capsys.readouterr().err
    assert field in err and words in err and "Traceback" not in err

"""The examples the foundation issue says must come out right."""

from pathlib import Path

import pytest

from gpuplan import api
from gpuplan.inputs.catalog import load_catalog
from gpuplan.render.compare import compare_json

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CAT = load_catalog()


def _wl(result, wid):  # type: ignore[no-untyped-def]
    return next(a for a in result.advice if a.workload.id == wid)


def _codes(adv) -> set[str]:  # type: ignore[no-untyped-def]
    return {w.code for w in adv.warnings} | {w.code for r in adv.options for w in r.warnings}


def test_seed_910b_containers_win_by_40_percent_at_worst_corner() -> None:
    res = api.compare(EXAMPLES / "seed-910b.yaml")
    adv = _wl(res, "experiments-6h")
    assert adv.recommendation is not None and adv.recommendation.mode == "container"
    ct = next(r.cost for r in adv.options if r.offer.mode == "container")
    bm = next(r.cost for r in adv.options if r.offer.mode == "bare-metal")
    # worst corner for containers: container at its high price, bare metal at its low price
    assert ct.total_high <= 0.6 * bm.total_low
    assert adv.recommendation.dimensions["cost"].favors == "container"


def test_break_even_22_hours_without_overheads() -> None:
    text = """
version: 1
currency: CNY
offers:
  - {id: bm, gpu: ascend-910b, mode: bare-metal, price: {amount: 220, per: gpu-day}, min_term: 30d,
     setup: 0m, ops: 0h/node-month, overhead: {compute: 0, interconnect: 1, jitter: 0},
     interruptions_per_gpu_day: 0}
  - {id: ct, gpu: ascend-910b, mode: container, price: {amount: 10, per: gpu-hour},
     setup: 0m, ops: 0h/node-month, overhead: {compute: 0, interconnect: 1, jitter: 0},
     interruptions_per_gpu_day: 0}
workloads:
  - {id: w, kind: experiment, gpu: ascend-910b, gpus: 4, hours_per_day: 6, duration: 30d, utilization: 0.8}
"""
    res = api.compare_text(text)
    assert res.advice[0].break_even_hours == pytest.approx(22.0, abs=1e-4)
    flips = {f.parameter: f.value for f in res.advice[0].recommendation.flip}
    assert flips["hours_per_day"] == pytest.approx(22.0, abs=1e-4)


def test_h100_multinode_goes_bare_metal_on_price_and_dedicated_vms_are_close() -> None:
    """The clouds' 8-GPU instances are dedicated VMs with RDMA (issue 11): a few percent, not the
    article's shared-host 10-15%; bare metal wins on the hourly price."""
    res = api.compare(EXAMPLES / "h100-multinode.yaml")
    adv = res.advice[0]
    assert adv.recommendation.mode == "bare-metal"
    vms = [r for r in adv.options if r.offer.platform == "vm"]
    assert len(vms) == 2
    for r in vms:
        sd = r.cost.slowdown
        assert 1.0 < sd.total <= 1.06 and sd.straggler == 0.0 and sd.terms.inter_node > 0
    assert adv.recommendation.dimensions["cost"].favors == "bare-metal"


def test_rules_example() -> None:
    res = api.compare(EXAMPLES / "rules.yaml")
    bank = _wl(res, "bank-risk-model")
    assert bank.recommendation.mode == "bare-metal"  # compliance, however cheap containers are
    assert all(not r.feasible for r in bank.options if r.offer.mode == "container")
    assert _wl(res, "five-day-project").recommendation.mode == "container"
    starved = _wl(res, "data-starved")
    assert "low-utilization" in _codes(starved)
    assert starved.recommendation.dimensions["performance"].favors != "bare-metal"
    assert "min-term" in _codes(_wl(res, "five-day-project"))


def test_slow_network_warnings() -> None:
    res = api.compare(EXAMPLES / "slow-network.yaml")
    adv = res.advice[0]
    bm = next(r for r in adv.options if r.offer.id == "bm-a100-remote")
    codes = {w.code for w in bm.warnings}
    assert {"slow-network", "no-rdma"} <= codes
    ct = next(r for r in adv.options if r.offer.id == "ct-a800")
    assert not {"slow-network", "no-rdma"} & {w.code for w in ct.warnings}


def test_elastic_never_bare_metal() -> None:
    text = """
version: 1
currency: CNY
offers:
  - {id: bm, gpu: ascend-910b, mode: bare-metal, price: {amount: 1, per: gpu-day}}
  - {id: ct, gpu: ascend-910b, mode: container, price: {amount: 100, per: gpu-hour}}
workloads:
  - {id: serve, kind: inference, gpu: ascend-910b, gpus: 2, hours_per_day: 24, duration: 90d, requires: [elastic]}
"""
    adv = api.compare_text(text).advice[0]
    assert adv.recommendation.mode == "container"
    assert "ops-unpriced" in _codes(adv) and "utilization-assumed" in _codes(adv)


def test_json_contract_keys() -> None:
    data = compare_json(api.compare(EXAMPLES / "seed-910b.yaml").document("en"))
    assert data["schema"] == "gpuplan.compare/1" and data["currency"] == "CNY"
    wl = data["workloads"][0]
    assert set(wl) == {"id", "kind", "gpus", "gpu", "warnings", "options", "recommendation", "break_even"}
    opt = wl["options"][0]
    assert set(opt) == {"offer", "mode", "platform", "tenancy", "capacity", "gpu", "feasible", "infeasible_reason",
                        "cost", "time", "warnings"}
    assert set(opt["cost"]) == {"total", "low", "high", "per_month", "rental", "ops", "setup", "idle", "transfer"}
    assert set(opt["time"]) == {"run_hours", "wall_hours", "wall_hours_range", "gpu_hours_used", "gpu_hours_paid",
                                "slowdown", "slowdown_range", "slowdown_reference", "terms", "bound",
                                "gpu_speed", "transfer_hours", "recovery_hours", "interruptions",
                                "p90_wall_hours", "preemptions", "lost_gpu_hours"}
    assert set(opt["time"]["terms"]) == {"compute", "intra_node", "inter_node", "straggler", "data"}
    rec = wl["recommendation"]
    assert set(rec) == {"offer", "mode", "reasons", "dimensions", "flip"}
    assert set(rec["dimensions"]) == {"performance", "flexibility", "cost", "scenario"}
    for d in rec["dimensions"].values():
        assert d["favors"] in {"bare-metal", "container", "neither"} and d["reason"]
    assert all(set(f) == {"parameter", "value", "message"} for f in rec["flip"])


def test_chinese_output_has_no_missing_text() -> None:
    data = compare_json(api.compare(EXAMPLES / "rules.yaml").document("zh"))
    text = str(data)
    assert "硬性规则" in text and "利用率" in text

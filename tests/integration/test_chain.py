"""audit -> plan --demand -> every export, on one fixture: every workload and every number carried.

The fixture: three nodes logged by nvidia-smi for 6 hours (one sample a minute), each with another
GPU model, and a scenario with a workload per model plus one on a GPU that has no logs at all:
- h100 (8 cards, steady 80 %: 6.4 GPUs every hour), lease far cheaper than containers: the pool
  leases the peak, nothing spills -> `bare-metal`;
- a100 (4 cards, one busy hour), lease dearer than containers -> no leased card -> `container`;
- l40s (8 cards, 2 GPUs steady + 6 for one hour), prices in between -> some leased, the peak spills
  -> `split`;
- l4: no rows in the demand file -> planned on its own schedule (named in the plan), never dropped.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from gpuplan import api

HOURS = 6
START = "2024/03/04 09:00:00.000"

SCENARIO = """\
version: 1
currency: USD
offers:
  - {id: bm-h100, gpu: h100-sxm, mode: bare-metal, price: {amount: 1.0, per: gpu-hour}}
  - {id: ct-h100, gpu: h100-sxm, mode: container, price: {amount: 9.0, per: gpu-hour}}
  - {id: bm-a100, gpu: a100-80g, mode: bare-metal, price: {amount: 5.0, per: gpu-hour}}
  - {id: ct-a100, gpu: a100-80g, mode: container, price: {amount: 1.5, per: gpu-hour}}
  - {id: bm-l40s, gpu: l40s, mode: bare-metal, price: {amount: 1.0, per: gpu-hour}}
  - {id: ct-l40s, gpu: l40s, mode: container, price: {amount: 2.5, per: gpu-hour}}
  - {id: bm-l4, gpu: l4, mode: bare-metal, price: {amount: 0.4, per: gpu-hour}}
  - {id: ct-l4, gpu: l4, mode: container, price: {amount: 0.8, per: gpu-hour}}
workloads:
  - {id: pretrain, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: 24, duration: 30d}
  - {id: sweeps, kind: experiment, gpu: a100-80g, gpus: 4, hours_per_day: 1, duration: 30d}
  - {id: finetune, kind: training, gpu: l40s, gpus: 8, hours_per_day: 24, duration: 30d}
  - {id: inference, kind: inference, gpu: l4, gpus: 2, hours_per_day: 12, duration: 30d}
"""

MODELS = {"h100": ("NVIDIA H100 80GB HBM3", 8), "a100": ("NVIDIA A100-SXM4-80GB", 4), "l40s": ("NVIDIA L40S", 8)}


def _util(node: str, gpu: int, minute: int) -> int:
    hour = minute // 60
    if node == "h100":
        return 80
    if node == "a100":
        return 100 if hour == 2 else 0
    return 100 if gpu < 2 or hour == 4 else 0  # l40s: 2 steady, all 8 in hour 4


def _write_logs(d: Path) -> list[Path]:
    from datetime import datetime, timedelta

    t0 = datetime.strptime(START, "%Y/%m/%d %H:%M:%S.%f")
    files = []
    for node, (model, n) in MODELS.items():
        lines = ["timestamp, index, name, utilization.gpu [%], memory.used [MiB]"]
        for m in range(HOURS * 60):
            stamp = (t0 + timedelta(minutes=m)).strftime("%Y/%m/%d %H:%M:%S.000")
            for g in range(n):
                u = _util(node, g, m)
                lines.append(f"{stamp}, {g}, {model}, {u} %, {1000 + u} MiB")
        p = d / f"{node}.csv"
        p.write_text("\n".join(lines) + "\n")
        files.append(p)
    return files


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> dict:
    d = tmp_path_factory.mktemp("chain")
    logs = _write_logs(d)
    report = api.audit(logs, demand_mode="util")
    assert report.demand is not None
    demand = d / "demand.csv"
    demand.write_text(report.demand.csv)
    scenario = d / "scenario.yaml"
    scenario.write_text(SCENARIO)
    doc = api.plan_scenario(scenario, demand=demand)
    plan_path = d / "plan.json"
    plan_path.write_text(json.dumps(doc))
    exports = {t: {f.name: f.text for f in api.export(t, plan_path, generated_at="2024-03-04T00:00:00Z").files}
               for t in ("kueue", "slurm", "volcano", "skypilot")}
    return {"audit": report.to_json(demand), "demand": report.demand.csv, "plan": doc, "exports": exports}


def _demand_rows(text: str) -> dict[str, list[float]]:
    by: dict[str, list[float]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        by.setdefault(row["gpu"], []).append(float(row["gpus"]))
    return by


def test_audit_measures_what_the_logs_hold(chain: dict) -> None:
    a = chain["audit"]
    assert a["fleet"]["gpus"] == 20 and a["input"]["bad_rows"] == 0
    by = {(g["node"], g["gpu"]): g for g in a["gpus"]}
    assert all(by[("h100", str(i))]["mean_util"] == pytest.approx(0.8) for i in range(8))
    assert all(by[("a100", str(i))]["mean_util"] == pytest.approx(1 / 6, abs=1e-3) for i in range(4))
    assert by[("l40s", "0")]["mean_util"] == pytest.approx(1.0)
    assert by[("l40s", "5")]["mean_util"] == pytest.approx(1 / 6, abs=1e-3)


def test_demand_curve_carries_the_audit(chain: dict) -> None:
    rows = _demand_rows(chain["demand"])
    assert sorted(rows) == ["a100-80g", "h100-sxm", "l40s"]  # model names resolved to catalog ids
    assert rows["h100-sxm"] == pytest.approx([6.4] * HOURS)
    assert rows["a100-80g"] == pytest.approx([0, 0, 4, 0, 0, 0])
    assert rows["l40s"] == pytest.approx([2, 2, 2, 2, 8, 2])
    # every GPU-hour of kernel activity the audit counted is in the demand file
    assert sum(sum(v) for v in rows.values()) == pytest.approx(chain["audit"]["fleet"]["gpu_hours_busy"], abs=1e-3)


def test_plan_keeps_every_workload_and_says_how_the_sample_was_used(chain: dict) -> None:
    plan = chain["plan"]
    assert sorted(a["workload"] for a in plan["assignments"]) == ["finetune", "inference", "pretrain", "sweeps"]
    assert plan["kept_schedules"] == ["inference"]
    # a 6-hour sample is repeated to fill a day: the horizon says so
    assert (plan["sample_hours"], plan["sample_repeats"], plan["horizon_hours"]) == (HOURS, 4, 24)
    pools = {p["gpu"]: p for p in plan["pools"]}
    assert sorted(pools) == ["a100-80g", "h100-sxm", "l4", "l40s"]
    rows = _demand_rows(chain["demand"])
    for gpu, values in rows.items():
        assert pools[gpu]["demand"]["hourly"] == pytest.approx(values * 4, abs=1e-3)
        assert pools[gpu]["demand"]["peak"] == pytest.approx(max(values), abs=0.01)
        assert pools[gpu]["demand"]["mean"] == pytest.approx(float(np.mean(values)), abs=1e-3)
    # the kept workload's own schedule: 2 cards for 12 of the horizon's 24 hours
    l4 = pools["l4"]["demand"]["hourly"]
    assert len(l4) == 24 and max(l4) == 2 and sum(l4) == pytest.approx(2 * 12)


def test_placements_follow_the_leased_cards(chain: dict) -> None:
    plan = chain["plan"]
    pools = {p["gpu"]: p for p in plan["pools"]}
    place = {a["workload"]: a for a in plan["assignments"]}
    h100, a100, l40s = pools["h100-sxm"], pools["a100-80g"], pools["l40s"]
    assert h100["reserved_gpus"] >= h100["demand"]["peak"] and place["pretrain"]["placement"] == "bare-metal"
    assert h100["gpu_hours_per_month"]["spill"] == 0
    assert a100["reserved_gpus"] == 0 and place["sweeps"]["placement"] == "container"
    assert place["sweeps"]["pool_share"] == 0
    assert 0 < l40s["reserved_gpus"] < l40s["demand"]["peak"] and place["finetune"]["placement"] == "split"
    # the split's pool share is the served share of its GPU-hours: min(demand, R) / demand
    hourly = np.array(l40s["demand"]["hourly"])
    served = np.minimum(hourly, l40s["reserved_gpus"]).sum() / hourly.sum()
    assert place["finetune"]["pool_share"] == pytest.approx(served, abs=1e-4)
    # money: the plan's total is the sum of its pools
    total = sum(p["cost_per_month"]["hybrid"] for p in plan["pools"])
    assert plan["cost_per_month"]["hybrid"] == pytest.approx(total, abs=0.05)


def _yaml_docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def _kueue_quotas(chain: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for doc in _yaml_docs(chain["exports"]["kueue"]["30-cluster-queues.yaml"]):
        for group in doc["spec"]["resourceGroups"]:
            for flavor in group["flavors"]:
                for r in flavor["resources"]:
                    if r["name"].endswith("/gpu"):
                        out[flavor["name"]] = out.get(flavor["name"], 0) + float(r["nominalQuota"])
    return out


def _slurm_gpus(chain: dict) -> dict[str, int]:
    """Node name prefix (e.g. `h100-sxm-leased`) -> GPUs over its nodes, from gres.conf File= ranges."""
    out: dict[str, int] = {}
    for line in chain["exports"]["slurm"]["gres.conf"].splitlines():
        if not line.startswith("NodeName="):
            continue
        fields = dict(f.split("=", 1) for f in line.split())
        node = fields["NodeName"].rstrip("0123456789[]-,")
        lo, hi = fields["File"].split("[")[1].rstrip("]").split("-")
        out[node] = out.get(node, 0) + int(hi) - int(lo) + 1
    return out


def test_every_export_carries_every_pool_and_workload(chain: dict) -> None:
    plan = chain["plan"]
    pools = {p["gpu"]: p for p in plan["pools"]}
    quotas = _kueue_quotas(chain)
    slurm = _slurm_gpus(chain)
    volcano = {d["metadata"]["name"]: d for d in _yaml_docs(chain["exports"]["volcano"]["volcano-queues.yaml"])}
    for gpu, p in pools.items():
        r = p["reserved_gpus"]
        # the leased cards: the same number in every scheduler
        assert quotas.get(f"{gpu}-leased", 0) == r, gpu
        assert slurm.get(f"{gpu}-leased", 0) == r, gpu
        guarantee = volcano[f"gpuplan-{gpu}"]["spec"].get("guarantee", {}).get("resource", {})
        assert int(guarantee.get("nvidia.com/gpu", 0)) == r, gpu
        # work beyond the pool has somewhere to run
        if r < p["demand"]["peak"]:
            assert quotas.get(f"{gpu}-elastic", 0) >= p["demand"]["peak"] - r, gpu
            assert slurm.get(f"{gpu}-elastic", 0) >= p["demand"]["peak"] - r, gpu
    sky = chain["exports"]["skypilot"]
    for a in plan["assignments"]:
        if a["placement"] != "bare-metal":
            body = yaml.safe_load(sky[f"{a['workload']}.sky.yaml"])
            assert body["resources"]["accelerators"].endswith(f":{a['gpus']}"), a["workload"]


def test_elastic_capacity_only_for_what_the_plan_spills(chain: dict) -> None:
    plan = chain["plan"]
    quotas = _kueue_quotas(chain)
    slurm = _slurm_gpus(chain)
    for p in plan["pools"]:
        gpu = p["gpu"]
        h = p["gpu_hours_per_month"]
        spills = h["spill"] > 0 or h["elastic"] > 0
        if not spills:  # the h100 pool covers its peak: no elastic GPU anywhere
            assert quotas.get(f"{gpu}-elastic", 0) == 0, gpu
            assert slurm.get(f"{gpu}-elastic", 0) == 0, gpu
        else:  # at most the spill peak, rounded up to whole container nodes
            per_node = p["gpus_per_node"]
            need = max(0.0, p["demand"]["peak"] - p["reserved_gpus"])
            cap = math.ceil(need / per_node - 1e-9) * per_node
            assert 0 < quotas.get(f"{gpu}-elastic", 0) <= max(cap, per_node), gpu

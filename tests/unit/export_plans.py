"""Plans the export tests run every exporter on: the seed hybrid plan, a three-GPU-model plan built
from it (complete gpuplan.plan/1 objects with other figures), and the plans of examples/*.yaml."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "tests/golden/export/seed-hybrid.plan.json"


def seed() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SEED.read_text(encoding="utf-8"))
    return data


def _pool(base: dict[str, Any], **fields: Any) -> dict[str, Any]:
    pool = copy.deepcopy(base)
    hourly = fields.pop("hourly")
    spill = fields.pop("spill")
    pool.update(fields, offer_bare_metal=None, offer_container=None)
    pool["demand"].update(peak=max(hourly), mean=sum(hourly) / len(hourly), hourly=hourly)
    pool["gpu_hours_per_month"] = {"spill": spill, "elastic": 0.0}
    return pool


def _job(workload: str, placement: str, gpu: str, gpus: int, kind: str, requires: list[str]) -> dict[str, Any]:
    share = 1.0 if placement == "bare-metal" else 0.0
    return {"workload": workload, "placement": placement, "reason": "test", "gpu": gpu, "gpus": gpus,
            "kind": kind, "requires": requires, "pool_share": share}


def three_gpu() -> dict[str, Any]:
    """H100: 16 leased (2 nodes of 8) + spill to 24; A100 80GB: 8 leased, never spills;
    L40S: nothing leased, all in containers."""
    data = seed()
    base = data["pools"][0]
    data["pools"] = [
        _pool(base, gpu="h100-sxm", vendor="nvidia", reserved_gpus=16, nodes=2, gpus_per_node=8,
              lease_unit="node", hourly=[16.0] * 20 + [24.0] * 4, spill=240.0),
        _pool(base, gpu="a100-80g", vendor="nvidia", reserved_gpus=8, nodes=1, gpus_per_node=8,
              lease_unit="node", hourly=[8.0] * 24, spill=0.0),
        _pool(base, gpu="l40s", vendor="nvidia", reserved_gpus=0, nodes=0, gpus_per_node=8,
              lease_unit="gpu", hourly=[0.0] * 20 + [4.0] * 4, spill=120.0),
    ]
    data["curve"] = []
    data["assignments"] = [
        _job("pretrain", "bare-metal", "h100-sxm", 16, "training", ["compliance", "multi-node"]),
        _job("burst-finetune", "container", "h100-sxm", 8, "fine-tuning", []),
        _job("eval", "bare-metal", "a100-80g", 8, "inference", []),
        _job("notebooks", "container", "l40s", 4, "experiment", ["elastic"]),
    ]
    return data


@functools.cache
def _example(path: str) -> str:
    from gpuplan.api import plan_scenario

    return json.dumps(plan_scenario(path))


def examples() -> list[tuple[str, dict[str, Any]]]:
    """(name, plan) for every examples/*.yaml that plans (rules.yaml is not a scenario)."""
    out = []
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        if path.name == "rules.yaml":
            continue
        out.append((path.name, json.loads(_example(str(path)))))
    return out


def all_plans() -> list[tuple[str, dict[str, Any]]]:
    return [("seed-hybrid.plan.json", seed()), ("three-gpu", three_gpu()), *examples()]

"""The SkyPilot export on a mixed NVIDIA + Ascend plan, checked with SkyPilot's own feasibility code
(`check_instance_fits`, run by tests/integration/skypilot_check.py under a Python with SkyPilot:
GPUPLAN_SKYPILOT_PYTHON, else .venv-sky/bin/python, which .ci/run creates). The fake cluster's nodes
carry the labels the export's header asks for, per context."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplan.export import ExportOptions, export, parse_plan

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from export_plans import three_gpu  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHECK = Path(__file__).with_name("skypilot_check.py")
GFD = {"h100-sxm": "NVIDIA-H100-80GB-HBM3", "a100-80g": "NVIDIA-A100-SXM4-80GB", "l40s": "NVIDIA-L40S"}


def _sky_python() -> str:
    exe = os.environ.get("GPUPLAN_SKYPILOT_PYTHON") or str(ROOT / ".venv-sky" / "bin" / "python")
    if not Path(exe).exists():
        pytest.skip("no Python with SkyPilot: .ci/run makes .venv-sky (pip install skypilot==0.14.1)")
    return exe


def _mixed_plan() -> Any:
    data = three_gpu()
    asc = copy.deepcopy(data["pools"][0])
    asc.update(gpu="ascend-910b", vendor="huawei", reserved_gpus=8, nodes=1, gpus_per_node=8, lease_unit="node")
    data["pools"].append(asc)
    data["assignments"].append({"workload": "npu-train", "placement": "bare-metal", "reason": "test",
                                "gpu": "ascend-910b", "gpus": 8, "kind": "training", "requires": [],
                                "pool_share": 1.0})
    return parse_plan(data, "mixed")


def _node(gpu: str, i: int) -> dict[str, Any]:
    if gpu == "ascend-910b":  # the label the export asks for on Ascend nodes
        return {"name": f"{gpu}-{i}", "labels": {"skypilot.co/accelerator": "ascend910b"},
                "resource_key": "huawei.com/Ascend910", "count": 8}
    return {"name": f"{gpu}-{i}", "labels": {"nvidia.com/gpu.product": GFD[gpu]}, "resource_key": "nvidia.com/gpu",
            "count": 8}


def _run(clusters: dict[str, list[dict[str, Any]]], checks: list[dict[str, Any]]) -> list[list[Any]]:
    out = subprocess.run([_sky_python(), str(CHECK)], input=json.dumps({"clusters": clusters, "checks": checks}),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _instance(task: dict[str, Any]) -> str:
    return f"8CPU--64GB--{task['resources']['accelerators']}"


def test_each_vendor_has_its_context_and_every_task_fits_there() -> None:
    plan = _mixed_plan()
    result = export("skypilot", plan, ExportOptions())
    tasks = [yaml.safe_load(f.text) for f in result.files]
    clusters: dict[str, list[dict[str, Any]]] = {}
    for pool in plan.pools:
        vendor_ctx = "huawei" if pool.vendor == "huawei" else "nvidia"
        for kind in ("leased", "elastic"):
            clusters.setdefault(f"gpuplan-{kind}-{vendor_ctx}", []).append(_node(pool.gpu, len(clusters)))
    checks = []
    for t in tasks:
        infras = [c["infra"] for c in t["resources"].get("ordered", [t["resources"]])]
        for infra in infras:
            ctx = infra.removeprefix("k8s/")
            assert ctx.endswith(("-nvidia", "-huawei")), infra
            key = "huawei.com/Ascend910" if ctx.endswith("-huawei") else None
            checks.append({"context": ctx, "instance": _instance(t), "resource_key": key})
    assert {c["context"] for c in checks} >= {"gpuplan-leased-nvidia", "gpuplan-leased-huawei"}
    assert "CUSTOM_GPU_RESOURCE_KEY=huawei.com/Ascend910" in result.stdout.split("name:")[0]  # in the header
    results = _run(clusters, checks)
    assert all(fits for fits, _ in results), list(zip(checks, results, strict=True))


def test_one_mixed_context_leaves_nvidia_tasks_unplaceable_in_skypilot() -> None:
    """Why the export splits contexts: SkyPilot reads one label scheme per context, the Ascend nodes'
    skypilot.co/accelerator first, so GPU-feature-discovery H100 nodes are not found."""
    mixed = {"one": [_node("h100-sxm", 0), _node("ascend-910b", 1)]}
    (h100,) = _run(mixed, [{"context": "one", "instance": "8CPU--64GB--H100:8", "resource_key": None}])
    assert h100[0] is False and "H100" in h100[1]
    alone = {"one": [_node("h100-sxm", 0)]}
    assert _run(alone, [{"context": "one", "instance": "8CPU--64GB--H100:8", "resource_key": None}])[0][0] is True


def test_a_one_vendor_plan_keeps_the_context_names_and_the_option_names_them() -> None:
    plan = parse_plan(three_gpu(), "nvidia-only")
    text = export("skypilot", plan, ExportOptions()).stdout
    assert "k8s/gpuplan-leased\n" in text and "-nvidia" not in text
    named = export("skypilot", _mixed_plan(), ExportOptions(leased_context="prod-{vendor}-pool")).stdout
    assert "k8s/prod-huawei-pool" in named and "k8s/prod-nvidia-pool" in named

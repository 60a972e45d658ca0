"""Volcano: `scheduling.volcano.sh/v1beta1` Queues with capability, guarantee and node-group preference.

One Queue `<name>`: capability = every card the plan allows (leased + elastic), CPU and memory in
proportion; guarantee = the leased cards; nodeGroupAffinity requires the leased and elastic node
groups and prefers the leased ones, so pods go to leased nodes first (Volcano's `nodegroup` plugin;
label nodes `volcano.sh/nodegroup-name=<group>`). A queue's node-group affinity applies to all its
pods, so workloads that must run on bare metal pin themselves with a pod nodeSelector on the leased
group (listed in the file's header) instead of a second queue that would promise the same cards twice.
"""

from __future__ import annotations

from typing import Any

from gpuplan.export.common import (
    ExportFile,
    ExportOptions,
    ExportResult,
    cpu_for,
    dump_all,
    gpu_resource,
    header,
    memory_for,
)
from gpuplan.export.model import Plan, slugify
from gpuplan.export.validate import check_volcano

API = "scheduling.volcano.sh/v1beta1"
NODEGROUP_LABEL = "volcano.sh/nodegroup-name"


def _q(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def _resources(cards: dict[str, int], resources: dict[str, str], options: ExportOptions) -> dict[str, Any]:
    """{cpu, memory, <gpu resource>...} for `cards` (gpu id -> count); empty when no card."""
    total = sum(cards.values())
    if total == 0:
        return {}
    out: dict[str, Any] = {"cpu": _q(cpu_for(total, options)), "memory": _q(memory_for(total, options))}
    for gpu, n in cards.items():
        name = resources[gpu]
        out[name] = out.get(name, 0) + n
    return out


def build(plan: Plan, options: ExportOptions) -> list[dict[str, Any]]:
    resources = {p.gpu: gpu_resource(p, options, plan) for p in plan.pools}
    leased_groups = [f"{p.slug}-leased" for p in plan.pools if p.reserved_gpus]
    elastic_groups = [f"{p.slug}-elastic" for p in plan.pools if plan.elastic_gpus(p.gpu)]
    total = {p.gpu: p.reserved_gpus + plan.elastic_gpus(p.gpu) for p in plan.pools}
    leased = {p.gpu: p.reserved_gpus for p in plan.pools}

    spec: dict[str, Any] = {
        "weight": 1,
        "reclaimable": True,
        "capability": _resources(total, resources, options),
    }
    guarantee = _resources(leased, resources, options)
    if guarantee:
        spec["guarantee"] = {"resource": guarantee}
    affinity: dict[str, Any] = {
        "requiredDuringSchedulingIgnoredDuringExecution": leased_groups + elastic_groups
    }
    if leased_groups:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = leased_groups
    spec["affinity"] = {"nodeGroupAffinity": affinity}
    return [_queue(options.name, spec)]


def _queue(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Queue",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "gpuplan"}},
        "spec": spec,
    }


def export(plan: Plan, options: ExportOptions) -> ExportResult:
    objs = build(plan, options)
    check_volcano(objs)
    lines = [
        "Volcano Queues. Enable the `nodegroup` plugin in the scheduler config and label the nodes",
        f"{NODEGROUP_LABEL}=<group> ("
        + ", ".join(f"{p.slug}-leased" for p in plan.pools if p.reserved_gpus)
        + (", " if any(plan.elastic_gpus(p.gpu) for p in plan.pools) else "")
        + ", ".join(f"{p.slug}-elastic" for p in plan.pools if plan.elastic_gpus(p.gpu))
        + ").",
        "Submit with spec.queue (vcjob) or the scheduling.volcano.sh/queue-name annotation:",
    ]
    for a in plan.assignments:
        pin = (
            f"; must stay on bare metal: nodeSelector {NODEGROUP_LABEL}: {slugify(a.gpu)}-leased"
            if a.bare_metal_only
            else ""
        )
        lines.append(f"  {a.workload} ({a.gpus}x {a.gpu}, {a.placement}): queue {options.name}{pin}")
    head = header("volcano", plan, options, lines)
    text = head + "---\n" + dump_all(objs)
    return ExportResult("volcano", (ExportFile("volcano-queues.yaml", text),), text)


__all__ = ["build", "export"]

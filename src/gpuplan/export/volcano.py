"""Volcano: `scheduling.volcano.sh/v1beta1` Queues, one per GPU model, that pass Volcano's admission.

One Queue `<name>-<gpu>` per pool: capability = every card the plan allows for that model (leased +
elastic), CPU and memory in proportion; deserved = the same (the queue may keep all of them when
queues compete: the elastic cards exist only for it); guarantee = the leased cards (left out when
none). So guarantee <= deserved <= capability in every resource, as Volcano's queue webhook requires
(1.14+: `guarantee should less equal than deserved`). nodeGroupAffinity requires this model's leased
and elastic node groups and prefers the leased one, so pods of the queue land on that model only,
leased nodes first (Volcano's `nodegroup` plugin; label nodes `volcano.sh/nodegroup-name=<group>`).
Workloads that must run on bare metal pin themselves with a pod nodeSelector on the leased group
(listed in the file's header) instead of a second queue that would promise the same cards twice.
A spot tier (issue 26) is its own Queue `<name>-<gpu>-spot`: capability = deserved = the spot cards,
no guarantee (reclaimable capacity promises nothing), nodeGroupAffinity requiring the spot node group
(and the elastic one as the on-demand fallback, preferring spot).
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


def queue_name(plan: Plan, options: ExportOptions, gpu: str) -> str:
    return f"{options.name}-{plan.pool(gpu).slug}"


def build(plan: Plan, options: ExportOptions) -> list[dict[str, Any]]:
    objs = []
    for p in plan.pools:
        elastic = plan.elastic_gpus(p.gpu)
        if p.reserved_gpus + elastic == 0:
            continue  # nothing to schedule on this model
        resources = {p.gpu: gpu_resource(p, options, plan)}
        total = _resources({p.gpu: p.reserved_gpus + elastic}, resources, options)
        spec: dict[str, Any] = {"weight": 1, "reclaimable": True, "capability": total, "deserved": dict(total)}
        if p.reserved_gpus:
            spec["guarantee"] = {"resource": _resources({p.gpu: p.reserved_gpus}, resources, options)}
        groups = [g for g, n in ((f"{p.slug}-leased", p.reserved_gpus), (f"{p.slug}-elastic", elastic)) if n]
        affinity: dict[str, Any] = {"requiredDuringSchedulingIgnoredDuringExecution": groups}
        if p.reserved_gpus:
            affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [f"{p.slug}-leased"]
        spec["affinity"] = {"nodeGroupAffinity": affinity}
        objs.append(_queue(queue_name(plan, options, p.gpu), spec))
    for p in plan.pools:
        if not p.spot_gpus:
            continue
        resources = {p.gpu: gpu_resource(p, options, plan)}
        cards = _resources({p.gpu: p.spot_gpus}, resources, options)
        groups = [f"{p.slug}-spot"] + ([f"{p.slug}-elastic"] if plan.elastic_gpus(p.gpu) else [])
        objs.append(_queue(spot_queue_name(plan, options, p.gpu), {
            "weight": 1, "reclaimable": True, "capability": cards, "deserved": dict(cards),
            "affinity": {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": groups,
                                               "preferredDuringSchedulingIgnoredDuringExecution": [f"{p.slug}-spot"]}},
        }))
    return objs


def spot_queue_name(plan: Plan, options: ExportOptions, gpu: str) -> str:
    return f"{options.name}-{plan.pool(gpu).slug}-spot"


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
    groups = [f"{p.slug}-leased" for p in plan.pools if p.reserved_gpus] + [
        f"{p.slug}-elastic" for p in plan.pools if plan.elastic_gpus(p.gpu)
    ] + [f"{p.slug}-spot" for p in plan.pools if p.spot_gpus]
    lines = [
        "Volcano Queues, one per GPU model. Enable the `nodegroup` plugin in the scheduler config and",
        f"label the nodes {NODEGROUP_LABEL}=<group> ({', '.join(groups)}).",
        "Submit with spec.queue (vcjob) or the scheduling.volcano.sh/queue-name annotation:",
    ]
    for a in plan.assignments:
        pin = (
            f"; must stay on bare metal: nodeSelector {NODEGROUP_LABEL}: {slugify(a.gpu)}-leased"
            if a.bare_metal_only
            else ""
        )
        queue = spot_queue_name(plan, options, a.gpu) if a.placement == "spot" else queue_name(plan, options, a.gpu)
        lines.append(f"  {a.workload} ({a.gpus}x {a.gpu}, {a.placement}): queue {queue}{pin}")
    head = header("volcano", plan, options, lines)
    text = head + "---\n" + dump_all(objs)
    return ExportResult("volcano", (ExportFile("volcano-queues.yaml", text),), text)


__all__ = ["build", "export", "queue_name", "spot_queue_name"]

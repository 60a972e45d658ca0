"""SkyPilot: one task per workload with a `resources:` block that prefers the leased cluster.

Workloads that may spill get `ordered:` candidates, the leased Kubernetes context first, then the
elastic one (SkyPilot tries them in order and fails over when one has no room) - the elastic one only
when the plan runs this GPU in containers at all; workloads that must run on bare metal get only the
leased context. A job larger than one server is `num_nodes` nodes of `accelerators: NAME:per-node`
(64 cards on 8-card servers: num_nodes 8, H100:8), as SkyPilot reads accelerators per node.
Contexts are options (--leased-context, --elastic-context); the accelerator name is SkyPilot's
(gpus.py; e.g. H100, A100-80GB), overridable per GPU with --accelerator GPU=NAME.

Work the plan places on spot (issue 26) asks for spot first and falls back to on demand:
`ordered: [{use_spot: true}, {use_spot: false}]` on --spot-infra (any enabled cloud when not given;
SkyPilot's Kubernetes infra has no spot), and `job_recovery: FAILOVER` so that a managed job
(`sky jobs launch`) is relaunched where capacity is after a reclaim, resuming from its checkpoints.

SkyPilot's Kubernetes backend finds GPU nodes by the model label (NVIDIA GPU feature discovery's for
the names in its canonical list, else `skypilot.co/accelerator=<name in lower case>`) and requests
the `nvidia.com/gpu` / `amd.com/gpu` resource (TPU and Neuron aside); any other resource key (Ascend's
`huawei.com/Ascend910`) must be set with CUSTOM_GPU_RESOURCE_KEY where SkyPilot runs. Each task
says which of these its GPU needs.
"""

from __future__ import annotations

from typing import Any

from gpuplan.export.common import ExportFile, ExportOptions, ExportResult, dump, gpu_resource, header
from gpuplan.export.gpus import SKYPILOT_K8S_RESOURCE_KEYS, SKYPILOT_LABEL, names
from gpuplan.export.model import Assignment, Plan, slugify, spread


def accelerator(gpu: str, options: ExportOptions) -> str:
    return options.accelerators.get(gpu) or names(gpu).skypilot


def task(a: Assignment, plan: Plan, options: ExportOptions) -> dict[str, Any]:
    pool = plan.pool(a.gpu)
    nodes, per_node = spread(a.gpus, pool.gpus_per_node)
    leased = {"infra": f"k8s/{options.leased_context}"}
    elastic = {"infra": f"k8s/{options.elastic_context}"}
    resources: dict[str, Any] = {"accelerators": f"{accelerator(a.gpu, options)}:{per_node}"}
    if a.placement == "spot":
        where = {"infra": options.spot_infra} if options.spot_infra else {}
        resources["ordered"] = [{**where, "use_spot": True}, {**where, "use_spot": False}]
        resources["job_recovery"] = {"strategy": "FAILOVER"}
        spot: dict[str, Any] = {"name": slugify(a.workload)}
        if nodes > 1:
            spot["num_nodes"] = nodes
        spot["resources"] = resources
        return spot
    candidates = []
    if pool.reserved_gpus:
        candidates.append(leased)
    if not a.bare_metal_only and plan.elastic_gpus(a.gpu):
        candidates.append(elastic)
    if not candidates:  # a pool that leases nothing and spills nothing: the elastic cluster
        candidates.append(elastic)
    if len(candidates) == 1:
        resources.update(candidates[0])
    else:
        resources["ordered"] = candidates
    out: dict[str, Any] = {"name": slugify(a.workload)}
    if nodes > 1:
        out["num_nodes"] = nodes
    out["resources"] = resources
    return out


def kubernetes_notes(a: Assignment, plan: Plan, options: ExportOptions) -> list[str]:
    """What SkyPilot on Kubernetes needs to schedule this GPU, beyond a GPU Operator cluster."""
    pool = plan.pool(a.gpu)
    name = accelerator(a.gpu, options)
    notes = []
    canonical = names(a.gpu).skypilot_canonical and name == names(a.gpu).skypilot
    if not canonical:
        notes.append(
            f"{name} is not in SkyPilot's canonical GPU list: label its nodes {SKYPILOT_LABEL}={name.lower()}"
        )
    key = gpu_resource(pool, options, plan)
    if key not in SKYPILOT_K8S_RESOURCE_KEYS:
        notes.append(
            f"SkyPilot requests nvidia.com/gpu unless told otherwise: run it with CUSTOM_GPU_RESOURCE_KEY={key}"
        )
    if plan.pool(a.gpu).gpus_per_node < a.gpus:
        nodes, per_node = spread(a.gpus, pool.gpus_per_node)
        notes.append(f"{a.gpus} cards do not fit one {pool.gpus_per_node}-card server: {nodes} nodes x {per_node}")
    return notes


def export(plan: Plan, options: ExportOptions) -> ExportResult:
    head = header(
        "skypilot",
        plan,
        options,
        [
            "SkyPilot task resources, one task per workload: add your setup/run and launch with",
            "`sky launch -c <cluster> <file>`. `ordered:` tries the leased context first,",
            "then the elastic one; accelerators are per node (num_nodes nodes).",
        ],
    )
    files = []
    docs = []
    for a in plan.assignments:
        why = f"# {a.workload}: {a.gpus}x {a.gpu}, placement {a.placement}" + (
            f" ({a.reason})" if a.reason else ""
        )
        notes = "".join(f"# Kubernetes: {line}\n" for line in kubernetes_notes(a, plan, options))
        body = why + "\n" + notes + dump(task(a, plan, options))
        docs.append(body)
        files.append(ExportFile(f"{slugify(a.workload)}.sky.yaml", head + body))
    if not docs:
        docs.append("# the plan assigns no workload\n{}\n")
    return ExportResult("skypilot", tuple(files), head + "---\n".join(docs))

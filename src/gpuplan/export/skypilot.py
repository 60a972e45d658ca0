"""SkyPilot: one task per workload with a `resources:` block that prefers the leased cluster.

Workloads that may spill get `ordered:` candidates, the leased Kubernetes context first, then the
elastic one (SkyPilot tries them in order and fails over when one has no room) - the elastic one only
when the plan runs this GPU in containers at all; workloads that must run on bare metal get only the
leased context. A job larger than one server is `num_nodes` nodes of `accelerators: NAME:per-node`
(64 cards on 8-card servers: num_nodes 8, H100:8), as SkyPilot reads accelerators per node.
Contexts are options (--leased-context, --elastic-context); the accelerator name is SkyPilot's
(gpus.py; e.g. H100, A100-80GB), overridable per GPU with --accelerator GPU=NAME.

One Kubernetes context per GPU vendor. SkyPilot finds GPU nodes by one label scheme per context, the
first of its formatters any node matches (`skypilot.co/accelerator` before NVIDIA GPU feature
discovery's `nvidia.com/gpu.product`), and requests the `nvidia.com/gpu` / `amd.com/gpu` resource
unless CUSTOM_GPU_RESOURCE_KEY says otherwise, for every task of that SkyPilot process. So with
Ascend nodes labelled `skypilot.co/accelerator` in the same context as NVIDIA nodes labelled by GPU
feature discovery, no NVIDIA task fits (checked with SkyPilot 0.14.1's own `check_instance_fits`,
tests/integration/test_skypilot_contexts.py). When a plan has GPUs of more than one vendor, each
vendor gets its own contexts: `<context>-<vendor>` (or a name given with `{vendor}` in the option,
`--leased-context prod-{vendor}`); the header says which label scheme and resource key each needs.

Work the plan places on spot (issue 26) asks for spot first and falls back to on demand:
`ordered: [{use_spot: true}, {use_spot: false}]` on --spot-infra (any enabled cloud when not given;
SkyPilot's Kubernetes infra has no spot), and `job_recovery: FAILOVER` so that a managed job
(`sky jobs launch`) is relaunched where capacity is after a reclaim, resuming from its checkpoints.
"""

from __future__ import annotations

from typing import Any

from gpuplan.errors import ExportError
from gpuplan.export.common import (
    ExportFile,
    ExportOptions,
    ExportResult,
    check_file_name,
    dump,
    gpu_resource,
    header,
    one_line,
)
from gpuplan.export.gpus import SKYPILOT_K8S_RESOURCE_KEYS, SKYPILOT_LABEL, names
from gpuplan.export.model import Assignment, Plan, slugify, spread


def accelerator(gpu: str, options: ExportOptions) -> str:
    return options.accelerators.get(gpu) or names(gpu).skypilot


def vendors(plan: Plan) -> list[str]:
    return sorted({p.vendor for p in plan.pools})


def context(base: str, vendor: str, plan: Plan) -> str:
    """The Kubernetes context of `vendor`'s cards: `base` itself for a one-vendor plan, else `base-vendor`
    (or `base` with `{vendor}` filled in)."""
    if "{vendor}" in base:
        return base.replace("{vendor}", vendor)
    return base if len(vendors(plan)) <= 1 else f"{base}-{vendor}"


def task(a: Assignment, plan: Plan, options: ExportOptions) -> dict[str, Any]:
    pool = plan.pool(a.gpu)
    nodes, per_node = spread(a.gpus, pool.gpus_per_node)
    leased = {"infra": f"k8s/{context(options.leased_context, pool.vendor, plan)}"}
    elastic = {"infra": f"k8s/{context(options.elastic_context, pool.vendor, plan)}"}
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
            f"SkyPilot requests nvidia.com/gpu unless told otherwise: launch from a SkyPilot process with "
            f"CUSTOM_GPU_RESOURCE_KEY={key} (it applies to every task of that process)"
        )
    if plan.pool(a.gpu).gpus_per_node < a.gpus:
        nodes, per_node = spread(a.gpus, pool.gpus_per_node)
        notes.append(f"{a.gpus} cards do not fit one {pool.gpus_per_node}-card server: {nodes} nodes x {per_node}")
    return notes


def context_notes(plan: Plan, options: ExportOptions) -> list[str]:
    """One context per vendor (SkyPilot reads one GPU label scheme per context): what each needs."""
    out = ["One Kubernetes context per GPU vendor (SkyPilot reads one GPU label scheme per context):"]
    for v in vendors(plan):
        ctxs = ", ".join(dict.fromkeys(context(b, v, plan) for b in (options.leased_context, options.elastic_context)))
        pools = [p for p in plan.pools if p.vendor == v]
        key = gpu_resource(pools[0], options, plan)
        if v == "nvidia":
            scheme = "GPU feature discovery labels (nvidia.com/gpu.product, from the GPU Operator)"
        else:
            scheme = f"{SKYPILOT_LABEL}=<accelerator in lower case> on each GPU node"
        extra = "" if key in SKYPILOT_K8S_RESOURCE_KEYS else f"; SkyPilot process with CUSTOM_GPU_RESOURCE_KEY={key}"
        out.append(f"  {v}: {ctxs}: {scheme}{extra}")
    return out


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
    if len(vendors(plan)) > 1:
        head += "".join(f"# {line}\n" for line in context_notes(plan, options))
    files = []
    docs = []
    written: dict[str, int] = {}
    for i, a in enumerate(plan.assignments):
        why = f"# {one_line(a.workload)}: {a.gpus}x {one_line(a.gpu)}, placement {a.placement}" + (
            f" ({one_line(a.reason)})" if a.reason else ""
        )
        notes = "".join(f"# Kubernetes: {one_line(line)}\n" for line in kubernetes_notes(a, plan, options))
        body = why + "\n" + notes + dump(task(a, plan, options))
        docs.append(body)
        stem = check_file_name(slugify(a.workload), f"workload {a.workload[:40]!r}", f"assignments[{i}].workload",
                               plan.source)
        if stem in written:  # `train a` and `train-a`: one file would silently replace the other
            raise ExportError(f"workloads {plan.assignments[written[stem]].workload!r} and {a.workload!r} "
                              f"would both be written to {stem}.sky.yaml", file=plan.source,
                              field=f"assignments[{i}].workload",
                              hint="give the workloads ids that differ in letters or digits, not only in "
                                   "punctuation or case.")
        written[stem] = i
        files.append(ExportFile(f"{stem}.sky.yaml", head + body))
    if not docs:
        docs.append("# the plan assigns no workload\n{}\n")
    return ExportResult("skypilot", tuple(files), head + "---\n".join(docs))

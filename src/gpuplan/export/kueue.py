"""Kueue: ResourceFlavors, ClusterQueues, LocalQueues and WorkloadPriorityClasses for a plan.

Mapping (see docs/export.md):
- each pool -> ResourceFlavor `<gpu>-leased` (nodeLabels select the leased bare-metal nodes) and,
  when it spills, `<gpu>-elastic` (nodeLabels + a toleration for the tainted container/burst nodes);
- ClusterQueue `<name>-hybrid`: flavors leased first, then elastic; nominalQuota = leased cards and
  elastic cards, CPU and memory in proportion; flavorFungibility whenCanPreempt=TryNextFlavor so a job
  that does not fit the leased cards tries the elastic flavor instead of preempting;
- when some workloads must run on bare metal: ClusterQueue `<name>-bare-metal` with only the leased
  flavors and their cards as quota, in one cohort with the hybrid queue, which may borrow those cards
  while they idle (borrowingLimit) and gives them back (reclaimWithinCohort: Any);
- LocalQueues `hybrid` and `bare-metal` in each namespace; WorkloadPriorityClasses for core work and
  experiments; with autoscale a ProvisioningRequest AdmissionCheck on the elastic flavors only;
- a spot tier (issue 26) -> ResourceFlavor `<gpu>-spot` (nodeLabels `<label>=spot`, the spot nodes'
  taint in nodeTaints and its toleration), ClusterQueue `<name>-spot` (the spot cards, lent to no one:
  lendingLimit 0; then the elastic flavor with no quota of its own, so spot work borrows on-demand
  cards from the cohort when spot has none: the on-demand fallback) and LocalQueue `spot`.

API versions: v1beta2 names the cohort `cohortName` and accepts only MayStopSearch/TryNextFlavor in
flavorFungibility; v1beta1 names it `cohort`, and for the older Kueue releases that only serve
v1beta1 the "stop here" value is written by its old name `Borrow` (still accepted by v1beta1).
"""

from __future__ import annotations

from typing import Any

from gpuplan.errors import ExportError
from gpuplan.export.common import (
    ExportFile,
    ExportOptions,
    ExportResult,
    cpu_for,
    dump_all,
    gpu_resource,
    header,
    memory_for,
    one_line,
)
from gpuplan.export.gpus import GFD_LABEL, PLAN_GPU_LABEL, node_labels
from gpuplan.export.model import Plan
from gpuplan.export.validate import check_kueue

GROUP = "kueue.x-k8s.io"
PRIORITY_CORE = 1000
PRIORITY_EXPERIMENT = 100
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"

# file name (with -o DIR) for each kind, in the order `kubectl apply -f DIR` must create them
FILES = {
    "WorkloadPriorityClass": "00-priority-classes.yaml",
    "ResourceFlavor": "10-resource-flavors.yaml",
    "ProvisioningRequestConfig": "20-admission-checks.yaml",
    "AdmissionCheck": "20-admission-checks.yaml",
    "ClusterQueue": "30-cluster-queues.yaml",
    "LocalQueue": "40-local-queues.yaml",
}


def _q(text: str) -> int | str:
    """A quantity as YAML: a plain int when whole and unitless, else the string."""
    return int(text) if text.isdigit() else text


def _obj(
    options: ExportOptions,
    kind: str,
    name: str,
    spec: dict[str, Any] | None = None,
    namespace: str | None = None,
    **top: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = {"app.kubernetes.io/managed-by": "gpuplan"}
    obj: dict[str, Any] = {"apiVersion": f"{GROUP}/{options.api}", "kind": kind, "metadata": meta}
    obj.update(top)
    if spec is not None:
        obj["spec"] = spec
    return obj


def leased_flavor(options: ExportOptions, gpu_slug: str) -> str:
    return f"{gpu_slug}-leased"


def elastic_flavor(options: ExportOptions, gpu_slug: str) -> str:
    return f"{gpu_slug}-elastic"


def spot_flavor(options: ExportOptions, gpu_slug: str) -> str:
    return f"{gpu_slug}-spot"


def _flavor(options: ExportOptions, covered: list[str], name: str, gpu_resource_name: str, gpus: int,
            borrow: int | None = None, lend: int | None = None) -> dict[str, Any]:
    """A ClusterQueue flavor: `gpus` cards of `gpu_resource_name` with their CPU and memory (`borrow`: what
    may be borrowed from the cohort, `lend`: the lending limit); the other covered resources at 0."""
    res = []
    for r in covered:
        if r == "cpu":
            quota: int | str = _q(cpu_for(gpus, options))
        elif r == "memory":
            quota = _q(memory_for(gpus, options))
        else:
            quota = gpus if r == gpu_resource_name else 0
        entry: dict[str, Any] = {"name": r, "nominalQuota": quota}
        if borrow is not None and (r == gpu_resource_name or r in ("cpu", "memory")):
            entry["borrowingLimit"] = _q(
                {"cpu": cpu_for(borrow, options), "memory": memory_for(borrow, options)}.get(
                    r, str(borrow)
                )
            )
        if lend is not None:
            entry["lendingLimit"] = lend
        res.append(entry)
    return {"name": name, "resources": res}


def _head_objects(plan: Plan, options: ExportOptions, leased_pools: list[Any], elastic_pools: list[Any],
                  spot_pools: list[Any], resources: dict[str, str], check_name: str) -> list[dict[str, Any]]:
    """The priority classes, the resource flavors and (with autoscale) the provisioning check: what the
    queues refer to."""
    n = options.name
    objs: list[dict[str, Any]] = []

    # Priorities: core work (training, inference, anything not an experiment) over experiments.
    # prose in a YAML value: escaped to one line like the comments (PyYAML writes U+2028 raw otherwise)
    core = [one_line(a.workload) for a in plan.assignments if a.core]
    experiments = [one_line(a.workload) for a in plan.assignments if not a.core]
    objs.append(
        _obj(
            options,
            "WorkloadPriorityClass",
            f"{n}-core",
            value=PRIORITY_CORE,
            description="Core work from the gpuplan plan" + (f": {', '.join(core)}" if core else ""),
        )
    )
    objs.append(
        _obj(
            options,
            "WorkloadPriorityClass",
            f"{n}-experiment",
            value=PRIORITY_EXPERIMENT,
            description="Experiments (preemptible)" + (f": {', '.join(experiments)}" if experiments else ""),
        )
    )

    for p in leased_pools:
        objs.append(
            _obj(
                options,
                "ResourceFlavor",
                leased_flavor(options, p.slug),
                {
                    "nodeLabels": {options.label_key: "leased", **node_labels(p)},
                },
            )
        )
    for p in elastic_pools:
        objs.append(
            _obj(
                options,
                "ResourceFlavor",
                elastic_flavor(options, p.slug),
                {
                    "nodeLabels": {options.label_key: "elastic", **node_labels(p)},
                    "tolerations": [{"key": options.taint_key, "operator": "Exists", "effect": "NoSchedule"}],
                },
            )
        )

    spot_taint = {"key": options.spot_taint_key, "value": "true", "effect": "NoSchedule"}
    for p in spot_pools:
        objs.append(
            _obj(
                options,
                "ResourceFlavor",
                spot_flavor(options, p.slug),
                {
                    "nodeLabels": {options.label_key: "spot", **node_labels(p)},
                    "nodeTaints": [spot_taint],
                    "tolerations": [{"key": options.spot_taint_key, "operator": "Exists", "effect": "NoSchedule"}],
                },
            )
        )

    if options.autoscale and elastic_pools:
        objs.append(
            _obj(
                options,
                "ProvisioningRequestConfig",
                f"{n}-elastic",
                {
                    "provisioningClassName": options.provisioning_class,
                    "managedResources": sorted({resources[p.gpu] for p in elastic_pools}),
                },
            )
        )
        objs.append(
            _obj(
                options,
                "AdmissionCheck",
                check_name,
                {
                    "controllerName": PROVISIONING_CONTROLLER,
                    "parameters": {
                        "apiGroup": GROUP,
                        "kind": "ProvisioningRequestConfig",
                        "name": f"{n}-elastic",
                    },
                },
            )
        )
    return objs


def build(plan: Plan, options: ExportOptions) -> list[dict[str, Any]]:
    """The Kueue objects for `plan`, in apply order."""
    n = options.name
    resources = {p.gpu: gpu_resource(p, options, plan) for p in plan.pools}
    covered = ["cpu", "memory", *dict.fromkeys(resources.values())]
    leased_pools = [p for p in plan.pools if p.reserved_gpus > 0]
    elastic = {p.gpu: plan.elastic_gpus(p.gpu) for p in plan.pools}
    elastic_pools = [p for p in plan.pools if elastic[p.gpu] > 0]
    spot_pools = [p for p in plan.pools if p.spot_gpus > 0]
    bare_metal = plan.has_bare_metal_only
    cohort = n if bare_metal or spot_pools else None
    if not leased_pools and not elastic_pools and not spot_pools:
        raise ExportError(
            "the plan leases no cards and spills none: there is no capacity to export",
            file=plan.source,
            field="pools",
            hint="Check the scenario's demand.",
        )
    check_name = f"{n}-elastic-provisioning"
    objs = _head_objects(plan, options, leased_pools, elastic_pools, spot_pools, resources, check_name)

    strategy = "StrictFIFO" if plan.queueing == "strict-fifo" else "BestEffortFIFO"
    cohort_key = "cohortName" if options.api == "v1beta2" else "cohort"
    stop_search = "MayStopSearch" if options.api == "v1beta2" else "Borrow"

    # The hybrid queue: leased first (what the bare-metal queue does not claim), then elastic.
    hybrid_flavors = []
    for p in leased_pools:
        claimed = plan.bare_metal_gpus(p.gpu) if bare_metal else 0
        hybrid_flavors.append(
            _flavor(options, covered, 
                leased_flavor(options, p.slug),
                resources[p.gpu],
                p.reserved_gpus - claimed,
                borrow=claimed if cohort else None,
            )
        )
    for p in elastic_pools:
        hybrid_flavors.append(_flavor(options, covered, elastic_flavor(options, p.slug), resources[p.gpu],
                                      elastic[p.gpu]))
    hybrid: dict[str, Any] = {}
    if cohort:
        hybrid[cohort_key] = cohort
    hybrid.update(
        {
            "namespaceSelector": {},
            "queueingStrategy": strategy,
            "resourceGroups": [{"coveredResources": covered, "flavors": hybrid_flavors}],
            # Idle leased cards are paid for: borrow them (stop the search) rather than go elastic; a job
            # that would need to preempt on the leased flavor tries the next (elastic) flavor instead.
            "flavorFungibility": {"whenCanBorrow": stop_search, "whenCanPreempt": "TryNextFlavor"},
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Never"},
        }
    )
    if options.autoscale and elastic_pools:
        hybrid["admissionChecksStrategy"] = {
            "admissionChecks": [
                {
                    "name": check_name,
                    "onFlavors": [elastic_flavor(options, p.slug) for p in elastic_pools],
                }
            ]
        }
    cqs = [_obj(options, "ClusterQueue", f"{n}-hybrid", hybrid)]

    if bare_metal:
        bm_flavors = [
            _flavor(options, covered, leased_flavor(options, p.slug), resources[p.gpu], plan.bare_metal_gpus(p.gpu))
            for p in leased_pools
        ]
        cqs.append(
            _obj(
                options,
                "ClusterQueue",
                f"{n}-bare-metal",
                {
                    cohort_key: cohort,
                    "namespaceSelector": {},
                    "queueingStrategy": strategy,
                    "resourceGroups": [{"coveredResources": covered, "flavors": bm_flavors}],
                    # Take lent cards back from the hybrid queue when bare-metal work arrives.
                    "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
                },
            )
        )
    if spot_pools:
        spot_flavors = [_flavor(options, covered, spot_flavor(options, p.slug), resources[p.gpu], p.spot_gpus, lend=0)
                        for p in spot_pools]
        # the on-demand fallback: elastic flavors with no quota here, borrowed from the hybrid queue
        spot_flavors += [_flavor(options, covered, elastic_flavor(options, p.slug), resources[p.gpu], 0)
                         for p in spot_pools if elastic[p.gpu] > 0]
        cqs.append(
            _obj(
                options,
                "ClusterQueue",
                f"{n}-spot",
                {
                    cohort_key: cohort,
                    "namespaceSelector": {},
                    "queueingStrategy": strategy,
                    "resourceGroups": [{"coveredResources": covered, "flavors": spot_flavors}],
                    "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"},
                    "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Never"},
                },
            )
        )
    objs += cqs

    for ns in options.namespaces:
        objs.append(_obj(options, "LocalQueue", "hybrid", {"clusterQueue": f"{n}-hybrid"}, namespace=ns))
        if bare_metal:
            objs.append(
                _obj(options, "LocalQueue", "bare-metal", {"clusterQueue": f"{n}-bare-metal"}, namespace=ns)
            )
        if spot_pools:
            objs.append(_obj(options, "LocalQueue", "spot", {"clusterQueue": f"{n}-spot"}, namespace=ns))
    return objs


def _comments(plan: Plan, options: ExportOptions) -> list[str]:
    n = options.name
    lines = [
        f"Kueue API: {GROUP}/{options.api}. Apply with `kubectl apply -f` (Kueue must be installed).",
        f"Label leased nodes {options.label_key}=leased, elastic nodes {options.label_key}=elastic and taint",
        f"them {options.taint_key}=true:NoSchedule. One flavor per GPU model and pool; the GPU model",
        f"label is NVIDIA GPU feature discovery's {GFD_LABEL} (set by the GPU Operator),",
        f"else {PLAN_GPU_LABEL}=<gpu> (label those nodes yourself):",
    ]
    for p in plan.pools:
        (key, value), = node_labels(p).items()
        lines.append(f"  {p.gpu}: {key}={value}")
    lines += [
        "Submit with the labels kueue.x-k8s.io/queue-name and kueue.x-k8s.io/priority-class, and pin",
        "the GPU model with the pod nodeSelector (Kueue then assigns only that model's flavors):",
    ]
    if any(p.spot_gpus for p in plan.pools):
        lines.append(f"Spot nodes: label {options.label_key}=spot and taint them {options.spot_taint_key}=true:"
                     "NoSchedule; spot work checkpoints and is requeued when a node is reclaimed.")
    for a in plan.assignments:
        queue = "bare-metal" if a.bare_metal_only else ("spot" if a.placement == "spot" else "hybrid")
        prio = f"{n}-core" if a.core else f"{n}-experiment"
        (key, value), = node_labels(plan.pool(a.gpu)).items()
        lines.append(
            f"  {a.workload} ({a.gpus}x {a.gpu}, {a.placement}): queue {queue}, priority {prio}, "
            f"nodeSelector {key}: {value}"
        )
    return lines


def export(plan: Plan, options: ExportOptions) -> ExportResult:
    objs = build(plan, options)
    check_kueue(objs, options.api)
    head = header("kueue", plan, options, _comments(plan, options))
    groups: dict[str, list[dict[str, Any]]] = {}
    for o in objs:
        groups.setdefault(FILES[o["kind"]], []).append(o)
    files = tuple(ExportFile(name, head + "---\n" + dump_all(docs)) for name, docs in sorted(groups.items()))
    return ExportResult("kueue", files, head + "---\n" + dump_all(objs))

"""SkyPilot: one task per workload with a `resources:` block that prefers the leased cluster.

Workloads that may spill get `ordered:` candidates, the leased Kubernetes context first, then the
elastic one (SkyPilot tries them in order and fails over when one has no room); workloads that must
run on bare metal get only the leased context. Contexts are options (--leased-context,
--elastic-context); the accelerator name is SkyPilot's (e.g. H100, A100-80GB), overridable
per GPU with --accelerator GPU=NAME.
"""

from __future__ import annotations

from typing import Any

from gpuplan.export.common import ExportFile, ExportOptions, ExportResult, dump, header
from gpuplan.export.model import Assignment, Plan, slugify

# gpuplan catalog id -> SkyPilot accelerator name
ACCELERATORS = {
    "a100-40g": "A100",
    "a100-80g": "A100-80GB",
    "a800-80g": "A800",
    "h100-sxm": "H100",
    "h800-sxm": "H800",
    "h200-sxm": "H200",
    "h20": "H20",
    "l40s": "L40S",
    "l20": "L20",
    "rtx-4090": "RTX4090",
    "b200": "B200",
    "ascend-910b": "Ascend910B",
}


def accelerator(gpu: str, options: ExportOptions) -> str:
    return options.accelerators.get(gpu) or ACCELERATORS.get(gpu) or gpu


def task(a: Assignment, options: ExportOptions) -> dict[str, Any]:
    leased = {"infra": f"k8s/{options.leased_context}"}
    resources: dict[str, Any] = {"accelerators": f"{accelerator(a.gpu, options)}:{a.gpus}"}
    if a.bare_metal_only:
        resources.update(leased)
    else:
        resources["ordered"] = [leased, {"infra": f"k8s/{options.elastic_context}"}]
    return {"name": slugify(a.workload), "resources": resources}


def export(plan: Plan, options: ExportOptions) -> ExportResult:
    head = header(
        "skypilot",
        plan,
        options,
        [
            "SkyPilot task resources, one task per workload: add your setup/run and launch with",
            "`sky launch -c <cluster> <file>`. `ordered:` tries the leased context first,",
            "then the elastic one.",
        ],
    )
    files = []
    docs = []
    for a in plan.assignments:
        why = f"# {a.workload}: {a.gpus}x {a.gpu}, placement {a.placement}" + (
            f" ({a.reason})" if a.reason else ""
        )
        body = why + "\n" + dump(task(a, options))
        docs.append(body)
        files.append(ExportFile(f"{slugify(a.workload)}.sky.yaml", head + body))
    if not docs:
        docs.append("# the plan assigns no workload\n{}\n")
    return ExportResult("skypilot", tuple(files), head + "---\n".join(docs))

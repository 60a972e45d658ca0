"""What every exporter shares: options, the provenance header, GPU resource names, YAML dumping."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import yaml

from gpuplan import reproducible
from gpuplan.errors import ExportError
from gpuplan.export import quantity
from gpuplan.export.model import Plan, Pool
from gpuplan.export.validate import is_dns_label
from gpuplan.limits import CONTROL_CHARACTERS, name_problem

# Device-plugin resource names by vendor (the names the vendors' Kubernetes device plugins register).
GPU_RESOURCE_BY_VENDOR = {
    "nvidia": "nvidia.com/gpu",
    "huawei": "huawei.com/Ascend910",
    "amd": "amd.com/gpu",
}

# Defaults for CPU and memory per GPU in quotas and node lines: a conservative share of a typical
# 8-card training server (128-224 cores and 1-2 TiB of memory, i.e. 16-28 cores and 128-256 GiB per
# card). Set them from the real nodes' allocatable / cards with --cpu-per-gpu / --memory-per-gpu.
DEFAULT_CPU_PER_GPU = "16"
DEFAULT_MEMORY_PER_GPU = "128Gi"


@dataclass(frozen=True)
class ExportOptions:
    api: str = "v1beta2"  # Kueue API version: v1beta2 (Kueue >= 0.15) or v1beta1
    name: str = "gpuplan"  # prefix of every object name
    namespaces: tuple[str, ...] = ("default",)
    cpu_per_gpu: str = DEFAULT_CPU_PER_GPU
    memory_per_gpu: str = DEFAULT_MEMORY_PER_GPU
    gpu_resources: dict[str, str] = field(default_factory=dict)  # gpu id (or "*") -> resource name
    autoscale: bool = False
    provisioning_class: str = "check-capacity.autoscaling.x-k8s.io"
    label_key: str = "gpuplan.io/pool"  # node label telling leased from elastic nodes
    taint_key: str = "gpuplan.io/elastic"  # taint on elastic nodes, tolerated by the elastic flavor
    leased_context: str = "gpuplan-leased"  # SkyPilot: Kubernetes context of the leased cluster
    elastic_context: str = "gpuplan-elastic"  # SkyPilot: Kubernetes context of the elastic cluster
    accelerators: dict[str, str] = field(default_factory=dict)  # gpu id -> SkyPilot accelerator name
    spot_infra: str | None = None  # SkyPilot: where spot work runs (e.g. aws, gcp/us-central1); None: any cloud
    spot_taint_key: str = "gpuplan.io/spot"  # taint on spot nodes, tolerated by the spot flavor
    slurm_accounting: bool = False  # Slurm: AccountingStorageTRES active (slurmdbd runs) or commented
    generated_at: str | None = None  # overrides the plan's time (else SOURCE_DATE_EPOCH, plan, now)

    def check(self) -> None:
        for flag, value in (("--cpu-per-gpu", self.cpu_per_gpu), ("--memory-per-gpu", self.memory_per_gpu)):
            if not quantity.is_quantity(value) or quantity.to_decimal(value) <= 0:
                raise ExportError(
                    f"{flag}: expected a positive Kubernetes quantity (16, 1500m, 128Gi), got {value!r}",
                    field=flag,
                )
        for ns in self.namespaces:
            if not is_dns_label(ns):
                raise ExportError(
                    f"{ns!r} is not a valid Kubernetes namespace",
                    field="--namespace",
                    hint="A namespace is an RFC 1123 label: lower-case a-z, 0-9 and '-', starting and "
                    "ending with a letter or digit, at most 63 characters (e.g. ml-team).",
                )
        for flag, value in (("--name", self.name), ("--leased-context", self.leased_context),
                            ("--elastic-context", self.elastic_context), ("--label-key", self.label_key),
                            ("--taint-key", self.taint_key), ("--provisioning-class", self.provisioning_class),
                            *((f"--gpu-resource {k}", v) for k, v in self.gpu_resources.items()),
                            *((f"--accelerator {k}", v) for k, v in self.accelerators.items())):
            problem = name_problem(value)
            if problem is not None or any(c in value for c in " \t#=,"):
                raise ExportError(f"{flag}: {value[:40]!r} {problem or 'holds a space, #, = or comma'}",
                                  field=flag.split()[0],
                                  hint="names in scheduler configuration are one word of at most 128 characters.")
        if self.api not in ("v1beta1", "v1beta2"):
            raise ExportError(f"--api: expected v1beta1 or v1beta2, got {self.api!r}", field="--api")


def one_line(text: str) -> str:
    """`text` with every control character written as an escape (`\\n`, `\\x1b`, `\\u2028`), so that a
    name holding a newline stays on its comment or config line instead of starting a new one."""
    return CONTROL_CHARACTERS.sub(lambda m: repr(m.group())[1:-1], text)


def check_file_name(stem: str, what: str, field: str, source: str | None = None) -> str:
    """`stem` when it can be a file name on every file system (at most 128 characters before the suffix,
    no control character); else an ExportError naming the field."""
    problem = name_problem(stem)
    if problem is not None or not stem:
        raise ExportError(f"{what} cannot be a file name: it {problem or 'is empty'}", file=source, field=field,
                          hint="shorten the id in the scenario (ids are one line of at most 128 characters).")
    return stem


@dataclass(frozen=True)
class ExportFile:
    name: str
    text: str


@dataclass(frozen=True)
class ExportResult:
    """What an exporter produced: the files for `-o DIR`, and the single stream for stdout."""

    target: str
    files: tuple[ExportFile, ...]
    stdout: str


def timestamp(plan: Plan, options: ExportOptions, environ: Mapping[str, str] | None = None) -> str:
    """When: --generated-at, else SOURCE_DATE_EPOCH (reproducible builds), else the plan's, else now."""
    if options.generated_at:
        return options.generated_at
    built = reproducible.build_time(environ)  # a bad value is a UsageError (exit 2) naming the variable
    if built is not None:
        return reproducible.stamp(built)
    if plan.generated_at:
        return plan.generated_at
    return reproducible.stamp(datetime.now(UTC))


def header(target: str, plan: Plan, options: ExportOptions, extra: list[str] | None = None) -> str:
    """The provenance comment every file starts with."""
    lines = [
        f"Generated by `gpuplan export {target}`; edit the plan and export again rather than this file.",
        f"Plan: {plan.source}",
        f"Scenario: {plan.scenario or 'unknown'}",
        f"Generated at: {timestamp(plan, options)}",
    ]
    lines += extra or []
    return "".join(f"# {one_line(line)}\n" if line else "#\n" for line in lines)


def gpu_resource(pool: Pool, options: ExportOptions, plan: Plan | None = None) -> str:
    name = options.gpu_resources.get(pool.gpu) or options.gpu_resources.get("*")
    if name:
        return name
    try:
        return GPU_RESOURCE_BY_VENDOR[pool.vendor]
    except KeyError:
        raise ExportError(
            f"no Kubernetes resource name known for vendor {pool.vendor!r} (GPU {pool.gpu})",
            file=plan.source if plan else None,
            field=f"pools[{plan.pools.index(pool)}].vendor" if plan else "pools.vendor",
            hint=f"Name it: --gpu-resource {pool.gpu}=example.com/gpu",
        ) from None


def dump(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True, default_flow_style=False, width=110)


def dump_all(objs: list[Any]) -> str:
    return "---\n".join(dump(o) for o in objs)


def cpu_for(gpus: int, options: ExportOptions) -> str:
    return quantity.scale(options.cpu_per_gpu, gpus)


def memory_for(gpus: int, options: ExportOptions) -> str:
    return quantity.scale(options.memory_per_gpu, gpus)

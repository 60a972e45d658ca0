"""Slurm: node, partition and power-saving lines for slurm.conf, and the matching gres.conf.

Leased bare-metal nodes get a low `Weight` (Slurm allocates the lowest weight first) and
`Feature=baremetal`; elastic container nodes are `State=CLOUD` with a higher weight and
`Feature=cloud`, created on demand by ResumeProgram and released by SuspendProgram after SuspendTime.
One partition spans both, so a job lands on leased nodes first and spills to elastic ones; a job
that must stay on bare metal asks `--constraint=baremetal`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan.export import quantity
from gpuplan.export.common import ExportFile, ExportOptions, ExportResult, header
from gpuplan.export.model import Plan, Pool

LEASED_WEIGHT = 1
ELASTIC_WEIGHT = 100
SUSPEND_TIME_S = 600
DEVICE_FILES = {"nvidia": "/dev/nvidia", "huawei": "/dev/davinci"}


@dataclass(frozen=True)
class NodeGroup:
    """Nodes with the same shape, written as one NodeName line with a hostlist."""

    prefix: str
    first: int
    count: int
    gpus: int
    weight: int
    feature: str
    cloud: bool
    pool: Pool

    @property
    def hostlist(self) -> str:
        last = self.first + self.count - 1
        return f"{self.prefix}[{self.first}-{last}]" if self.count > 1 else f"{self.prefix}{self.first}"

    @property
    def names(self) -> list[str]:
        return [f"{self.prefix}{i}" for i in range(self.first, self.first + self.count)]


def split_cards(total: int, per_node: int) -> list[int]:
    """Cards per node: full nodes, then the remainder."""
    full, rest = divmod(total, per_node)
    return [per_node] * full + ([rest] if rest else [])


def _groups(
    prefix: str, cards: list[int], weight: int, feature: str, cloud: bool, pool: Pool
) -> list[NodeGroup]:
    groups: list[NodeGroup] = []
    index = 1
    for gpus in dict.fromkeys(cards):  # shapes in order of first appearance
        count = cards.count(gpus)
        groups.append(NodeGroup(prefix, index, count, gpus, weight, feature, cloud, pool))
        index += count
    return groups


def node_groups(plan: Plan) -> list[NodeGroup]:
    groups: list[NodeGroup] = []
    for i, p in enumerate(plan.pools):
        if p.reserved_gpus:
            # whole nodes (lease_unit node) or cards filling servers in order (lease_unit gpu)
            leased = split_cards(p.reserved_gpus, p.gpus_per_node)
            groups += _groups(f"{p.slug}-leased", leased, LEASED_WEIGHT + i, f"baremetal,{p.slug}", False, p)
    for i, p in enumerate(plan.pools):
        elastic = plan.elastic_gpus(p.gpu)
        if elastic:
            groups += _groups(
                f"{p.slug}-elastic",
                split_cards(elastic, p.gpus_per_node),
                ELASTIC_WEIGHT + i,
                f"cloud,{p.slug}",
                True,
                p,
            )
    return groups


def node_line(g: NodeGroup, options: ExportOptions) -> str:
    cpus = math.ceil(quantity.to_decimal(options.cpu_per_gpu) * g.gpus)
    memory = quantity.mib(quantity.scale(options.memory_per_gpu, g.gpus))
    state = "CLOUD" if g.cloud else "UNKNOWN"
    return (
        f"NodeName={g.hostlist} CPUs={cpus} RealMemory={memory} Gres=gpu:{g.gpus} "
        f"Weight={g.weight} Feature={g.feature} State={state}"
    )


def gres_line(g: NodeGroup) -> str:
    dev = DEVICE_FILES.get(g.pool.vendor)
    where = (
        f"File={dev}[0-{g.gpus - 1}]"
        if dev and g.gpus > 1
        else (f"File={dev}0" if dev else f"Count={g.gpus}")
    )
    return f"NodeName={g.hostlist} Name=gpu {where}"


def render(plan: Plan, options: ExportOptions) -> tuple[str, str]:
    """(slurm.conf fragment, gres.conf) without headers."""
    groups = node_groups(plan)
    leased = [g for g in groups if not g.cloud]
    cloud = [g for g in groups if g.cloud]
    out = ["GresTypes=gpu"]
    if cloud:
        out += [
            "#",
            "# Power saving drives the elastic (State=CLOUD) nodes. PLACEHOLDERS: replace both programs",
            "# with scripts that create / release container nodes through your provider's API; Slurm",
            "# calls them with a hostlist of node names (e.g. ascend-910b-elastic[1-2]) and waits",
            "# ResumeTimeout seconds for the nodes to register.",
            "# SuspendTime: seconds an elastic node may idle before it is released (match the billing step).",
            "# Leased nodes are paid for whether busy or not, so they are never suspended (SuspendExcNodes).",
            "SuspendProgram=/etc/slurm/gpuplan-suspend.sh",
            "ResumeProgram=/etc/slurm/gpuplan-resume.sh",
            f"SuspendTime={SUSPEND_TIME_S}",
            "SuspendTimeout=120",
            "ResumeTimeout=900",
        ]
        if leased:
            out.append("SuspendExcNodes=" + ",".join(g.hostlist for g in leased))
        out.append("PrivateData=cloud")
    out += ["#", "# Leased bare-metal nodes: lowest Weight, allocated first."]
    out += [node_line(g, options) for g in leased]
    if cloud:
        out += [
            "#",
            "# Elastic container nodes: higher Weight, powered up only when the leased ones are full.",
        ]
        out += [node_line(g, options) for g in cloud]
    bare_metal = [a.workload for a in plan.assignments if a.bare_metal_only]
    out += ["#", "# One partition over both pools. Jobs that must stay on bare metal: --constraint=baremetal"]
    if bare_metal:
        out.append(f"# (in this plan: {', '.join(bare_metal)}).")
    out.append(
        f"PartitionName={options.name} Nodes={','.join(g.hostlist for g in groups)} "
        "Default=YES MaxTime=INFINITE State=UP"
    )
    gres = [gres_line(g) for g in groups]
    return "\n".join(out) + "\n", "\n".join(gres) + "\n"


def export(plan: Plan, options: ExportOptions) -> ExportResult:
    conf, gres = render(plan, options)
    head = header(
        "slurm",
        plan,
        options,
        [
            "slurm.conf fragment: add `Include /etc/slurm/gpuplan.conf` to slurm.conf",
            "(or paste these lines).",
        ],
    )
    gres_head = header("slurm", plan, options, ["gres.conf: the GPUs of the nodes in gpuplan.conf."])
    files = (ExportFile("gpuplan.conf", head + conf), ExportFile("gres.conf", gres_head + gres))
    stdout = head + conf + "#\n# ---- gres.conf ----\n" + "".join(f"# {line}\n" for line in gres.splitlines())
    return ExportResult("slurm", files, stdout)

"""Slurm: node, partition and power-saving lines for slurm.conf, the matching gres.conf, and the
ResumeProgram / SuspendProgram (/ TaskProlog) scripts.

Leased bare-metal nodes get a low `Weight` (Slurm allocates the lowest weight first) and
`Feature=baremetal,<model>`; elastic container nodes are `State=CLOUD` with a higher weight and
`Feature=cloud,<model>`, created on demand by ResumeProgram and released by SuspendProgram after
SuspendTime. Cards are typed GRES named by the model's short name (`Gres=gpu:h100:8`), so
`--gres=gpu:h100:8` or `--constraint=h100` selects the model. One partition spans everything, so a
job lands on leased nodes first and spills to elastic ones; a job kept on bare metal asks
`--constraint=baremetal`, and its comment says why: required by a rule, or placed there by the plan.
`AccountingStorageTRES=gres/gpu,...` makes accounting record GPUs per job (where accounting is on).
A spot tier (issue 26) adds `State=CLOUD` spot nodes (`Feature=spot,<model>`,
names `<gpu>-spot<N>` so ResumeProgram can ask the provider for spot) that only the partition
`<name>-spot` holds; spot jobs are submitted there with `--requeue`, so a reclaimed node's job goes
back to the queue. The on-demand fallback is the submitter's: `--partition=<name>-spot,<name>` lets
Slurm start the job in whichever partition can run it first. (Putting the elastic nodes in the spot
partition behind a higher weight does not make spot come first: Slurm 22.05 powered a 100-weight
elastic node up for a spot job with a 50-weight spot node powered down beside it, in the live test.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan.export import quantity, slurm_scripts
from gpuplan.export.common import ExportFile, ExportOptions, ExportResult, header, one_line
from gpuplan.export.gpus import names
from gpuplan.export.model import BARE_METAL_REQUIREMENTS, Assignment, Plan, Pool, spread

LEASED_WEIGHT = 1
ELASTIC_WEIGHT = 100
SPOT_WEIGHT = 50  # between leased and elastic (the nodes are in a partition of their own)
SUSPEND_TIME_S = 600
DEVICE_FILES = {"nvidia": "/dev/nvidia", "huawei": "/dev/davinci"}
SCRIPT_DIR = "/etc/slurm"


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
    def gpu_type(self) -> str:
        return names(self.pool.gpu).short

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
            feature = f"baremetal,{names(p.gpu).short}"
            groups += _groups(f"{p.slug}-leased", leased, LEASED_WEIGHT + i, feature, False, p)
    for i, p in enumerate(plan.pools):
        elastic = plan.elastic_gpus(p.gpu)
        if elastic:
            groups += _groups(
                f"{p.slug}-elastic",
                split_cards(elastic, p.gpus_per_node),
                ELASTIC_WEIGHT + i,
                f"cloud,{names(p.gpu).short}",
                True,
                p,
            )
    for i, p in enumerate(plan.pools):
        if p.spot_gpus:
            groups += _groups(f"{p.slug}-spot", split_cards(p.spot_gpus, p.spot_gpus_per_node), SPOT_WEIGHT + i,
                              f"spot,{names(p.gpu).short}", True, p)
    return groups


def node_line(g: NodeGroup, options: ExportOptions) -> str:
    cpus = math.ceil(quantity.to_decimal(options.cpu_per_gpu) * g.gpus)
    memory = quantity.mib(quantity.scale(options.memory_per_gpu, g.gpus))
    state = "CLOUD" if g.cloud else "UNKNOWN"
    return (
        f"NodeName={g.hostlist} CPUs={cpus} RealMemory={memory} Gres=gpu:{g.gpu_type}:{g.gpus} "
        f"Weight={g.weight} Feature={g.feature} State={state}"
    )


def gres_line(g: NodeGroup) -> str:
    dev = DEVICE_FILES.get(g.pool.vendor)
    where = (
        f"File={dev}[0-{g.gpus - 1}]"
        if dev and g.gpus > 1
        else (f"File={dev}0" if dev else f"Count={g.gpus}")
    )
    return f"NodeName={g.hostlist} Name=gpu Type={g.gpu_type} {where}"


def ascend_prefixes(groups: list[NodeGroup]) -> list[str]:
    """Node name prefixes of the Ascend (huawei) groups, for the TaskProlog."""
    return list(dict.fromkeys(g.prefix for g in groups if g.pool.vendor == "huawei"))


def _why_bare_metal(a: Assignment) -> str:
    """Whether a rule requires bare metal (compliance, a custom driver) or the plan only placed it there."""
    rules = sorted(BARE_METAL_REQUIREMENTS & set(a.requires))
    if rules:
        return f"required by a rule: {', '.join(rules)}"
    return "placed on bare metal by the plan; may move if the plan changes"


def render(plan: Plan, options: ExportOptions) -> tuple[str, str]:
    """(slurm.conf fragment, gres.conf) without headers."""
    groups = node_groups(plan)
    leased = [g for g in groups if not g.cloud]
    cloud = [g for g in groups if g.cloud]
    out = ["GresTypes=gpu"]
    types = sorted({names(g.pool.gpu).short for g in groups})
    tres = "AccountingStorageTRES=" + ",".join(["gres/gpu", *(f"gres/gpu:{t}" for t in types)])
    out += ["#", "# GPU accounting: sacct and sreport record each job's GPUs (by type), not only its CPUs."]
    if options.slurm_accounting:
        out += ["# Needs accounting through slurmdbd (AccountingStorageType=accounting_storage/slurmdbd).", tres]
    else:
        out += [
            "# slurmctld refuses this line unless accounting goes through slurmdbd, so it is off here. Enable it",
            "# with both lines (or export with --slurm-accounting):",
            "#   AccountingStorageType=accounting_storage/slurmdbd",
            f"#   {tres}",
        ]
    if cloud:
        example = cloud[0].hostlist
        out += [
            "#",
            "# Power saving drives the elastic (State=CLOUD) nodes: slurmctld runs ResumeProgram with a",
            f"# hostlist (e.g. {example}) when jobs need them and SuspendProgram after SuspendTime idle",
            "# seconds (match the billing step). Both scripts come with this export (-o DIR): put them in",
            f"# {SCRIPT_DIR}/ (executable) with gpuplan-power.env, where GPUPLAN_RESUME_COMMAND and",
            "# GPUPLAN_SUSPEND_COMMAND name your provider's commands that create / release one node",
            "# (the node's slurmd must register within ResumeTimeout seconds). They log to GPUPLAN_POWER_LOG.",
            "# Leased nodes are paid for whether busy or not, so they are never suspended (SuspendExcNodes).",
            f"SuspendProgram={SCRIPT_DIR}/gpuplan-suspend.sh",
            f"ResumeProgram={SCRIPT_DIR}/gpuplan-resume.sh",
            f"SuspendTime={SUSPEND_TIME_S}",
            "SuspendTimeout=120",
            "ResumeTimeout=900",
        ]
        if leased:
            out.append("SuspendExcNodes=" + ",".join(g.hostlist for g in leased))
        out.append("PrivateData=cloud")
    ascend = ascend_prefixes(groups)
    if ascend:
        out += [
            "#",
            "# Ascend nodes: CANN reads ASCEND_RT_VISIBLE_DEVICES; this TaskProlog (in the export) sets it",
            "# from the cards Slurm binds. If slurm.conf has a TaskProlog already, call this one from it.",
            f"TaskProlog={SCRIPT_DIR}/gpuplan-task-prolog.sh",
        ]
    out += ["#", "# Leased bare-metal nodes: lowest Weight, allocated first."]
    out += [node_line(g, options) for g in leased]
    spot = [g for g in cloud if g.feature.startswith("spot,")]
    if len(cloud) > len(spot):
        out += [
            "#",
            "# Elastic container nodes: higher Weight, powered up only when the leased ones are full.",
        ]
        out += [node_line(g, options) for g in cloud if g not in spot]
    if spot:
        out += ["#", "# Spot nodes (reclaimable): only in the spot partition (submit with --requeue)."]
        out += [node_line(g, options) for g in spot]
    out += ["#", "# One partition over every node. Select the GPU model with its typed GRES or feature:"]
    for p in plan.pools:
        if any(g.pool is p for g in groups):
            short = names(p.gpu).short
            out.append(f"#   {p.gpu}: --gres=gpu:{short}:N (or --constraint={short})")
    for a in plan.assignments:
        short = names(a.gpu).short
        pin = f" --constraint=baremetal ({_why_bare_metal(a)})" if a.bare_metal_only else ""
        if a.placement == "spot":
            pin = (f" --partition={options.name}-spot --requeue (spot; --partition={options.name}-spot,"
                   f"{options.name} to fall back to on demand)")
        nodes, per_node = spread(a.gpus, plan.pool(a.gpu).gpus_per_node)
        where = f"-N {nodes} " if nodes > 1 else ""
        out.append(f"#   {a.workload}: {where}--gres=gpu:{short}:{per_node}{pin}")
    out.append(
        f"PartitionName={options.name} Nodes={','.join(g.hostlist for g in groups if g not in spot)} "
        "Default=YES MaxTime=INFINITE State=UP"
    )
    if spot:
        out.append(
            f"PartitionName={options.name}-spot Nodes={','.join(g.hostlist for g in spot)} "
            "Default=NO MaxTime=INFINITE State=UP"
        )
    gres = [gres_line(g) for g in groups]
    # every line built from the plan's names stays one line (a workload id with a newline stays in its comment)
    return "\n".join(map(one_line, out)) + "\n", "\n".join(map(one_line, gres)) + "\n"


def export(plan: Plan, options: ExportOptions) -> ExportResult:
    conf, gres = render(plan, options)
    groups = node_groups(plan)
    cloud = [g for g in groups if g.cloud]
    scripts: list[tuple[str, str]] = []
    if cloud:
        env = slurm_scripts.POWER_ENV.format(example=cloud[0].names[0])
        scripts += [
            ("gpuplan-resume.sh", slurm_scripts.RESUME),
            ("gpuplan-suspend.sh", slurm_scripts.SUSPEND),
            ("gpuplan-power.env", env),
        ]
    if ascend_prefixes(groups):
        scripts.append(("gpuplan-task-prolog.sh", slurm_scripts.task_prolog(ascend_prefixes(groups))))
    lines = [
        "slurm.conf fragment: add `Include /etc/slurm/gpuplan.conf` to slurm.conf",
        "(or paste these lines).",
    ]
    if scripts:
        lines.append(
            "With -o DIR the export also writes " + ", ".join(name for name, _ in scripts) + f" for {SCRIPT_DIR}/."
        )
    head = header("slurm", plan, options, lines)
    gres_head = header("slurm", plan, options, ["gres.conf: the GPUs of the nodes in gpuplan.conf."])
    files = [ExportFile("gpuplan.conf", head + conf), ExportFile("gres.conf", gres_head + gres)]
    for name, text in scripts:
        files.append(ExportFile(name, text))
    stdout = head + conf + "#\n# ---- gres.conf ----\n" + "".join(f"# {line}\n" for line in gres.splitlines())
    return ExportResult("slurm", tuple(files), stdout)

"""The programs the Slurm export writes next to gpuplan.conf: ResumeProgram, SuspendProgram, TaskProlog.

ResumeProgram / SuspendProgram are what slurmctld runs to create and release the elastic
(State=CLOUD) nodes. They call the commands the user sets for their provider in
`gpuplan-power.env` (next to the scripts, or the file named by GPUPLAN_POWER_CONF), once per node,
log each step, and tell slurmctld the outcome with `scontrol update`:

- resume: `$GPUPLAN_RESUME_COMMAND NODE` creates the node and starts its slurmd; if it prints an
  address on its last line, the node's NodeAddr is set to it. A failure marks the node DOWN with a
  reason (`scontrol update NodeName=NODE State=RESUME` once fixed).
- suspend: `$GPUPLAN_SUSPEND_COMMAND NODE` releases the node; then NodeAddr goes back to the name.

The TaskProlog copies the cards Slurm bound (CUDA_VISIBLE_DEVICES, which Slurm sets for every
`gpu` GRES) into ASCEND_RT_VISIBLE_DEVICES on Ascend nodes, which CANN reads instead.
"""

from __future__ import annotations

POWER_ENV = """\
# gpuplan power-saving settings, read by gpuplan-resume.sh and gpuplan-suspend.sh.
# Each command gets one node name (e.g. {example}) and must return 0 on success.
# GPUPLAN_RESUME_COMMAND creates the node, starts slurmd on it (slurmd -N NODE), and may print the
# node's address on its last line. A container on a host that is already up must start slurmd with
# -b (report the boot now): slurmctld ignores a resumed node whose boot time is older than the resume
# request ("Still waiting for boot") until ResumeTimeout marks it down.
# GPUPLAN_SUSPEND_COMMAND releases it.
GPUPLAN_RESUME_COMMAND=
GPUPLAN_SUSPEND_COMMAND=
GPUPLAN_POWER_LOG=${{GPUPLAN_POWER_LOG:-/var/log/slurm/gpuplan-power.log}}
"""

_COMMON = """\
set -u
here=$(cd "$(dirname "$0")" && pwd)
conf=${GPUPLAN_POWER_CONF:-$here/gpuplan-power.env}
if [ -r "$conf" ]; then
    set -a
    . "$conf"
    set +a
fi
log_file=${GPUPLAN_POWER_LOG:-/var/log/slurm/gpuplan-power.log}
scontrol=${SCONTROL:-scontrol}
log() {
    printf '%s %s[%s]: %s\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$action" "$$" "$*" >> "$log_file" 2>/dev/null \\
        || printf '%s %s: %s\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$action" "$*" >&2
}
if [ $# -ne 1 ] || [ -z "$1" ]; then
    log "usage: $0 HOSTLIST (Slurm passes the node names, e.g. gpu-elastic[1-2])"
    exit 2
fi
nodes=$("$scontrol" show hostnames "$1") || { log "cannot expand hostlist $1"; exit 1; }
"""

RESUME = (
    """\
#!/bin/bash
# gpuplan ResumeProgram: slurmctld runs it with a hostlist of elastic (State=CLOUD) nodes to create.
# Set GPUPLAN_RESUME_COMMAND in gpuplan-power.env; see the header of gpuplan.conf.
action=resume
"""
    + _COMMON
    + """\
if [ -z "${GPUPLAN_RESUME_COMMAND:-}" ]; then
    log "GPUPLAN_RESUME_COMMAND is not set in $conf: cannot create $1"
    for node in $nodes; do
        "$scontrol" update NodeName="$node" State=DOWN Reason="gpuplan: GPUPLAN_RESUME_COMMAND not set"
    done
    exit 1
fi
status=0
for node in $nodes; do
    log "creating $node: $GPUPLAN_RESUME_COMMAND $node"
    if out=$($GPUPLAN_RESUME_COMMAND "$node" 2>>"$log_file"); then
        addr=$(printf '%s\\n' "$out" | tail -n 1 | tr -d '[:space:]')
        if [ -n "$addr" ]; then
            "$scontrol" update NodeName="$node" NodeAddr="$addr" NodeHostname="$node" \\
                && log "$node is at $addr" || log "scontrol could not set the address of $node"
        fi
        log "created $node; slurmctld waits ResumeTimeout for its slurmd to register"
    else
        rc=$?
        log "creating $node failed (exit $rc): marking it DOWN"
        "$scontrol" update NodeName="$node" State=DOWN Reason="gpuplan: resume command failed (exit $rc)"
        status=1
    fi
done
exit $status
"""
)

SUSPEND = (
    """\
#!/bin/bash
# gpuplan SuspendProgram: slurmctld runs it with a hostlist of idle elastic nodes to release.
# Set GPUPLAN_SUSPEND_COMMAND in gpuplan-power.env; see the header of gpuplan.conf.
action=suspend
"""
    + _COMMON
    + """\
if [ -z "${GPUPLAN_SUSPEND_COMMAND:-}" ]; then
    log "GPUPLAN_SUSPEND_COMMAND is not set in $conf: $1 is still running and billed"
    exit 1
fi
status=0
for node in $nodes; do
    log "releasing $node: $GPUPLAN_SUSPEND_COMMAND $node"
    if $GPUPLAN_SUSPEND_COMMAND "$node" >>"$log_file" 2>&1; then
        "$scontrol" update NodeName="$node" NodeAddr="$node" NodeHostname="$node" \\
            || log "scontrol could not reset the address of $node"
        log "released $node"
    else
        rc=$?
        log "releasing $node failed (exit $rc): it may still be billed"
        "$scontrol" update NodeName="$node" State=DOWN Reason="gpuplan: suspend command failed (exit $rc)"
        status=1
    fi
done
exit $status
"""
)

TASK_PROLOG = """\
#!/bin/bash
# gpuplan TaskProlog: on Ascend nodes, CANN reads ASCEND_RT_VISIBLE_DEVICES, not the
# CUDA_VISIBLE_DEVICES Slurm sets for the bound `gpu` cards; lines "export NAME=VALUE" printed
# here are set in the task's environment.
case "${{SLURMD_NODENAME:-}}" in
    {patterns})
        cards=${{CUDA_VISIBLE_DEVICES:-${{SLURM_STEP_GPUS:-${{SLURM_JOB_GPUS:-}}}}}}
        if [ -n "$cards" ]; then
            echo "export ASCEND_RT_VISIBLE_DEVICES=$cards"
        fi
        ;;
esac
exit 0
"""


def task_prolog(node_prefixes: list[str]) -> str:
    """The TaskProlog for nodes whose names start with one of `node_prefixes` (the Ascend groups)."""
    return TASK_PROLOG.format(patterns="|".join(f"{p}*" for p in node_prefixes))


__all__ = ["POWER_ENV", "RESUME", "SUSPEND", "task_prolog"]

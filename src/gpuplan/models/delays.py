"""Time lost outside the step: moving data to the GPUs, and interruptions (issue 17).

Data movement (a workload's `data: {size_gb, site, moves}` and the offer's `site`):
    moves      = 1 (once) | sessions (per-run) | working days (daily);  a session is one working day's
                 run, or the whole run for work around the clock seven days a week
    bandwidth  = the slower of the route (its slowest link, `inputs.sites.route`) and the offer's node
                 network, in Gbit/s
    hours      = moves x size_gb x 8 / bandwidth / 3600
    money      = moves x size_gb x the route's cost per GB
An offer at the data's own site, or marked `remote_data`, or with no `site`, moves nothing.

Interruptions (the offer's rate per GPU-day, the catalog's default from Llama 3's 54-day run):
    expected   n = rate x gpus x running hours / 24
    lost work  = n x checkpoint_interval / 2 per GPU (re-run; none for inference, which keeps no
                 state): a fixed share of the running time, so the work grows by the rework factor
                 k = 1 + rate x gpus x checkpoint_interval / 48  (16,384 GPUs, 1 h checkpoints: 1.16)
    recovery   = n x the offer's recovery wait (elastic: rescheduled in minutes; a lease: the vendor's
                 support response, clock running only in business hours where it says so, + repair;
                 minutes with a leased spare)
More spares or a faster response never lengthen a run: both only lower the recovery wait.
With `checkpoint_interval: none` an interruption restarts the run from zero: k is then the exact
expectation of `models.preemption` (rate x gpus / 24 per hour, the run as one segment, no restart
time: the recovery wait is counted apart), which grows exponentially with the run's length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan.inputs.scenario_types import Offer, Scenario, Workload
from gpuplan.inputs.sites import route
from gpuplan.models.preemption import segment_moments


@dataclass(frozen=True)
class Transfer:
    moves: float
    gb: float  # per move
    gbps: float  # effective bandwidth (0 when nothing moves)
    hours: float
    cost: float
    path: tuple[str, ...]  # sites the data crosses (empty: nothing moves)


@dataclass(frozen=True)
class Interruptions:
    expected: float
    lost_hours: float  # work re-run, per GPU
    recovery_hours: float  # waiting to recover


NO_TRANSFER = Transfer(0.0, 0.0, 0.0, 0.0, 0.0, ())


def sessions(workload: Workload, active_days: float) -> float:
    """Runs of the schedule: one a working day, or one for work around the clock every day."""
    if workload.hours_per_day >= 24 and workload.days_per_week == 7:
        return 1.0
    return max(1.0, active_days)


def transfer(workload: Workload, offer: Offer, scenario: Scenario, active_days: float) -> Transfer:
    d = workload.data
    if d is None or offer.site is None or offer.remote_data or offer.site == d.site or d.size_gb == 0:
        return NO_TRANSFER
    r = route(scenario.links, d.site, offer.site)
    if r is None:  # the scenario reader refuses this; a hand-built scenario may not have
        raise ValueError(f"no route from {d.site} to {offer.site}")
    gbps = min(r.gbps, offer.network_gbps) if offer.network_gbps is not None else r.gbps
    moves = {"once": 1.0, "per-run": sessions(workload, active_days), "daily": max(1.0, active_days)}[d.moves]
    hours = moves * d.size_gb * 8 / gbps / 3600
    return Transfer(moves, d.size_gb, gbps, hours, moves * d.size_gb * r.cost_per_gb, r.hops)


def rework_factor(workload: Workload, offer: Offer, run_hours: float | None = None) -> float:
    """k: the running time a job needs with its lost work re-run, over the time without interruptions.

    `run_hours` (per GPU, without the lost work) matters only without checkpoints; left out there, k
    is that of a one-day run."""
    if workload.kind == "inference":
        return 1.0
    if math.isinf(workload.checkpoint_hours):
        w = 24.0 if run_hours is None else run_hours
        lam = offer.interruptions_per_gpu_day * workload.gpus / 24
        if w <= 0 or lam <= 0:
            return 1.0
        if lam * w > 50:
            return math.inf
        return segment_moments(lam, w, 0.0)[1] / w
    return 1.0 + offer.interruptions_per_gpu_day * workload.gpus * workload.checkpoint_hours / 48


def interruptions(workload: Workload, offer: Offer, run_hours: float) -> Interruptions:
    """`run_hours`: per GPU, without the lost work."""
    n = offer.interruptions_per_gpu_day * workload.gpus * run_hours / 24
    if workload.kind == "inference":
        lost = 0.0
    elif math.isinf(workload.checkpoint_hours):
        lost = run_hours * (rework_factor(workload, offer, run_hours) - 1)
    else:
        lost = n * workload.checkpoint_hours / 2
    return Interruptions(expected=n, lost_hours=lost, recovery_hours=n * offer.recovery_hours)

"""Spot and preemptible capacity: the work a reclaimed instance throws away, and the time to finish (issue 26).

Inputs (hours throughout):
    lam   the offer's preemption rate per node (an instance is a node; `per: gpu-hour` x gpus_per_node)
    N     the job's nodes, ceil(gpus / gpus_per_node)
    W     the work: running hours per GPU without preemptions
    tau   the checkpoint interval in running hours; `checkpoint_interval: none` makes the whole run one
          segment (a preempted run starts over); never longer than W
    r     one restart: the offer's reschedule wait (a replacement VM or container comes up) + reloading
          the workload's data over the node network (or the offer's `preemption.restart`)
    L     the offer's max_lifetime (None: none)

The job:
    Lam        = lam x N                      a synchronous multi-node job stops when any one node is
                                              reclaimed, and every node re-runs the lost work
    q          = e^(Lam tau) - 1              expected preemptions while finishing one segment: attempts
                                              are independent, each survives tau with p = e^(-Lam tau),
                                              so the failures before a success are geometric, mean (1-p)/p
    E[seg]     = q (1/Lam + r)                expected hours to finish one segment, lost work and restarts
                                              included (renewal argument: a failed attempt lasts
                                              E[X | X < tau] + r, X ~ Exp(Lam); the sum simplifies to this;
                                              Lam -> 0 gives tau)
    segments   = W / tau                      (continuous, so that the cost stays linear in the work)
    forced     = segments E[seg] / L          max_lifetime restarts: the end is known in advance, so the
                                              job checkpoints before it and loses one restart r each
    E[T]       = segments E[seg] + forced r   expected running hours per GPU
    preemptions= segments q + forced
    lost       = gpus x (E[T] - W)            GPU-hours re-run or spent restarting (billed like any other)
    Var[seg]   = q Var[Y] + q (1 + q) E[Y]^2, Y = X | X < tau, + r (a compound geometric sum)
    p90        = W + the 90th percentile of a gamma law with the extra time's mean and variance
                 (Wilson-Hilferty), summed over the segments (a gamma is exact for one rare-loss
                 segment's exponential tail and tends to the normal over many)
With no checkpoints, E[T] = (e^(Lam W) - 1)(1/Lam + r): it grows exponentially with the run's length.
An option cannot finish when a segment outlives the instance (tau > L), or when E[T] exceeds
MAX_STRETCH x W (it would practically never finish); its figures are then those of MAX_STRETCH x W
of running (E[T] = p90 = MAX_STRETCH W, preemptions Lam x that), a lower bound that keeps every
figure finite, with `finishes` False.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_STRETCH = 10.0  # expected time over the work past which a run "cannot finish" (a stated planning limit)
_EXP_LIMIT = 50.0  # Lam x tau past this, e^(Lam tau) alone exceeds any MAX_STRETCH: cannot finish
Z90 = 1.2815515655446004  # the standard normal's 90th percentile


@dataclass(frozen=True)
class LostWork:
    """One job on preemptible capacity (per GPU unless named)."""

    work_hours: float  # W
    expected_hours: float  # E[T]: running hours with lost work and restarts
    p90_hours: float  # 90th percentile of the running hours (inf when it cannot finish)
    preemptions: float  # expected count, forced max_lifetime restarts included
    lost_hours: float  # E[T] - W per GPU
    segment_hours: float  # tau as used (the run, or a day's session, without checkpoints)
    finishes: bool
    why_not: str | None = None  # "lifetime" | "stretch" when it cannot finish

    @property
    def factor(self) -> float:
        """E[T] / W: the running hours the lost work multiplies the work by (1 without preemptions)."""
        return self.expected_hours / self.work_hours if self.work_hours > 0 else 1.0


def job_rate(rate_per_node_hour: float, gpus: int, gpus_per_node: int) -> float:
    """Lam: preemptions per hour of the whole job (any of its nodes reclaimed)."""
    return rate_per_node_hour * math.ceil(gpus / gpus_per_node)


def segment_moments(lam: float, tau: float, r: float) -> tuple[float, float, float]:
    """(expected preemptions q, E[seg], Var[seg]) of finishing one segment of tau hours."""
    if lam <= 0 or tau <= 0:
        return 0.0, tau, 0.0
    x = lam * tau
    if x <= 0.0:  # a rate so small that lam x tau underflows: no reclaim
        return 0.0, tau, 0.0
    q = math.expm1(x)
    e_seg = tau * (q / x) + q * r  # q (1/lam + r), without 1/lam (which overflows for a denormal lam)
    # X | X < tau, X ~ Exp(lam); for a small lam tau the closed forms cancel: their series instead
    if x < 1e-4:
        m = tau / 2 - lam * tau * tau / 12
        var_y = tau * tau / 12
    else:
        p = math.exp(-x)
        one_minus_p = -math.expm1(-x)
        m = 1 / lam - tau * p / one_minus_p
        m2 = (2 / lam**2 - p * (tau**2 + 2 * tau / lam + 2 / lam**2)) / one_minus_p
        var_y = max(0.0, m2 - m * m)
    ey = m + r
    var = q * var_y + q * (1 + q) * ey * ey
    return q, e_seg, var


def gamma_p90(mean: float, var: float) -> float:
    """The 90th percentile of a gamma law with this mean and variance (Wilson-Hilferty; 0 for mean 0)."""
    if mean <= 0:
        return 0.0
    if var <= 0:
        return mean
    k = mean * mean / var
    theta = var / mean
    c = 1 / (9 * k)
    base = 1 - c + Z90 * math.sqrt(c)
    return k * theta * max(0.0, base) ** 3


def lost_work(work_hours: float, gpus: int, *, rate_per_node_hour: float, gpus_per_node: int,
              checkpoint_hours: float, restart_hours: float, max_lifetime_hours: float | None = None,
              session_hours: float | None = None, keeps_state: bool = True) -> LostWork:
    """Expected and p90 running hours of `work_hours` of work per GPU on preemptible capacity.

    `checkpoint_hours` inf: no checkpoints (`none`); `session_hours`: a day's run when the schedule stops
    each day (the work resumes next day, so it keeps its state between sessions: a segment never spans
    two). `keeps_state` False (inference): a preemption loses no work, only a restart."""
    w = work_hours
    lam = job_rate(rate_per_node_hour, gpus, gpus_per_node)
    tau = min(checkpoint_hours, w)
    if session_hours is not None and session_hours > 0:
        tau = min(tau, session_hours)
    if w <= 0 or lam <= 0:
        return LostWork(w, w, w, 0.0, 0.0, tau, True)
    life = max_lifetime_hours
    if not keeps_state:
        # nothing to lose but the restart: Poisson preemptions over the running time, r each
        n = lam * w
        t = w + n * restart_hours
        forced = t / life if life else 0.0
        t += forced * restart_hours
        n += forced
        var = n * restart_hours**2
        return LostWork(w, t, w + gamma_p90(t - w, var), n, t - w, tau, True)
    if life is not None and tau > life + 1e-12:
        return _cannot(w, lam, tau, "lifetime")
    if lam * tau > _EXP_LIMIT:
        return _cannot(w, lam, tau, "stretch")
    q, e_seg, var_seg = segment_moments(lam, tau, restart_hours)
    segments = w / tau
    run = segments * e_seg
    forced = run / life if life else 0.0
    t = run + forced * restart_hours
    n = segments * q + forced
    if t > MAX_STRETCH * w:
        return _cannot(w, lam, tau, "stretch")
    var = segments * var_seg
    p90 = w + gamma_p90(t - w, var)
    return LostWork(w, t, p90, n, t - w, tau, True)



def _cannot(w: float, lam: float, tau: float, why: str) -> LostWork:
    t = MAX_STRETCH * w
    return LostWork(w, t, t, lam * t, t - w, tau, False, why)

"""Waiting for leased cards when the demand is an hourly curve (`plan --demand ... --max-wait`).

An hourly demand curve (GPUs each hour, from `audit` or a CSV) has no jobs, so its waits are those of
its GPU-hours in a first-in, first-out fluid queue:

    each hour t:  d(t) GPU-hours arrive and join the queue behind the work already waiting;
                  the pool serves up to R GPU-hours, oldest work first; the wait of work served at
                  hour t that arrived at hour a is t - a (whole hours: served in its own hour = 0);
                  work that has waited `burst_after` hours without a card bursts to containers
                  (its wait is `burst_after`)

mean / p50 / p95 / max are taken over GPU-hours (weighted by amount). The pool's cost at each R is the
tariff's (`models.tariff.pool_costs`) with the bursts at the pool's container slowdown, so at
`burst_after` = 0 it is the plan's own cost curve. An approximation: a job's GPUs wait together and a
job cannot be split, which the fluid queue ignores; with a job trace, `plan --trace` replays jobs.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FluidRun:
    reserved: int
    burst_gpu_hours: float
    wait_hours: dict[str, float]  # mean, p50, p95, max over GPU-hours


def _quantile(waits: list[float], amounts: list[float], q: float) -> float:
    if not waits:
        return 0.0
    order = sorted(range(len(waits)), key=waits.__getitem__)
    total = sum(amounts)
    acc = 0.0
    for i in order:
        acc += amounts[i]
        if acc >= q * total - 1e-12:
            return waits[i]
    return waits[order[-1]]


def fluid_queue(demand: np.ndarray, reserved: int, burst_after: float) -> FluidRun:
    """The FIFO fluid queue of the module docstring for one pool size."""
    queue: deque[list[float]] = deque()  # [arrival hour, amount waiting]
    waits: list[float] = []
    amounts: list[float] = []
    burst = 0.0
    limit = math.inf if math.isinf(burst_after) else burst_after
    for t, d in enumerate(demand.tolist()):
        if d > 0:
            queue.append([float(t), float(d)])
        cap = float(reserved)
        while queue and cap > 1e-12:
            a, amount = queue[0]
            take = min(amount, cap)
            waits.append(t - a)
            amounts.append(take)
            cap -= take
            if take >= amount - 1e-12:
                queue.popleft()
            else:
                queue[0][1] = amount - take
        while queue and t + 1 - queue[0][0] > limit:  # waited as long as allowed: to containers
            a, amount = queue.popleft()
            waits.append(limit)
            amounts.append(amount)
            burst += amount
    n = len(demand)
    for a, amount in queue:  # still waiting when the curve ends: counted at its wait so far
        waits.append(min(n - a, limit))
        amounts.append(amount)
    total = sum(amounts)
    mean = sum(w * x for w, x in zip(waits, amounts, strict=True)) / total if total > 0 else 0.0
    stats = {"mean": mean, "p50": _quantile(waits, amounts, 0.5), "p95": _quantile(waits, amounts, 0.95),
             "max": max((w for w, x in zip(waits, amounts, strict=True) if x > 1e-12), default=0.0)}
    return FluidRun(reserved, burst, stats)

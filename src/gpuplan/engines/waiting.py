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
import operator
from collections import deque
from dataclasses import dataclass

import numpy as np

from gpuplan.inputs.scenario_types import Scenario


@dataclass(frozen=True)
class FluidRun:
    reserved: int
    burst_gpu_hours: float
    wait_hours: dict[str, float]  # mean, p50, p95, max over GPU-hours

    def wait_gpu_hours(self, demand_gpu_hours: float) -> float:
        """GPU-hours x hours waited, summed: the mean wait times the GPU-hours that waited."""
        return self.wait_hours["mean"] * demand_gpu_hours


def _quantile(waits: np.ndarray, amounts: list[float], total: float, q: float) -> float:
    """The smallest wait by which a share q of the GPU-hours (`total`, their sum) has been served:
    waits in a stable order, amounts added up one by one in that order (numpy's cumulative sum adds
    in sequence, as a running Python total does)."""
    if not len(waits):
        return 0.0
    order = np.argsort(waits, kind="stable")
    acc = np.cumsum(np.asarray(amounts, dtype=np.float64)[order])
    hit = np.flatnonzero(acc >= q * total - 1e-12)
    return float(waits[order[hit[0]] if len(hit) else order[-1]])


def fluid_queue(demand: np.ndarray, reserved: int, burst_after: float) -> FluidRun:
    """The FIFO fluid queue of the module docstring for one pool size.

    Hours when nothing waits and the demand fits the pool are served in their own hour (a wait of
    0); those runs of hours are taken whole, up to the next hour whose demand exceeds the pool."""
    queue: deque[list[float]] = deque()  # [arrival hour, amount waiting]
    waits: list[float] = []
    amounts: list[float] = []
    burst = 0.0
    limit = math.inf if math.isinf(burst_after) else burst_after
    values = demand.tolist()
    n = len(values)
    over = np.flatnonzero(np.asarray(demand, dtype=np.float64) > reserved).tolist() if reserved > 0 else None
    k = 0  # the next hour in `over` not before t
    t = 0
    while t < n:
        if over is not None and not queue:
            while k < len(over) and over[k] < t:
                k += 1
            stop = over[k] if k < len(over) else n
            if stop > t:  # hours t..stop-1 fit the pool and nothing waits: each served in its own hour
                fit = [d for d in values[t:stop] if d > 0]
                waits += [0.0] * len(fit)
                amounts += fit
                t = stop
                continue
        d = values[t]
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
        t += 1
    for a, amount in queue:  # still waiting when the curve ends: counted at its wait so far
        waits.append(min(n - a, limit))
        amounts.append(amount)
    # every statistic over the same amounts: those above 1e-12 GPU-hours (a vanishing amount, such as a
    # demand of 1e-130 GPUs, would otherwise count in the quantiles but not in the maximum)
    kept_waits = [x for x, y in zip(waits, amounts, strict=True) if y > 1e-12]
    kept = [y for y in amounts if y > 1e-12]
    total = sum(kept)
    mean = sum(map(operator.mul, kept_waits, kept)) / total if total > 0 else 0.0
    w = np.asarray(kept_waits, dtype=np.float64)
    stats = {"mean": mean, "p50": _quantile(w, kept, total, 0.5), "p95": _quantile(w, kept, total, 0.95),
             "max": float(w.max()) if len(w) else 0.0}
    return FluidRun(reserved, burst, stats)


def waiting_cost(run: FluidRun, demand: np.ndarray, scenario: Scenario, gpu: str) -> float:
    """Waiting priced over the curve, as `compare` prices a researcher's waiting hours:

        researcher_hour_cost x (GPU-hours x hours waited) / width,
        width = the mean `gpus` of the scenario's workloads on `gpu`, weighted by their GPU-hours a day
                (one researcher waits for a job of that many GPUs; 1 where no workload names the GPU)
    """
    wls = [w for w in scenario.workloads if w.gpus_allowed[0] == gpu]
    weights = [w.gpus * w.hours_per_day * w.days_per_week for w in wls]
    width = float(np.average([w.gpus for w in wls], weights=weights)) if wls and sum(weights) > 0 else 1.0
    return scenario.team.researcher_hour_cost * run.wait_gpu_hours(float(np.sum(demand))) / width

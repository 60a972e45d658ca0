"""Sizing a leased (reserved) pool from an hourly demand curve: the exact optimum over every R.

For a pool of R leased GPUs, over a horizon of H hours with demand d_t (GPUs, hourly means):

    cost(R) = lease(R) + ops(R) + spill(R) * c       (`gpuplan.models.tariff.pool_costs`, the one money model)
    lease(R) = billed(R) * p * lease hours           p: lease price per GPU-hour; whole nodes when leased by node
    ops(R)   = engineer cost of the pool's whole nodes (or GPUs) over the lease
    spill(R) = sum_t max(0, d_t - R)                 GPU-hours above the pool, run in containers
    c        = (container price + ops) per GPU-hour * slowdown (a dedicated GPU-hour costs s container hours)

Candidates are every R from the pinned minimum (work that must stay on bare metal) to the peak, in
steps of whole nodes when the lease is per node. spill(R) for all R comes from the sorted demand and
its suffix sums, so the whole curve costs O(T log T + peak), and the minimum is exact (no search).

Marginal rule at the optimum (lease per GPU, no ops steps): one more card saves c for every hour in
which demand exceeds R, so a card pays off while share{d_t > R} > p / c; the optimum R* is the
smallest R where the share of hours above R falls to or below p / c. `marginal()` reports both sides.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Sizing:
    reserved: int
    cost: float
    candidates: np.ndarray  # R values
    costs: np.ndarray  # total cost over the horizon for each R
    spill: np.ndarray  # container GPU-hours for each R
    horizon_hours: float


def spill_curve(demand: np.ndarray, rs: np.ndarray) -> np.ndarray:
    """sum_t max(0, d_t - R) for each R in rs (exact; sorted demand and suffix sums)."""
    d = np.sort(np.asarray(demand, dtype=np.float64))
    suffix = np.concatenate([np.cumsum(d[::-1])[::-1], [0.0]])  # suffix[i] = sum d[i:]
    idx = np.searchsorted(d, rs, side="right")  # first index with d > R
    count = len(d) - idx
    return suffix[idx] - rs * count


def size_pool(
    demand: np.ndarray,
    *,
    cost_of: Callable[[np.ndarray, np.ndarray], np.ndarray],
    step: int = 1,
    min_reserved: float = 0.0,
    max_reserved: int | None = None,
) -> Sizing:
    """The R minimising `cost_of(R, spill(R))` over every candidate R (hourly `demand`).

    `cost_of` is the tariff's pool cost (`tariff.pool_costs`): the sizer knows demand, not money.
    """
    d = np.asarray(demand, dtype=np.float64)
    if d.ndim != 1 or len(d) == 0:
        raise ValueError("demand must be a non-empty 1-D array of hourly GPUs")
    if np.any(d < 0) or not np.all(np.isfinite(d)):
        raise ValueError("demand must be finite and >= 0")
    hours = float(len(d))
    peak = float(d.max())
    top = max_reserved if max_reserved is not None else math.ceil(peak - 1e-9)
    lo = math.ceil(min_reserved - 1e-9)
    lo = math.ceil(lo / step) * step
    top = max(lo, math.ceil(top / step) * step)
    rs = np.arange(lo, top + 1, step, dtype=np.int64)
    spill = spill_curve(d, rs.astype(np.float64))
    costs = np.asarray(cost_of(rs, spill), dtype=np.float64)
    # exact minimum; ties go to the smaller pool (less commitment for the same money)
    best = int(np.argmin(np.round(costs, 9)))
    return Sizing(int(rs[best]), float(costs[best]), rs, costs, spill, hours)


@dataclass(frozen=True)
class Marginal:
    ratio: float  # lease cost per hour / container cost per hour
    share_above_below: float  # share of hours with demand > R* - step (the last card added paid off)
    share_above: float  # share of hours with demand > R* (one more card would not)


def marginal(demand: np.ndarray, reserved: int, step: int, lease_per_gpu_hour: float,
             container_per_gpu_hour: float, slowdown: float) -> Marginal:
    d = np.asarray(demand, dtype=np.float64)
    c = container_per_gpu_hour * slowdown
    ratio = lease_per_gpu_hour / c if c > 0 else math.inf
    below = float(np.mean(d > reserved - step)) if reserved > 0 else 1.0
    return Marginal(ratio=ratio, share_above_below=below, share_above=float(np.mean(d > reserved)))

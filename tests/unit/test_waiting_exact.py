"""`fluid_queue` (engines/waiting.py) gives, bit for bit, what its first, plainer version gave: the
runs of hours it takes whole and the statistics numpy computes change no figure."""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpuplan.engines.waiting import FluidRun, fluid_queue


def _quantile_ref(waits: list[float], amounts: list[float], q: float) -> float:
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


def fluid_queue_ref(demand: np.ndarray, reserved: int, burst_after: float) -> FluidRun:
    """`fluid_queue` as it was written first: one Python step per hour, statistics in Python."""
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
    # statistics over the amounts served above 1e-12 GPU-hours, all of them (a vanishing amount counts in
    # none: 6.58e-133 GPUs once waited 1 h at the median and 0 at the maximum)
    waits, amounts = [w for w, x in zip(waits, amounts, strict=True) if x > 1e-12], [x for x in amounts if x > 1e-12]
    total = sum(amounts)
    mean = sum(w * x for w, x in zip(waits, amounts, strict=True)) / total if total > 0 else 0.0
    stats = {"mean": mean, "p50": _quantile_ref(waits, amounts, 0.5), "p95": _quantile_ref(waits, amounts, 0.95),
             "max": max(waits, default=0.0)}
    return FluidRun(reserved, burst, stats)


curves = st.lists(st.floats(0, 12, allow_nan=False), min_size=1, max_size=120).map(np.array)
AFTERS = [0.0, 0.5, 1.0, 2.0, 3.0, 24.0, math.inf]


@settings(max_examples=150, deadline=None)
@given(curves, st.integers(0, 14), st.sampled_from(AFTERS))
@example(np.array([1e-12]), 0, 0.5)
@example(np.array([6.58e-133]), 0, 1.0)
def test_the_same_as_hour_by_hour(d: np.ndarray, r: int, after: float) -> None:
    assert repr(fluid_queue(d, r, after)) == repr(fluid_queue_ref(d, r, after))


@pytest.mark.parametrize("after", AFTERS)
def test_a_month_of_days_and_nights(after: float) -> None:
    rng = np.random.default_rng(int(after) if math.isfinite(after) else 99)
    hours = np.arange(24 * 30)
    day = (hours % 24 >= 9) & (hours % 24 < 21)
    for d in (np.round(np.where(day, 4 + 3 * rng.random(len(hours)), rng.random(len(hours))), 4),
              np.where(day, np.floor(6 * rng.random(len(hours))), 0.0)):
        for r in range(0, 9):
            assert repr(fluid_queue(d, r, after)) == repr(fluid_queue_ref(d, r, after))

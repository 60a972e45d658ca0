"""Invariants of the fluid queue behind `plan --max-wait` on an hourly curve (engines/waiting.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.engines.waiting import fluid_queue

curves = st.lists(st.floats(0, 20, allow_nan=False), min_size=1, max_size=96).map(np.array)


@settings(max_examples=80, deadline=None)
@given(curves, st.integers(0, 24), st.sampled_from([0.0, 1.0, 2.0, 6.0]))
def test_waits_are_bounded_and_nothing_is_lost(d: np.ndarray, r: int, after: float) -> None:
    run = fluid_queue(d, r, after)
    w = run.wait_hours
    assert 0.0 <= w["p50"] <= w["p95"] <= w["max"] <= after + 1e-9
    assert 0.0 <= w["mean"] <= w["max"] + 1e-9
    # served on leased cards + burst = all the demand that could not wait in the pool (never more)
    assert -1e-9 <= run.burst_gpu_hours <= float(d.sum()) + 1e-9


@settings(max_examples=60, deadline=None)
@given(curves, st.integers(0, 23), st.sampled_from([0.0, 1.0, 3.0]))
def test_more_cards_never_burst_more(d: np.ndarray, r: int, after: float) -> None:
    assert fluid_queue(d, r + 1, after).burst_gpu_hours <= fluid_queue(d, r, after).burst_gpu_hours + 1e-9


@settings(max_examples=60, deadline=None)
@given(curves, st.integers(0, 24))
def test_bursting_at_once_spills_what_exceeds_the_pool_each_hour(d: np.ndarray, r: int) -> None:
    # after = 0 is plan's own rule: each hour's demand above R goes to containers
    run = fluid_queue(d, r, 0.0)
    assert abs(run.burst_gpu_hours - float(np.maximum(d - r, 0).sum())) < 1e-6
    assert run.wait_hours["max"] == 0.0


def test_a_vanishing_demand_waits_nothing_in_every_statistic() -> None:
    # found by the property above: 6.58e-133 GPUs counted in the quantiles (p50 = 1 h) but not in the max (0)
    w = fluid_queue(np.array([6.58e-133]), 0, 1.0).wait_hours
    assert w == {"mean": 0.0, "p50": 0.0, "p95": 0.0, "max": 0.0}

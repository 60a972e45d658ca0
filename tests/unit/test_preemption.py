"""models.preemption against hand arithmetic and an independent Monte Carlo of the reclaim process, and
spot pricing's properties (issue 26)."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpuplan.engines.cost import option_cost
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text
from gpuplan.models.preemption import MAX_STRETCH, lost_work


def _simulate(lam: float, tau: float, r: float, work: float, n: int, seed: int) -> tuple[float, float]:
    """Running hours of `work` in segments of `tau`: each attempt at a segment is cut by an Exp(lam)
    reclaim, which costs the time run so far plus a restart r; mean and 90th percentile over n runs."""
    rng = random.Random(seed)
    segments = round(work / tau)
    totals = []
    for _ in range(n):
        t = 0.0
        for _ in range(segments):
            while True:
                x = rng.expovariate(lam)
                if x >= tau:
                    t += tau
                    break
                t += x + r
        totals.append(t)
    totals.sort()
    return sum(totals) / n, totals[int(0.9 * n)]


@pytest.mark.parametrize(("lam", "tau", "r", "work"), [
    (0.4, 0.5, 0.5, 20.0),   # the issue's 8 nodes x 0.05, 30-minute checkpoints
    (0.05, 2.0, 0.25, 40.0),
    (0.4, 1.0, 0.5, 10.0),
    (0.02, 40.0, 0.5, 40.0),  # no checkpoints: one segment, a long exponential tail
])
def test_expected_and_p90_agree_with_a_monte_carlo(lam: float, tau: float, r: float, work: float) -> None:
    lw = lost_work(work, 8, rate_per_node_hour=lam, gpus_per_node=8, checkpoint_hours=tau, restart_hours=r)
    mean, p90 = _simulate(lam, tau, r, work, n=4000, seed=7)
    assert lw.finishes
    assert lw.expected_hours == pytest.approx(mean, rel=0.02)
    assert lw.p90_hours == pytest.approx(p90, rel=0.08)  # a gamma fit of the extra time
    assert lw.lost_hours == pytest.approx(lw.expected_hours - work)


def test_hand_arithmetic_of_the_issue_case() -> None:
    # 64 GPUs = 8 nodes x 0.05 per node-hour -> Lam = 0.4/h; a 0.5 h segment: q = e^0.2 - 1 = 0.221403;
    # E[seg] = q (1/0.4 + 0.5 h restart) = 0.664208 h, so 1.328417 h of running per hour of work
    lw = lost_work(100.0, 64, rate_per_node_hour=0.05, gpus_per_node=8, checkpoint_hours=0.5, restart_hours=0.5)
    assert lw.factor == pytest.approx(0.2214027582 * 3.0 / 0.5, rel=1e-9)
    assert lw.preemptions == pytest.approx(200 * 0.2214027582, rel=1e-9)


def test_without_checkpoints_the_time_grows_exponentially_and_then_cannot_finish() -> None:
    def f(w: float) -> float:
        return lost_work(w, 8, rate_per_node_hour=0.01, gpus_per_node=8, checkpoint_hours=math.inf,
                         restart_hours=0.0).factor

    # one segment: E[T]/W = (e^(Lam W) - 1) / (Lam W)
    assert f(10.0) == pytest.approx(math.expm1(0.1) / 0.1)
    assert f(100.0) == pytest.approx(math.expm1(1.0) / 1.0)
    long = lost_work(1000.0, 8, rate_per_node_hour=0.01, gpus_per_node=8, checkpoint_hours=math.inf,
                     restart_hours=0.0)
    assert not long.finishes and long.why_not == "stretch" and long.factor == MAX_STRETCH


def test_a_segment_longer_than_the_lifetime_cannot_finish_and_lifetime_restarts_cost_time() -> None:
    common = {"rate_per_node_hour": 0.001, "gpus_per_node": 8, "restart_hours": 0.5}
    cut = lost_work(48.0, 8, checkpoint_hours=math.inf, max_lifetime_hours=24.0, **common)
    assert not cut.finishes and cut.why_not == "lifetime"
    free = lost_work(240.0, 8, checkpoint_hours=1.0, **common)
    lived = lost_work(240.0, 8, checkpoint_hours=1.0, max_lifetime_hours=24.0, **common)
    # about ten forced restarts of 0.5 h each
    assert lived.expected_hours - free.expected_hours == pytest.approx(free.expected_hours / 24 * 0.5)
    assert lived.preemptions - free.preemptions == pytest.approx(free.expected_hours / 24)


def test_a_job_of_more_nodes_loses_more_and_inference_loses_only_restarts() -> None:
    one = lost_work(100.0, 8, rate_per_node_hour=0.05, gpus_per_node=8, checkpoint_hours=1.0, restart_hours=0.5)
    eight = lost_work(100.0, 64, rate_per_node_hour=0.05, gpus_per_node=8, checkpoint_hours=1.0, restart_hours=0.5)
    assert eight.factor > one.factor
    serve = lost_work(100.0, 8, rate_per_node_hour=0.05, gpus_per_node=8, checkpoint_hours=1.0, restart_hours=0.5,
                      keeps_state=False)
    assert serve.expected_hours == pytest.approx(100.0 + 0.05 * 100.0 * 0.5)


SCENARIO = """
version: 1
currency: USD
offers:
  - {{id: od, gpu: h100-sxm, mode: vm, tenancy: dedicated, price: {{amount: 6.88, per: gpu-hour}}}}
  - id: spot
    gpu: h100-sxm
    mode: vm
    tenancy: dedicated
    capacity: spot
    preemption: {{rate: {rate}, per: node-hour}}
    price: {{amount: 2.064, per: gpu-hour}}
workloads:
  - {{id: w, kind: training, gpu: h100-sxm, gpus: {gpus}, hours_per_day: 24, duration: {days}d,
     checkpoint_interval: {ckpt}m}}
"""
CAT = load_catalog()


def _spot_cost(rate: float, ckpt_min: int, gpus: int = 64, days: int = 30) -> float:
    s = scenario_from_text(SCENARIO.format(rate=rate, ckpt=ckpt_min, gpus=gpus, days=days), catalog=CAT)
    return option_cost(s.workloads[0], s.offer("spot"), s, CAT).total_mid


@settings(max_examples=40, deadline=None)
@given(rate=st.floats(0.0, 0.2), more=st.floats(0.001, 0.2), ckpt=st.integers(5, 600), gpus=st.integers(1, 256))
@example(rate=5e-324, more=0.125, ckpt=5, gpus=1)  # a denormal rate: 1/rate overflowed to a NaN cost
def test_spot_cost_rises_with_the_rate(rate: float, more: float, ckpt: int, gpus: int) -> None:
    assert _spot_cost(rate + more, ckpt, gpus) >= _spot_cost(rate, ckpt, gpus)


@settings(max_examples=40, deadline=None)
@given(rate=st.floats(0.001, 0.2), ckpt=st.integers(5, 600), longer=st.integers(1, 600), gpus=st.integers(1, 256))
def test_spot_cost_rises_with_the_checkpoint_interval(rate: float, ckpt: int, longer: int, gpus: int) -> None:
    assert _spot_cost(rate, ckpt + longer, gpus) >= _spot_cost(rate, ckpt, gpus)


def test_no_reclaims_cost_what_on_demand_at_the_spot_price_costs() -> None:
    s = scenario_from_text(SCENARIO.format(rate=0, ckpt=30, gpus=64, days=30), catalog=CAT)
    spot = option_cost(s.workloads[0], s.offer("spot"), s, CAT)
    as_od = dataclasses.replace(s.offer("spot"), capacity="on-demand", preemption=None)
    plain = option_cost(s.workloads[0], as_od, s, CAT)
    assert spot.total_mid == pytest.approx(plain.total_mid) and spot.preemption is not None
    assert spot.preemption.preemptions == 0.0

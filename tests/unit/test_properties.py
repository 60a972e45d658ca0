"""Invariants of the cost and advice models (hypothesis)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan import api
from gpuplan.engines.advise import break_even_hours
from gpuplan.engines.cost import option_cost
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text

CAT = load_catalog()


def scenario(bm_price: float, ct_price: float, term: int, gpus: int, days: int, util: float, req: str) -> str:
    return f"""
version: 1
currency: CNY
team: {{engineer_hour_cost: 120}}
offers:
  - {{id: bm, gpu: h100-sxm, mode: bare-metal, price: {{amount: {bm_price}, per: gpu-day}}, min_term: {term}d,
     network: {{gbps: 3200, rdma: infiniband}},  # the full fabric: the reference (an offer's own network counts)
     interruptions_per_gpu_day: 0}}  # repair waits past the last day would bill more lease (test_delays)
  - {{id: ct, gpu: h100-sxm, mode: container, price: {{amount: {ct_price}, per: gpu-hour}}}}
workloads:
  - {{id: w, kind: training, gpu: h100-sxm, gpus: {gpus}, hours_per_day: 8, duration: {days}d,
     utilization: {util}, requires: [{req}]}}
"""


params = st.tuples(
    st.floats(10, 2000), st.floats(0.5, 100), st.integers(0, 90), st.integers(1, 64), st.integers(1, 200),
    st.floats(0.05, 1.0), st.sampled_from(["", "compliance", "custom-driver", "elastic", "isolation"]),
)


@settings(max_examples=60, deadline=None)
@given(params, st.floats(0.5, 23.0), st.floats(0.1, 1.0))
def test_container_cost_rises_with_hours_bare_metal_does_not(p, h, dh) -> None:  # type: ignore[no-untyped-def]
    s = scenario_from_text(scenario(*p))
    w = s.workloads[0]
    ct, bm = s.offer("ct"), s.offer("bm")
    h2 = min(24.0, h + dh)
    more = option_cost(w, ct, s, CAT, hours_per_day=h2).total_mid
    assert more > option_cost(w, ct, s, CAT, hours_per_day=h).total_mid
    # bare metal is the reference platform (slowdown 1): its cost does not depend on hours per day
    assert option_cost(w, bm, s, CAT, hours_per_day=h2).total_mid == pytest.approx(
        option_cost(w, bm, s, CAT, hours_per_day=h).total_mid)


@settings(max_examples=60, deadline=None)
@given(params)
def test_both_cost_the_same_at_break_even(p) -> None:  # type: ignore[no-untyped-def]
    s = scenario_from_text(scenario(*p[:-1], ""))
    w = s.workloads[0]
    be = break_even_hours(w, s.offer("ct"), s.offer("bm"), s, CAT)
    if be is None:
        return
    assert 0 < be <= 24
    a = option_cost(w, s.offer("ct"), s, CAT, hours_per_day=be).decision
    b = option_cost(w, s.offer("bm"), s, CAT, hours_per_day=be).decision
    assert a == pytest.approx(b, rel=1e-6)


@settings(max_examples=60, deadline=None)
@given(params)
def test_hard_rules_always_hold(p) -> None:  # type: ignore[no-untyped-def]
    res = api.compare_text(scenario(*p))
    rec = res.advice[0].recommendation
    req = p[-1]
    assert rec is not None
    if req in ("compliance", "custom-driver"):
        assert rec.mode == "bare-metal"
    elif req == "elastic":
        assert rec.mode == "container"
    else:
        # otherwise the verdict is the cheapest option
        best = min(res.advice[0].options, key=lambda r: r.cost.decision)
        assert rec.offer == best.offer.id


@settings(max_examples=40, deadline=None)
@given(params, st.floats(1.01, 3.0))
def test_raising_a_price_never_lowers_the_cost(p, k) -> None:  # type: ignore[no-untyped-def]
    s = scenario_from_text(scenario(*p))
    w = s.workloads[0]
    for o in s.offers:
        assert option_cost(w, o, s, CAT, price_factor=k).total_mid >= option_cost(w, o, s, CAT).total_mid

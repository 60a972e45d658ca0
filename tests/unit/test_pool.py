"""Pool sizing: exact optimum (against brute force), the marginal rule, node steps."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gpuplan.engines.pool import marginal, size_pool, spill_curve


def linear(p: float, c: float, hours: int, ops_per_node: float = 0.0):  # type: ignore[no-untyped-def]
    """A hand-written pool cost (lease per GPU-hour, container per GPU-hour, ops per started 8-GPU node)."""
    return lambda rs, spill: rs * p * hours + spill * c + ops_per_node * np.ceil(rs / 8)


def brute(d: np.ndarray, p: float, c: float, step: int, lo: int, ops_per_node: float) -> tuple[int, float]:
    best = None
    for r in range(lo, max(lo, int(np.ceil(d.max()))) + step + 1, step):
        if r < lo:
            continue
        cost = r * p * len(d) + np.maximum(0, d - r).sum() * c + ops_per_node * np.ceil(r / 8)
        if best is None or cost < best[1] - 1e-9:
            best = (r, cost)
        if r >= d.max() and r >= lo:
            break
    assert best is not None
    return best


@settings(max_examples=150, deadline=None)
@given(
    arrays(np.float64, st.integers(1, 300), elements=st.floats(0, 40, allow_nan=False)),
    st.floats(0.1, 20), st.floats(0.1, 40), st.sampled_from([1, 8]), st.integers(0, 16), st.floats(0, 500),
)
def test_optimum_equals_brute_force(d, p, c, step, pinned, ops) -> None:  # type: ignore[no-untyped-def]
    lo = int(np.ceil(pinned / step) * step)
    s = size_pool(d, cost_of=linear(p, c, len(d), ops), step=step, min_reserved=pinned)
    r, cost = brute(d, p, c, step, lo, ops)
    assert s.cost == pytest.approx(cost, rel=1e-9, abs=1e-6)
    assert s.reserved % step == 0 and s.reserved >= pinned
    assert s.costs.min() == pytest.approx(s.cost)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.integers(1, 200), elements=st.floats(0, 30, allow_nan=False)),
       st.floats(0, 35))
def test_spill_curve_is_exact(d, r) -> None:  # type: ignore[no-untyped-def]
    assert spill_curve(d, np.array([r]))[0] == pytest.approx(np.maximum(0, d - r).sum(), abs=1e-7)


@settings(max_examples=100, deadline=None)
@given(arrays(np.int64, st.integers(24, 200), elements=st.integers(0, 20)), st.floats(0.5, 10), st.floats(1, 20))
def test_marginal_rule_holds_at_optimum(d, p, c) -> None:  # type: ignore[no-untyped-def]
    d = d.astype(np.float64)
    s = size_pool(d, cost_of=linear(p, c, len(d)))
    m = marginal(d, s.reserved, 1, p, c, 1.0)
    # the last card added paid off; one more would not (integer demand, per-GPU lease, no ops)
    if s.reserved > 0:
        assert m.share_above_below >= m.ratio - 1e-9
    assert m.share_above <= m.ratio + 1e-9


def test_constant_demand_leases_it_all_when_lease_is_cheaper() -> None:
    s = size_pool(np.full(720, 4.0), cost_of=linear(200 / 24, 10, 720))
    assert s.reserved == 4
    s = size_pool(np.full(720, 4.0), cost_of=linear(11, 10, 720))
    assert s.reserved == 0


def test_bad_demand() -> None:
    with pytest.raises(ValueError):
        size_pool(np.array([]), cost_of=linear(1, 1, 0))
    with pytest.raises(ValueError):
        size_pool(np.array([1.0, -1.0]), cost_of=linear(1, 1, 2))

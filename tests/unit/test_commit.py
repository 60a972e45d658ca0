"""`gpuplan commit`: hand-computed optima, brute force against the exact search, plan agreement, seeds."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from gpuplan import api
from gpuplan.contracts import validate
from gpuplan.engines.commit import Drifts, commit
from gpuplan.errors import GpuplanError
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.demand import from_schedules
from gpuplan.inputs.scenario import scenario_from_text

CAT = load_catalog()

# No slowdown, no ops, no setup: every figure below can be worked out by hand. (No interruptions on the lease:
# its slowdown s_b is 1, so it bills no overtime; tests/unit/test_commit_bare_metal_slowdown.py bills some.)
BASE = """
version: 1
currency: CNY
offers:
  - id: bm
    gpu: ascend-910b
    mode: bare-metal
    price: {{amount: 240, per: gpu-day}}
    ops: 0h/node-month
    setup: 0h
    interruptions_per_gpu_day: 0
{terms}
  - id: ct
    gpu: ascend-910b
    mode: container
    price: {{amount: {ct}, per: gpu-hour}}
    ops: 0h/node-month
    setup: 0h
    overhead: {{compute: 0, interconnect: 1, jitter: 0}}
workloads:
{workloads}
{market}
"""
STEADY = """  - {id: core, kind: training, gpu: ascend-910b, gpus: 4, hours_per_day: 24, duration: 30d,
     utilization: 0.9}
"""
PART_TIME = """  - {id: exp, kind: experiment, gpu: ascend-910b, gpus: 2, hours_per_day: 3, duration: 30d,
     utilization: 0.7}
"""
TERMS = """    terms:
      - {length: 1mo, price: {amount: 240, per: gpu-day}}
      - {length: 6mo, price: {amount: 200, per: gpu-day}}
      - {length: 12mo, price: {amount: 180, per: gpu-day}, early_exit: 0.5}
"""


def scen(*, terms: str = TERMS, ct: float = 12, workloads: str = STEADY, market: str = "market: {horizon: 12mo}",
         ) -> Any:
    return scenario_from_text(BASE.format(terms=terms, ct=ct, workloads=workloads, market=market), "t.yaml", CAT)


def ladder(res: Any) -> set[tuple[int, int, int]]:
    return {(t.term_months, t.cards, t.start_month) for t in res.tranches}


def test_flat_market_and_steady_demand_sign_the_longest_cheapest_term() -> None:
    res = commit(scen(), CAT, paths=200)
    assert ladder(res) == {(12, 4, 0)}
    # 4 cards x 180 a day x 360 days; nothing left for containers
    assert res.cost.expected == pytest.approx(4 * 180 * 360)
    # (the performance model's slowdown of a container with no overheads is 1 within 1e-4)
    assert res.all_container.expected == pytest.approx(4 * 24 * 12 * 360, rel=1e-4)


def test_a_steep_container_price_fall_picks_short_terms_or_none() -> None:
    m = "market: {horizon: 12mo, container_price_drift: [-0.95, -0.9]}"
    res = commit(scen(market=m), CAT, paths=500)
    assert all(t.term_months < 12 for t in res.tranches)
    flat = commit(scen(), CAT, paths=500)
    assert sum(t.cards * t.term_months for t in res.tranches) < sum(t.cards * t.term_months for t in flat.tranches)


def test_steady_demand_plus_a_part_time_workload_leases_exactly_the_steady_cards() -> None:
    res = commit(scen(workloads=STEADY + PART_TIME), CAT, paths=200)
    assert ladder(res) == {(12, 4, 0)}
    # the part-time work runs in containers: 2 cards x 3 h x 360 days at 12
    assert res.cost.expected == pytest.approx(4 * 180 * 360 + 2 * 3 * 360 * 12, rel=1e-4)


@pytest.mark.parametrize("market", [
    "market: {horizon: 12mo}",
    "market: {horizon: 12mo, container_price_drift: [-0.5, 0.0], demand_growth: [-0.02, 0.06]}",
    "market: {horizon: 12mo, container_price_drift: [-0.3, -0.1], bare_metal_price_drift: [-0.3, 0.1]}",
])
def test_the_ladder_never_costs_more_than_any_single_term_pool_on_the_same_paths(market: str) -> None:
    res = commit(scen(workloads=STEADY + PART_TIME, market=market), CAT, paths=2000, seed=3)
    assert res.single_term
    for months, c in res.single_term.items():
        assert res.cost.expected <= c.expected + 1e-6, months
    assert res.cost.expected <= res.all_container.expected + 1e-6
    assert np.all(res.regret >= -1e-6)


def test_the_same_seed_gives_the_same_document_and_another_seed_other_paths() -> None:
    m = "market: {horizon: 12mo, container_price_drift: [-0.35, -0.1], demand_growth: [0.0, 0.05]}"
    s = scen(workloads=STEADY + PART_TIME, market=m)
    a = api.commit(s, paths=3000, seed=11, catalog=CAT).to_json()
    b = api.commit(s, paths=3000, seed=11, catalog=CAT).to_json()
    c = api.commit(s, paths=3000, seed=12, catalog=CAT).to_json()
    assert a == b
    assert a["cost"] != c["cost"]
    validate("commit", a)
    assert a["schema"] == "gpuplan.commit/1" and a["paths"] == 3000 and a["seed"] == 11


def test_with_no_uncertainty_commit_leases_the_pool_plan_sizes() -> None:
    for path in ("examples/seed-hybrid.yaml",):
        doc = api.plan(path)
        res = commit(api._scenario(path, CAT), CAT, paths=50)
        p = doc.pools[0]
        # one-month terms (the offer's min_term), every month the same pool
        assert {t.cards for t in res.tranches} == {p.reserved}
        # both bill the lease's own slowdown as overtime (issue 24: here the re-run work after interruptions on
        # the lease, s_b = 1.000039, 0.92 CNY a month): commit's twelve months are plan's month twelve times
        assert p.overtime_per_month > 0.5
        assert res.cost.expected == pytest.approx(p.hybrid_per_month * 12, rel=1e-9)


@pytest.mark.parametrize("workloads", [STEADY + PART_TIME, PART_TIME,
                                       STEADY.replace("gpus: 4", "gpus: 3").replace("24,", "20,") + PART_TIME])
def test_commit_agrees_with_plan_on_other_demand(workloads: str) -> None:
    s = scen(terms="", workloads=workloads, market="market: {horizon: 3mo}")
    res = commit(s, CAT, paths=20)
    p = api.plan(s, catalog=CAT).pools[0]
    assert {t.cards for t in res.tranches} <= {p.reserved}
    assert len(res.tranches) == (3 if p.reserved else 0)


def _brute(s: Any, drifts: Drifts, paths: int, seed: int, h: int, top: int, s_b: float = 1.0) -> float:
    """The cheapest static ladder by enumeration, priced from the hourly curve directly; each GPU-hour the
    leased cards serve pays (s_b - 1) card-hours of overtime at the offer's list price that month."""
    from gpuplan.engines.commit import Paths

    p = Paths.draw(drifts, paths, seed)
    d = from_schedules(s.workloads).by_gpu["ascend-910b"][:720]
    d = d[d > 0]  # hours without demand spill nothing
    terms = {o.months: o.price_per_gpu_hour for o in s.offers[0].terms}
    from gpuplan.engines.pricing import pool_slowdown, pool_workloads

    sd = pool_slowdown(pool_workloads(s, "ascend-910b"), "ascend-910b", s.offers[1], CAT,
                       {w.id: float(from_schedules(s.workloads).by_workload[w.id].sum()) for w in s.workloads})
    ct = s.offers[1].price_per_gpu_hour.mid * sd
    listed = s.offers[0].price_per_gpu_hour.mid
    slots = [(T, st) for T in terms for st in range(h - T + 1)]
    best = np.inf
    for counts in itertools.product(range(top + 1), repeat=len(slots)):
        leased = np.zeros(h)
        lease = np.zeros(paths)
        for (T, st), n in zip(slots, counts, strict=True):
            leased[st:st + T] += n
            lease += n * terms[T] * 720 * T * (1 + p.rb) ** (st / 12)
        cont = np.zeros(paths)
        for m in range(h):
            k = (1 + p.g) ** m
            spill = np.maximum(0.0, k[:, None] * d[None, :] - leased[m]).sum(axis=1)
            cont += spill * ct * (1 + p.rc) ** (m / 12)
            served = np.minimum(k[:, None] * d[None, :], leased[m]).sum(axis=1)
            cont += served * (s_b - 1) * listed * (1 + p.rb) ** (m / 12)
        best = min(best, float((lease + cont).mean()))
    return best


@pytest.mark.parametrize(("market", "ct", "expect"), [
    # the optima these cases have: a 3-month base and a later (or shorter) top, which the brute force confirms
    ("{horizon: 3mo, container_price_drift: [-0.6, 0.3], bare_metal_price_drift: [-0.5, 0.0], "
     "demand_growth: [0.2, 0.4]}", 13, {(1, 1, 2), (3, 2, 0)}),
    ("{horizon: 3mo, demand_growth: [0.0, 0.6]}", 15, {(2, 1, 1), (3, 2, 0)}),
    ("{horizon: 3mo, demand_growth: [-0.3, -0.2]}", 15, {(1, 1, 0), (3, 1, 0)}),
    ("{horizon: 3mo, container_price_drift: [-0.9, -0.2], demand_growth: [0.1, 0.5]}", 13, {(3, 2, 0)}),
])
def test_the_search_is_exact_against_brute_force(market: str, ct: float, expect: set[tuple[int, int, int]]) -> None:
    terms = """    terms:
      - {length: 1mo, price: {amount: 290, per: gpu-day}}
      - {length: 2mo, price: {amount: 250, per: gpu-day}}
      - {length: 3mo, price: {amount: 235, per: gpu-day}}
"""
    wl = STEADY.replace("gpus: 4", "gpus: 2").replace("hours_per_day: 24", "hours_per_day: 22") + PART_TIME
    s = scen(terms=terms, workloads=wl, market=f"market: {market}", ct=ct)
    from gpuplan.engines.commit import default_drifts

    dr = default_drifts(s)
    res = commit(s, CAT, paths=60, seed=1, drifts=dr)
    assert ladder(res) == expect
    brute = _brute(s, dr, 60, 1, 3, 3)
    assert res.cost.expected == pytest.approx(brute, rel=1e-9)


def test_the_search_stays_exact_with_lease_overtime() -> None:
    # a lease that is interrupted 3 times a GPU-day re-runs work: s_b > 1, so its cards bill overtime on what
    # they serve; the program's optimum still equals the brute force's over every ladder
    from gpuplan.engines.commit import default_drifts
    from gpuplan.engines.pricing import pool_slowdown, pool_workloads

    terms = """    terms:
      - {length: 1mo, price: {amount: 290, per: gpu-day}}
      - {length: 2mo, price: {amount: 250, per: gpu-day}}
      - {length: 3mo, price: {amount: 235, per: gpu-day}}
"""
    wl = STEADY.replace("gpus: 4", "gpus: 2").replace("hours_per_day: 24", "hours_per_day: 22") + PART_TIME
    market = "market: {horizon: 3mo, bare_metal_price_drift: [-0.5, 0.3], demand_growth: [0.0, 0.4]}"
    s = scen(terms=terms, workloads=wl, market=market, ct=13)
    s = replace(s, offers=(replace(s.offers[0], interruptions_per_gpu_day=3.0), s.offers[1]))
    weights = {w.id: float(from_schedules(s.workloads).by_workload[w.id].sum()) for w in s.workloads}
    s_b = pool_slowdown(pool_workloads(s, "ascend-910b"), "ascend-910b", s.offers[0], CAT, weights)
    assert s_b > 1.005
    dr = default_drifts(s)
    res = commit(s, CAT, paths=60, seed=1, drifts=dr)
    assert res.gpus[0].terms[0].slowdown == pytest.approx(s_b)
    assert res.tranches
    assert res.cost.expected == pytest.approx(_brute(s, dr, 60, 1, 3, 3, s_b=s_b), rel=1e-9)


def test_the_threshold_in_the_reasons_is_where_the_term_stops_paying() -> None:
    only12 = """    terms:
      - {length: 12mo, price: {amount: 180, per: gpu-day}}
"""
    res = commit(scen(terms=only12), CAT, paths=10)
    th = res.gpus[0].thresholds[0]
    assert th.months == 12 and th.cards == 4 and th.drift is not None and th.drift < 0
    above = f"market: {{horizon: 12mo, container_price_drift: {th.drift + 0.02:.4f}}}"
    below = f"market: {{horizon: 12mo, container_price_drift: {th.drift - 0.02:.4f}}}"
    assert ladder(commit(scen(terms=only12, market=above), CAT, paths=10)) == {(12, 4, 0)}
    assert ladder(commit(scen(terms=only12, market=below), CAT, paths=10)) == set()
    doc = api.commit(scen(terms=only12), paths=10, catalog=CAT).to_json()
    assert any(f"fall more than {-th.drift:.0%} a year" in r for r in doc["reasons"])


def test_chinese_reasons() -> None:
    doc = api.commit(scen(), paths=10, catalog=CAT, lang="zh").to_json()
    assert any("租期" in r for r in doc["reasons"])


@pytest.mark.parametrize(("terms", "market", "field"), [
    (TERMS, "market: {horizon: 6mo}", "offers[0].terms[2].length"),
    (TERMS.replace("early_exit: 0.5", "early_exit: 1.5"), "", "offers[0].terms[2].early_exit"),
    (TERMS, "market: {container_price_drift: [-1.2, -0.1]}", "market.container_price_drift"),
    (TERMS, "market: {demand_growth: [0.1, 0.0]}", "market.demand_growth"),
    (TERMS.replace("1mo", "45d"), "", "offers[0].terms[0].length"),
])
def test_bad_terms_and_markets_name_the_field(terms: str, market: str, field: str) -> None:
    with pytest.raises(GpuplanError) as exc:
        commit(scen(terms=terms, market=market), CAT, paths=10)
    assert exc.value.field == field
    assert exc.value.exit_code == 2


def test_version_1_files_without_terms_or_market_still_read() -> None:
    s = api._scenario("examples/seed-910b.yaml", CAT)
    assert s.market is None and all(o.terms == () for o in s.offers)

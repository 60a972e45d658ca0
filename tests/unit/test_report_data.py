"""Chart series for the HTML reports: the curves come from the cost engine and agree with the verdict."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from web_inputs import SEED

from gpuplan import api
from gpuplan.engines.advise import hours_curves, hours_grid
from gpuplan.engines.cost import option_cost
from gpuplan.render.compare import compare_json
from gpuplan.render.report_data import (
    audit_classes,
    audit_fleet_money,
    audit_heat,
    audit_money,
    breakdown,
    compare_charts,
    plan_breakdown,
    plan_charts,
    simulate_charts,
)
from gpuplan.render.svg import nice_ticks, text_width


@pytest.fixture(scope="module")
def seed() -> api.CompareResult:
    return api.compare(SEED, hours_curves=True)


def test_hours_grid() -> None:
    g = hours_grid()
    assert g[0] == 0.5 and g[-1] == 24.0 and len(g) == 48
    assert all(b > a for a, b in zip(g, g[1:], strict=False))


def test_curves_are_the_engine_and_cross_at_break_even(seed: api.CompareResult) -> None:
    adv = seed.advice[0]
    curves = {c.offer: c for c in hours_curves(adv, seed.scenario, seed.catalog, [1.0, 6.0, 12.0, 23.0])}
    bm, ct = curves["bm-910b"], curves["ct-910b"]
    # each point is exactly the engine's decision cost at that many hours
    for h, y in ct.points:
        assert y == option_cost(adv.workload, seed.scenario.offer("ct-910b"), seed.scenario, seed.catalog,
                                hours_per_day=h).decision
    be = adv.break_even_hours
    assert be is not None and 6 < be < 23
    below = [(hb, yb - yc) for (hb, yb), (_, yc) in zip(bm.points, ct.points, strict=True) if hb < be]
    above = [(hb, yb - yc) for (hb, yb), (_, yc) in zip(bm.points, ct.points, strict=True) if hb > be]
    assert all(d > 0 for _, d in below), "below the break-even containers are cheaper"
    assert all(d < 0 for _, d in above), "above it bare metal is cheaper"


def test_breakdown_sums_to_total(seed: api.CompareResult) -> None:
    data = compare_json(seed.document("en"))
    for wj in data["workloads"]:
        bd = breakdown(wj)
        for i, total in enumerate(bd["total"]):
            parts = bd["rental_used"][i] + bd["idle"][i] + bd["ops"][i] + bd["setup"][i]
            assert parts == pytest.approx(total, abs=0.02)
    charts = compare_charts(seed, data)
    assert [c["id"] for c in charts] == ["experiments-6h", "training-24h"]
    assert charts[0]["break_even"] == data["workloads"][0]["break_even"]["hours_per_day"]
    assert charts[1]["wall"][0][2] == pytest.approx(data["workloads"][1]["options"][0]["time"]["wall_hours"] / 24)


def test_plan_charts_optimum_and_demand() -> None:
    d = {
        "currency": "CNY",
        "pools": [{"gpu": "g", "reserved_gpus": 2, "reserved_gpus_low": 1, "reserved_gpus_high": 3,
                   "demand": {"peak": 4, "mean": 2, "hourly": [0, 1, 4, 2]},
                   "cost_per_month": {"lease": 10.0, "ops": 1.0, "spill": 5.0, "elastic": 0.0, "hybrid": 16.0}}],
        "curve": [{"gpu": "g", "reserved_gpus": r, "cost_per_month": c, "cost_per_month_low": c - 1,
                   "cost_per_month_high": c + 1} for r, c in ((2, 16.0), (0, 30.0), (1, 20.0), (3, 18.0))],
    }
    (pc,) = plan_charts(d)
    assert [x for x, _ in pc["curve"]] == [0, 1, 2, 3]
    assert pc["optimum_cost"] == 16.0
    assert pc["band"][0][0] == (0.0, 29.0) and pc["band"][1][0] == (0.0, 31.0)
    assert pc["reserved_low_high"] == [1.0, 3.0]
    lower, upper = pc["spill"]
    assert [y for _, y in lower] == [2.0] * 4 and [y for _, y in upper] == [2.0, 2.0, 4.0, 2.0]
    bd = plan_breakdown(d)
    assert bd is not None and bd["lease"] == [10.0] and bd["total"] == [16.0]


def test_simulate_charts_accepts_one_object_or_a_list() -> None:
    run = {"reserved_gpus": 4, "wait_hours": {"mean": 0.5}, "cost": {"total": 100.0, "total_low": 90.0,
                                                                      "total_high": 120.0}}
    one = simulate_charts(run)
    assert one["cost"] == [(4.0, 100.0)] and one["trade"] == [(0.5, 100.0, 4)]
    many = simulate_charts([{**run, "reserved_gpus": 8, "cost": {"total": 80.0}}, run])
    assert [x for x, _ in many["cost"]] == [4.0, 8.0] and many["best"] == (8.0, 80.0)
    assert many["band"] is None  # one run lacks the ends
    unpriced = simulate_charts([{"reserved_gpus": 0, "wait_hours": {"mean": 1.0}, "cost": None}])
    assert unpriced["cost"] == [] and unpriced["wait"] == [(0.0, 1.0)]


def test_audit_heat_bins_the_timeline_and_keeps_gaps() -> None:
    d = {"gpus": [{"node": "n", "gpu": "0", "mean_util": 0.5, "class": "busy", "idle_cost": 3.0,
                   "timeline": {"start": "2024-03-04T00:00:00Z", "step_s": 60, "util": [1.0, 0.0, None, None]}},
                  {"node": "n", "gpu": "1", "mean_util": 0.1, "class": "idle", "idle_cost": 7.0,
                   "timeline": {"start": "2024-03-04T00:00:00Z", "step_s": 60, "util": [0.2, 0.4]}}],
         "nodes": [{"node": "n", "idle_cost": 10.0}], "fleet": {"cost": 20.0, "idle_cost": 10.0}}
    h = audit_heat(d, max_cols=2)
    assert h["timeline"] and h["step_s"] == 120
    assert h["cells"] == [[0.5, None], [pytest.approx(0.3), None]]
    assert audit_classes(d) == {"busy": 1, "idle": 1}
    assert audit_money(d) == ("gpu", [("n/1", 7.0), ("n/0", 3.0)])
    no_gpu_money = {**d, "gpus": [{k: v for k, v in g.items() if k != "idle_cost"} for g in d["gpus"]]}
    assert audit_money(no_gpu_money) == ("node", [("n", 10.0)])
    assert audit_fleet_money(d) == [("cost", 20.0), ("idle_cost", 10.0)]
    flat = audit_heat({"gpus": [{"node": "n", "gpu": "0", "mean_util": 0.4}]})
    assert not flat["timeline"] and flat["cells"] == [[0.4]]


@given(st.floats(-1e9, 1e9), st.floats(-1e9, 1e9))
def test_nice_ticks_cover_the_range(a: float, b: float) -> None:
    lo, hi = min(a, b), max(a, b)
    ticks = nice_ticks(lo, hi)
    assert ticks == sorted(ticks) and len(ticks) >= 2
    assert ticks[0] <= lo + 1e-6 * max(1.0, abs(lo)) and ticks[-1] >= hi - 1e-6 * max(1.0, abs(hi))
    assert len(ticks) <= 12 and all(math.isfinite(t) for t in ticks)


def test_text_width_counts_wide_characters() -> None:
    assert text_width("ab") < text_width("中文")

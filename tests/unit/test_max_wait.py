"""The waiting budget: `--max-wait` parsing and the recommended R (`sim.cost.recommend`)."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplan.errors import UsageError
from gpuplan.sim.cost import parse_max_wait, recommend


def run(r: int, p95: float, per_month: float | None, mean: float = 0.0, jobs: int = 10) -> dict[str, Any]:
    cost = None if per_month is None else {"per_month": per_month, "span_hours": 720.0, "currency": "CNY"}
    return {"reserved_gpus": r, "jobs": jobs, "cost": cost,
            "wait_hours": {"mean": mean, "p50": mean, "p95": p95, "max": p95 * 2}}


def test_parse_max_wait() -> None:
    assert parse_max_wait("p95=2h") == {"p95": 2.0}
    assert parse_max_wait(["mean=30m,max=1d", "p95=2h"]) == {"mean": 0.5, "max": 24.0, "p95": 2.0}
    assert parse_max_wait(None) == {} and parse_max_wait([]) == {}
    for bad in ("p99=2h", "p95", "p95=soon", "p95=inf", "=2h"):
        with pytest.raises(UsageError) as exc:
            parse_max_wait(bad)
        assert exc.value.field == "--max-wait"


def test_cheapest_r_meeting_the_budget() -> None:
    runs = [run(0, 0.0, 300.0), run(8, 900.0, 100.0), run(16, 3.0, 150.0), run(24, 1.5, 200.0), run(32, 0.0, 250.0)]
    got = recommend(runs, {"p95": 2.0})
    rec = got["recommended"]
    assert rec["reserved_gpus"] == 24 and rec["cost_per_month"] == 200.0 and rec["basis"] == "max_wait"
    assert "p95 <= 2h" in rec["reason"] and got["no_recommendation"] is None
    # the cheapest overall waits 900 h at p95: flagged
    assert got["cheapest"]["reserved_gpus"] == 8 and got["cheapest"]["absurd_wait"] is True
    # several bounds must all hold
    assert recommend(runs, {"p95": 2.0, "max": 2.0})["recommended"]["reserved_gpus"] == 32
    # no budget: the cheapest
    assert recommend(runs, {})["recommended"]["reserved_gpus"] == 8


def test_ties_go_to_the_smaller_r() -> None:
    assert recommend([run(16, 0.0, 100.0), run(8, 0.0, 100.0)], {"p95": 1.0})["recommended"]["reserved_gpus"] == 8


def test_researcher_hour_cost_prices_waiting() -> None:
    # R=8 is cheaper as a pool but its 10 jobs wait 50 h on average over a 720 h span (a 30-day month):
    # 500 job-hours x 2/h = 1,000 a month, so R=16 wins once waiting is priced
    runs = [run(8, 60.0, 100.0, mean=50.0), run(16, 0.0, 300.0)]
    assert recommend(runs, {})["recommended"]["reserved_gpus"] == 8
    got = recommend(runs, {}, researcher_hour_cost=2.0, days_per_month=30.0)
    assert got["recommended"]["reserved_gpus"] == 16
    assert runs[0]["cost"]["waiting_per_month"] == pytest.approx(1000.0)
    assert got["recommended"]["waiting_cost_per_month"] == 0.0


def test_none_meets_and_nothing_priced() -> None:
    runs = [run(8, 10.0, 100.0), run(16, 5.0, 200.0)]
    got = recommend(runs, {"p95": 2.0})
    assert got["recommended"] is None and got["no_recommendation"]["code"] == "none_meets"
    assert "R = 16" in got["no_recommendation"]["reason"]
    unpriced = recommend([run(8, 10.0, None), run(16, 1.0, None)], {"p95": 2.0})
    assert unpriced["recommended"] is None and unpriced["no_recommendation"]["code"] == "not_priced"
    assert unpriced["no_recommendation"]["smallest_meeting"] == 16

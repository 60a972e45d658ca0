"""commit leaves the spot tier's work to spot (issue 26): it leaves the lease's demand and is paid at the
spot price with its lost work, as plan prices it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan import api
from gpuplan.engines.commit import commit
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import load_scenario


def _text() -> str:
    from test_plan_spot import SCENARIO as TEXT

    return TEXT


def test_the_spot_tier_is_paid_at_the_spot_price_with_its_lost_work(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(_text())
    cat = load_catalog()
    res = commit(load_scenario(path, cat), cat, paths=50, seed=1)
    plan = api.plan_scenario(str(path))
    spot = plan["pools"][0]["spot"]
    # no market section: flat prices, so every path costs the same: 64 leased cards for 12 months of
    # 30 days at 110 USD a card-day, and 12 months of the sweeps' spot GPU-hours (lost work included);
    # the leased cards run the training s_b times as long (plan's lease overtime, issue 24): 64 x 720
    # GPU-hours x (s_b - 1) a month at 110 / 24 USD a card-hour
    lease = 64 * 110 * 30 * 12
    on_spot = 12 * spot["gpu_hours_per_month"] * 2.064
    s_b = plan["pools"][0]["slowdown_bare_metal"]
    assert s_b > 1.1
    overtime = 12 * 64 * 720 * (s_b - 1) * 110 / 24
    assert res.cost.expected == pytest.approx(lease + on_spot + overtime, rel=1e-4)
    # without the spot offer the sweeps cost more (leased cards or on-demand containers)
    plain = tmp_path / "p.yaml"
    plain.write_text(_text().split("  - id: spot\n")[0] + "workloads:" + _text().split("workloads:")[1])
    res0 = commit(load_scenario(plain, cat), cat, paths=50, seed=1)
    assert res0.cost.expected > res.cost.expected

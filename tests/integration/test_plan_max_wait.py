"""`plan --max-wait` (issue 14). With a trace its jobs are replayed through each pool size, waiting up to
the budget for leased cards before they burst (the size named is simulate's answer for the same replay);
with an hourly curve its GPU-hours queue as a first-in, first-out fluid (engines.waiting)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan import api
from gpuplan.cli import main
from gpuplan.contracts import validate

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed-910b.yaml"


def _trace(tmp_path: Path) -> Path:
    # a burst of 4-GPU jobs every hour for two days, over a steady 2 GPUs
    rows = ["submit_time,duration,gpus"]
    for h in range(48):
        rows.append(f"{h * 3600},3600,2")
        if h % 6 == 0:
            rows += [f"{h * 3600 + 60},5400,4"] * 2
    p = tmp_path / "trace.csv"
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return p


def test_plan_names_simulates_choice_for_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path)
    assert main(["plan", str(SEED), "--trace", str(trace), "--max-wait", "p95=1h", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate("plan", doc)
    (wt,) = doc["waiting"]
    assert wt["model"] == "replay"
    assert wt["max_wait_hours"] == {"p95": 1.0} and wt["burst_after_hours"] == 1.0 and wt["gpu"] == "ascend-910b"
    sim = api.simulate(trace, wt["reserved_gpus"], scenario=SEED, wait=1.0, max_wait="p95=1h").to_json()
    assert wt["recommended"] == sim["recommended"]
    rec = wt["recommended"]
    assert rec is not None and rec["wait_hours"]["p95"] <= 1.0 + 1e-9
    # it is the cheapest of the runs that meet the budget
    ok = [r for r in sim["runs"] if r["wait_hours"]["p95"] <= 1.0 + 1e-9]
    assert rec["reserved_gpus"] == min(ok, key=lambda r: (r["cost"]["per_month"], r["reserved_gpus"]))["reserved_gpus"]


def test_plan_table_says_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(SEED), "--trace", str(_trace(tmp_path)), "--max-wait", "p95=1h"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Waiting budget p95 ≤ 1 h" in out and "lease R =" in out


def test_fluid_queue_by_hand() -> None:
    import numpy as np

    from gpuplan.engines.waiting import fluid_queue

    d = np.array([2.0, 2.0, 0.0])
    run = fluid_queue(d, 1, float("inf"))  # 1 card, nothing bursts: 0, 1, 1 h served; 1 GPU-hour left at 2 h
    assert run.burst_gpu_hours == 0 and run.wait_hours["mean"] == 1.0 and run.wait_hours["max"] == 2.0
    run = fluid_queue(d, 1, 1.0)  # at most 1 h of waiting: the last GPU-hour bursts
    assert run.burst_gpu_hours == 1.0 and run.wait_hours["max"] == 1.0
    run = fluid_queue(d, 2, 0.0)  # enough cards: nothing waits
    assert run.burst_gpu_hours == 0 and run.wait_hours["max"] == 0.0


def test_demand_curve_with_no_waiting_is_the_plan_itself(capsys: pytest.CaptureFixture[str]) -> None:
    hybrid = ROOT / "examples" / "seed-hybrid.yaml"
    assert main(["plan", str(hybrid), "--max-wait", "max=0h", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate("plan", doc)
    (wt,) = doc["waiting"]
    pool = doc["pools"][0]
    # bursting at once is what plan does: the same size, the same monthly cost
    assert wt["model"] == "fluid" and wt["burst_after_hours"] == 0.0
    assert wt["recommended"]["reserved_gpus"] == pool["reserved_gpus"]
    assert wt["recommended"]["cost_per_month"] == pytest.approx(doc["cost_per_month"]["hybrid"], rel=1e-6)


def test_waiting_lets_a_smaller_or_equal_pool_win(capsys: pytest.CaptureFixture[str]) -> None:
    hybrid = ROOT / "examples" / "seed-hybrid.yaml"
    assert main(["plan", str(hybrid), "--max-wait", "p95=2h", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (wt,) = doc["waiting"]
    rec = wt["recommended"]
    assert rec["wait_hours"]["p95"] <= 2.0 and rec["reserved_gpus"] <= doc["pools"][0]["reserved_gpus"]
    assert rec["cost_per_month"] <= doc["cost_per_month"]["hybrid"] + 1e-6  # waiting can only save bursts


def test_plan_without_max_wait_has_no_waiting_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(SEED), "-o", "json"]) == 0
    assert "waiting" not in json.loads(capsys.readouterr().out)

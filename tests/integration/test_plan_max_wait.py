"""`plan --trace --max-wait` (issue 14): the trace replayed through each pool size, jobs waiting up to the
budget for leased cards before they burst; the pool size named is simulate's answer for the same replay."""

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
    wt = doc["waiting"]
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


def test_max_wait_needs_a_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(SEED), "--max-wait", "p95=2h"]) == 2
    assert "--max-wait needs --trace" in capsys.readouterr().err


def test_plan_without_max_wait_has_no_waiting_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(SEED), "-o", "json"]) == 0
    assert "waiting" not in json.loads(capsys.readouterr().out)

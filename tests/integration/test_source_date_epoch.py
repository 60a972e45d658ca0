"""SOURCE_DATE_EPOCH end to end: a good value stamps the outputs, a bad one is a one-line usage error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "examples/seed-hybrid.yaml"
PLAN = "tests/golden/export/seed-hybrid.plan.json"


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_plan_json_is_stamped(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert main(["plan", SCENARIO, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["generated_at"] == "1970-01-01T00:00:00Z"


def test_plan_with_bad_epoch_is_a_usage_error() -> None:
    """A real process: exit 2, one line naming the variable with a hint, no traceback.

    Needs render/plan.py to take its time from gpuplan.reproducible (it parsed the variable itself)."""
    exe = Path(sys.executable).parent / "gpuplan"
    run = subprocess.run(
        [str(exe), "plan", SCENARIO, "-o", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "SOURCE_DATE_EPOCH": "abc", "COLUMNS": "400"},
    )
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "SOURCE_DATE_EPOCH" in lines[0] and "'abc'" in lines[0] and "Hint:" in lines[0]
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr


def test_export_with_bad_epoch_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1.5")
    assert main(["export", "slurm", PLAN]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "SOURCE_DATE_EPOCH: expected whole seconds" in err and "Hint:" in err

"""`plan ... -o json` without typer (`cli.plan_fast`): the same text as the full command, or None
so that the full command runs (help, other outputs and options, bad input)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.cli import main
from gpuplan.cli.plan_fast import parse, run_plan

ROOT = Path(__file__).resolve().parents[2]
HYBRID = str(ROOT / "examples" / "seed-hybrid.yaml")


def _demand(tmp_path: Path) -> str:
    rows = [f"2026-11-{1 + h // 24:02d}T{h % 24:02d}:00:00Z,ascend-910b,{(h * 7) % 11 / 2:g}" for h in range(24 * 9)]
    p = tmp_path / "demand.csv"
    p.write_text("time,gpu,gpus\n" + "\n".join(rows) + "\n")
    return str(p)


@pytest.mark.parametrize("extra", [
    [], ["--lang", "zh"], ["--lang=zh", "--queueing", "strict-fifo"], ["DEMAND"], ["DEMAND", "--max-wait", "p95=2h"],
    ["--max-wait=p95=2h", "--max-wait", "max=1d"],
])
def test_the_same_json_as_the_full_command(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch:
                                            pytest.MonkeyPatch, extra: list[str]) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    if extra[:1] == ["DEMAND"]:
        extra = ["--demand", _demand(tmp_path), *extra[1:]]
    args = [HYBRID, "-o", "json", *extra]
    assert main(["plan", *args]) == 0
    full = capsys.readouterr().out
    assert run_plan(args) == 0
    assert capsys.readouterr().out == full


@pytest.mark.parametrize("args", [
    ["--help"], [HYBRID], [HYBRID, "-o", "table"], [HYBRID, "-o", "markdown"], [HYBRID, "-o", "json", "--explain"],
    [HYBRID, "-o", "json", "--html", "r.html"], ["-o", "json"], [HYBRID, HYBRID, "-o", "json"],
    [HYBRID, "-o", "json", "--lang", "fr"], [HYBRID, "-o", "json", "--queueing", "lifo"],
    [HYBRID, "-o", "json", "--demand", "a.csv", "--demand", "b.csv"], [HYBRID, "-o", "json", "--demand"],
    [HYBRID, "-o", "json", "--demand", "--lang"], [HYBRID, "-ojson"], [HYBRID, "-o", "json", "--bogus", "1"],
    [HYBRID, "-o", "json", "--demand="],
])
def test_anything_else_goes_to_the_full_command(args: list[str]) -> None:
    assert parse(args) is None
    assert run_plan(args) is None


def test_bad_input_goes_to_the_full_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("time,gpu,gpus\n2026-11-01T00:00:00Z,ascend-910b,lots\n")
    assert run_plan([HYBRID, "-o", "json", "--demand", str(bad)]) is None
    assert run_plan([str(tmp_path / "missing.yaml"), "-o", "json"]) is None
    assert capsys.readouterr().out == ""
    assert main(["plan", HYBRID, "-o", "json", "--demand", str(bad)]) == 2
    assert "bad.csv:2" in " ".join(capsys.readouterr().err.split())


def test_typer_is_not_imported() -> None:
    code = ("import sys; from gpuplan.cli.plan_fast import run_plan; "
            f"assert run_plan([{HYBRID!r}, '-o', 'json']) == 0; "
            "sys.stderr.write(' '.join(m for m in ('typer', 'click', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr == "" and out.stdout.startswith("{")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through Linux's /proc")
@pytest.mark.parametrize("fast", [False, True])
def test_plan_starts_no_blas_threads(fast: bool) -> None:
    """numpy's OpenBLAS starts a thread per core when it loads unless told otherwise; plan uses none."""
    run = "run_plan([h, '-o', 'json'])" if fast else "main(['plan', h, '-o', 'json'])"
    code = ("import contextlib, io, os; from gpuplan.cli import main; from gpuplan.cli.plan_fast import run_plan; "
            f"h = {HYBRID!r}\nwith contextlib.redirect_stdout(io.StringIO()): {run}\n"
            "print(len(os.listdir('/proc/self/task')), os.environ['OPENBLAS_NUM_THREADS'])")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["1", "1"]
    kept = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**env, "OPENBLAS_NUM_THREADS": "2"})
    assert kept.stdout.split()[1] == "2"  # the user's own setting stays

"""`gpuplan.api`: every command's data is what its CLI prints with `-o json`; a command loads only what it runs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from web_inputs import HYBRID, cli_json, write_nvsmi, write_trace  # noqa: E402

from gpuplan import api  # noqa: E402
from gpuplan.cli import main  # noqa: E402
from gpuplan.errors import GpuplanError, TelemetryError, TraceError, UsageError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=120)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_compare_loads_no_heavy_engine() -> None:
    mods = _modules_after("import gpuplan.api\ngpuplan.api.compare('examples/seed-910b.yaml')")
    assert "gpuplan.api" in mods and "gpuplan.engines.advise" in mods
    heavy = {m for m in mods if m.split(".")[0] in ("numba", "polars", "fastapi", "typer")}
    heavy |= {m for m in mods if m.startswith(("gpuplan.sim", "gpuplan.telemetry", "gpuplan.cli", "gpuplan.web"))}
    assert not heavy, sorted(heavy)


def test_importing_the_api_loads_no_engine() -> None:
    mods = _modules_after("import gpuplan.api")
    assert not {m for m in mods if m.split(".")[0] in ("numpy", "pydantic", "yaml", "numba", "polars")}


def test_simulate_is_the_cli_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "jobs.csv")
    for args, kw in (
        (["--reserved", "0:8:4", "--wait", "1h"], {"reserved": "0:8:4", "wait": "1h"}),
        (["--reserved", "4", "--queueing", "strict-fifo"], {"reserved": "4", "queueing": "strict-fifo"}),
        (["--reserved", "8,16", "--packing", "node", "--wait", "inf"],
         {"reserved": [8, 16], "packing": "node", "wait": float("inf")}),
        (["--reserved", "0,8", "--scenario", str(HYBRID)], {"reserved": "0,8", "scenario": HYBRID}),
    ):
        want = cli_json(capsys, "simulate", str(trace), *args)
        got = api.simulate(trace, **kw).to_json()  # type: ignore[arg-type]
        assert json.loads(json.dumps(got)) == want, args
    result = api.simulate(trace, "4", wait="30m")
    assert result.format == "generic" and result.records == 60 and result.wait_hours == 0.5
    assert result.meta()["queueing"] == "best-effort-fifo" and result.meta()["wait"] == "30m"


def test_simulate_reports_progress(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "jobs.csv")
    seen: list[tuple[int, int]] = []
    stopped: list[bool] = []

    def start(levels: Sequence[int], jobs: int) -> tuple[Callable[[int, int], None], Callable[[], None]]:
        assert list(levels) == [0, 4, 8] and jobs == 60
        return (lambda done, total: seen.append((done, total))), (lambda: stopped.append(True))

    api.simulate(trace, "0:8:4", progress=start)
    assert seen == [(1, 3), (2, 3), (3, 3)] and stopped == [True]


def test_simulate_errors(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "jobs.csv")
    with pytest.raises(UsageError) as exc:
        api.simulate(trace, "4", wait="soon")
    assert exc.value.field == "--wait"
    with pytest.raises(UsageError):
        api.simulate(trace, "a:b")
    bad = tmp_path / "bad.csv"
    bad.write_text("submit_time,duration,gpus\n0,10,1\n5,-3,1\n", encoding="utf-8")
    with pytest.raises(TraceError) as err:
        api.simulate(bad, "4")
    assert err.value.file == str(bad) and err.value.line == 3


def test_audit_is_the_cli_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = write_nvsmi(tmp_path / "node1.csv")
    want = cli_json(capsys, "audit", str(log), "--price", "8/gpu-hour", "--currency", "CNY")
    got = api.audit([log], price="8/gpu-hour", currency="CNY").to_json()
    assert json.loads(json.dumps(got)) == want

    out = tmp_path / "demand.csv"
    want = cli_json(capsys, "audit", str(log), "--demand-out", str(out), "--demand-mode", "busy")
    report = api.audit([log], demand_mode="busy")
    assert report.demand is not None and report.demand.csv == out.read_text(encoding="utf-8")
    assert json.loads(json.dumps(report.to_json(out))) == want
    assert want["demand"] == {"file": str(out), "mode": "busy", "rows": report.demand.rows}


def test_audit_errors() -> None:
    with pytest.raises(UsageError):
        api.audit([])
    with pytest.raises(UsageError) as exc:
        api.audit(["x.csv"], price="8/gpu-hour", offer="bm-910b")
    assert exc.value.field == "--price"
    with pytest.raises(TelemetryError):
        api.audit(["no-such-file.csv"])


def test_probe_is_the_cli_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text("processor\t: 0\nmodel name\t: Test CPU\n", encoding="utf-8")
    (tmp_path / ".dockerenv").write_text("", encoding="utf-8")
    for lang in ("en", "zh"):
        want = cli_json(capsys, "probe", "--root", str(tmp_path), "--lang", lang)
        assert json.loads(json.dumps(api.probe(root=tmp_path, lang=lang))) == want  # type: ignore[arg-type]


def test_export_is_the_cli_output(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    plan = "tests/golden/export/seed-hybrid.plan.json"
    for target in ("kueue", "slurm", "volcano", "skypilot"):
        capsys.readouterr()
        assert main(["export", target, plan, "--namespace", "a", "--namespace", "b", "--autoscale"]) == 0
        want = capsys.readouterr().out
        got = api.export(target, plan, namespaces=["a", "b"], autoscale=True)  # type: ignore[arg-type]
        assert got.stdout == want and got.target == target and got.files
    with pytest.raises(UsageError) as exc:
        api.export("kueue", plan, name="Not_A_Label")
    assert exc.value.field == "--name"


def test_plan_is_the_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    want = cli_json(capsys, "plan", str(HYBRID), "--queueing", "strict-fifo")
    got = json.loads(json.dumps(api.plan_scenario(HYBRID, queueing="strict-fifo")))
    for d in (got, want):
        d.pop("generated_at")
    assert got == want and got["queueing"] == "strict-fifo"


def test_starter_scenario_compares() -> None:
    result = api.compare_text(api.STARTER, name="starter.yaml")
    assert [a.workload.id for a in result.advice] == ["experiments"]
    with pytest.raises(GpuplanError):
        api.compare_text(api.STARTER.replace("gpus: 4", "gpus: -4"))

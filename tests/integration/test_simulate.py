"""`gpuplan simulate` end to end: json contract, table/markdown in en and zh, errors exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.cli import main

KEYS = {
    "reserved_gpus",
    "jobs",
    "skipped",
    "burst_jobs",
    "gpu_hours",
    "wait_hours",
    "reserved_utilization",
    "cost",
}


@pytest.fixture()
def trace(tmp_path: Path) -> Path:
    p = tmp_path / "jobs.csv"
    p.write_text("submit_time,duration,gpus\n0,3600,4\n0,1800,2\n600,7200,1\n900,60,0\n", encoding="utf-8")
    return p


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["simulate", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_json_one_object_per_r(capsys: pytest.CaptureFixture[str], trace: Path) -> None:
    rc, out, _ = run(capsys, str(trace), "--reserved", "4", "--wait", "30m", "--queueing", "strict-fifo", "-o", "json")
    assert rc == 0
    whole = json.loads(out)
    assert whole["schema"] == "gpuplan.simulate/1" and len(whole["runs"]) == 1
    assert whole["recommended"] is None and whole["no_recommendation"]["code"] == "not_priced"
    doc = whole["runs"][0]
    assert set(doc) == KEYS
    assert doc["jobs"] == 3 and doc["skipped"] == {"no_gpu": 1} and doc["cost"] is None
    # A (4 GPUs) holds the pool 0-1 h; B (2) bursts at its deadline 30 min; C (1, submitted at 10 min)
    # bursts at its deadline 40 min
    assert doc["burst_jobs"] == 2
    assert doc["gpu_hours"] == {"total": 7.0, "reserved": 4.0, "burst": 3.0}
    assert set(doc["wait_hours"]) == {"mean", "p50", "p95", "max"} and doc["wait_hours"]["max"] == 0.5

    rc, out, _ = run(
        capsys,
        str(trace),
        "--reserved",
        "0:8:4",
        "--wait",
        "inf",
        "-o",
        "json",
        "--queueing",
        "best-effort-fifo",
    )
    docs = json.loads(out)["runs"]
    assert rc == 0 and [d["reserved_gpus"] for d in docs] == [0, 4, 8]
    assert docs[0]["burst_jobs"] == 3 and docs[1]["burst_jobs"] == 0 and docs[2]["burst_jobs"] == 0


def test_default_queueing_is_kueues_best_effort_fifo(capsys: pytest.CaptureFixture[str], trace: Path) -> None:
    rc, out, _ = run(capsys, str(trace), "--reserved", "4", "-o", "markdown")
    assert rc == 0 and "best-effort-fifo" in out and "strict-fifo" not in out
    _, default, _ = run(capsys, str(trace), "--reserved", "0:8:2", "--wait", "1h", "-o", "json")
    _, explicit, _ = run(
        capsys, str(trace), "--reserved", "0:8:2", "--wait", "1h", "--queueing", "best-effort-fifo", "-o", "json"
    )
    assert json.loads(default) == json.loads(explicit)


def test_table_and_markdown_in_both_languages(capsys: pytest.CaptureFixture[str], trace: Path) -> None:
    rc, out, _ = run(capsys, str(trace), "--reserved", "0,4")
    assert rc == 0 and "Burst" in out and "Skipped: no GPU 1" in out
    rc, out, _ = run(
        capsys, str(trace), "--reserved", "8", "--packing", "node", "-o", "markdown", "--lang", "zh"
    )
    assert rc == 0 and "溢出作业" in out and "| 8 |" in out


def test_scenario_prices_the_replay(
    capsys: pytest.CaptureFixture[str], trace: Path, examples_dir: Path
) -> None:
    scen = examples_dir / "seed-hybrid.yaml"
    if not scen.is_file():
        scen = examples_dir / "seed-910b.yaml"
    if not scen.is_file():
        pytest.skip("no example scenario with a bare-metal and a container offer")
    rc, out, err = run(
        capsys, str(trace), "--scenario", str(scen), "--reserved", "0,4", "--wait", "0", "-o", "json"
    )
    assert rc == 0, err
    r0, r4 = json.loads(out)["runs"]
    c0, c4 = r0["cost"], r4["cost"]
    assert c0["lease"] == 0 and c0["burst"] > 0 and c4["lease"] > 0
    slowdown = r0["gpu_hours"]["burst"] / 7.0  # every job bursts at R = 0, stretched by the slowdown
    assert slowdown >= 1.0
    assert c0["total"] == pytest.approx(c0["burst"]) and c0["ops"] == 0
    # the lease runs the trace's work s_b times as long (issue 24): overtime on the reserved GPU-hours
    assert c4["bare_metal_slowdown"] > 1.0 and "overtime" not in c0
    assert c4["overtime"] == pytest.approx(r4["gpu_hours"]["reserved"] * c4["overtime_per_gpu_hour"])
    assert c4["total"] == pytest.approx(c4["lease"] + c4["ops"] + c4["burst"] + c4["overtime"])
    assert c4["total_low"] <= c4["total"] <= c4["total_high"]
    for fmt, lang, word in (("table", "en", "Priced with"), ("markdown", "zh", "CNY")):
        rc, out, err = run(capsys, str(trace), "--scenario", str(scen), "--reserved", "0,4", "-o", fmt, "--lang", lang)
        assert rc == 0 and word in out, err


@pytest.mark.parametrize(
    ("text", "args", "where"),
    [
        ("submit_time,duration,gpus\n0,10,1\n5,-3,1\n", [], "bad.csv:3"),
        ("submit_time,duration,gpus\n0,10,1\n5,ten,1\n", [], "bad.csv:3"),
        ("submit_time,gpus\n0,1\n", ["--trace-format", "generic"], "bad.csv:1"),
        ("", [], "bad.csv:1"),
    ],
)
def test_bad_traces_exit_2_with_file_and_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, args: list[str], where: str
) -> None:
    p = tmp_path / "bad.csv"
    p.write_text(text, encoding="utf-8")
    rc, _, err = run(capsys, str(p), "--reserved", "4", *args)
    assert rc == 2
    assert where in " ".join(err.split()) and "Traceback" not in err


def test_bad_flags_exit_2(capsys: pytest.CaptureFixture[str], trace: Path) -> None:
    assert run(capsys, str(trace), "--reserved", "a:b")[0] == 2
    assert run(capsys, str(trace), "--reserved", "4", "--wait", "soon")[0] == 2
    rc, _, err = run(capsys, str(trace), "--reserved", "12", "--packing", "node")
    assert rc == 2 and "multiple of 8" in " ".join(err.split())


def test_real_subprocess(trace: Path) -> None:
    exe = shutil.which("gpuplan", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the gpuplan entry point is not installed beside this python")
    proc = subprocess.run(
        [exe, "simulate", str(trace), "--reserved", "4", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["runs"][0]["reserved_gpus"] == 4
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal


def test_reports_mark_the_recommended_r(capsys: pytest.CaptureFixture[str], trace: Path, tmp_path: Path,
                                        examples_dir: Path) -> None:
    scen = examples_dir / "seed-910b.yaml"
    html = tmp_path / "sim.html"
    args = [str(trace), "--reserved", "0,4,8", "--wait", "inf", "--scenario", str(scen), "--max-wait", "max=0"]
    rc, out, err = run(capsys, *args, "-o", "json", "--html", str(html))
    assert rc == 0, err
    doc = json.loads(out)
    rec = doc["recommended"]
    meeting = [r for r in doc["runs"] if r["wait_hours"]["max"] <= 0]
    assert rec["reserved_gpus"] == min(meeting, key=lambda r: (r["cost"]["per_month"], r["reserved_gpus"]))[
        "reserved_gpus"]
    page = html.read_text(encoding="utf-8")
    assert 'class="recommended"' in page and f"Recommended: lease R = {rec['reserved_gpus']} GPUs" in page
    rc, md, _ = run(capsys, *args, "-o", "markdown", "--lang", "zh")
    assert rc == 0 and f"| **{rec['reserved_gpus']}** |" in md and f"推荐：租用 R = {rec['reserved_gpus']} 张卡" in md
    # no R meets an impossible budget: null with the reason, and the table says so
    rc, out, _ = run(capsys, str(trace), "--reserved", "4", "--wait", "inf", "--scenario", str(scen),
                     "--max-wait", "max=0", "-o", "json")
    doc = json.loads(out)
    assert doc["recommended"] is None and doc["no_recommendation"]["code"] == "none_meets"
    rc, out, _ = run(capsys, str(trace), "--reserved", "4", "--wait", "inf", "--scenario", str(scen),
                     "--max-wait", "max=0")
    assert "No R meets the waiting budget max <= 0m" in " ".join(out.split())


def test_version_and_help_text(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuplan import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"gpuplan {__version__}"
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["simulate", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "A:B:STEP" in out and "🅱" not in out and "--max-wait" in out  # ":B:" is not an emoji code

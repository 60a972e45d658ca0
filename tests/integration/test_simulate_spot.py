"""`gpuplan simulate --spot S --seed N` end to end (issue 26): the same seed gives the same bytes,
another seed other reclaims, the runs count preemptions and lost GPU-hours, the cost adds the spot
GPU-hours, `--spot 0` prints what simulate printed before, and bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gpuplan.cli import main
from gpuplan.contracts.simulate import SimulateOutput

SCENARIO = """\
version: 1
currency: USD
offers:
  - id: h100-bare-metal
    gpu: h100-sxm
    mode: bare-metal
    price: {amount: 110, per: gpu-day}
  - id: h100-ct
    gpu: h100-sxm
    mode: container
    price: {amount: 6.88, per: gpu-hour}
  - id: h100-spot
    gpu: h100-sxm
    mode: vm
    capacity: spot
    preemption: {rate: 0.05, per: node-hour, restart: 10m}
    price: {amount: 2.064, per: gpu-hour}
workloads:
  - id: sweeps
    kind: experiment
    gpu: h100-sxm
    gpus: 8
    hours_per_day: 10
    duration: 30d
    checkpoint_interval: 30m
    utilization: 0.7
    %s
"""


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(42)
    rows = sorted((int(rng.integers(0, 7 * 24 * 3600)), int(rng.integers(1800, 20 * 3600)),
                   int(rng.choice([1, 2, 4, 8, 16]))) for _ in range(300))
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,duration,gpus\n" + "".join(f"{s},{d},{g}\n" for s, d, g in rows), encoding="utf-8")
    scen = tmp_path / "spot.yaml"
    scen.write_text(SCENARIO % "", encoding="utf-8")
    return trace, scen


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["simulate", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_same_seed_same_bytes_other_seed_other_reclaims(capsys: pytest.CaptureFixture[str],
                                                       files: tuple[Path, Path]) -> None:
    trace, scen = files
    base = [str(trace), "-s", str(scen), "-r", "0:32:16", "--spot", "32", "-o", "json"]
    rc, a, err = run(capsys, *base, "--seed", "7")
    assert rc == 0, err
    _, b, _ = run(capsys, *base, "--seed", "7")
    _, c, _ = run(capsys, *base, "--seed", "8")
    assert a == b
    assert a != c
    doc = json.loads(a)
    SimulateOutput.model_validate(doc)
    assert doc["spot"]["seed"] == 7 and doc["spot"]["offer"] == "h100-spot"
    assert doc["spot"]["checkpoint_hours"] == 0.5 and doc["spot"]["fallback"] == "on-demand"
    for run_ in doc["runs"]:
        assert run_["preemptions"] > 0 and run_["lost_gpu_hours"] > 0
        assert run_["spot_gpus"] == 32
        gh, cost = run_["gpu_hours"], run_["cost"]
        assert gh["total"] == pytest.approx(gh["reserved"] + gh["burst"] + gh["spot"])
        # (+ the lease overtime of the reserved GPU-hours: s_b > 1 from re-run work on the lease, issue 24)
        overtime = gh["reserved"] * cost["overtime_per_gpu_hour"]
        assert cost.get("overtime", 0.0) == pytest.approx(overtime)
        assert cost["total"] == pytest.approx(cost["lease"] + cost["ops"] + cost["burst"] + cost["spot"] + overtime)
        assert cost["spot"] >= gh["spot"] * 2.064 - 1e-9  # the spot price (+ ops)
        assert 0 < cost["lost"] < cost["spot"] + cost["burst"]
        assert run_["burst_jobs"] == run_["spot_jobs"] + run_["on_demand_jobs"]


def test_spot_is_cheaper_than_on_demand_for_the_same_trace(capsys: pytest.CaptureFixture[str],
                                                          files: tuple[Path, Path]) -> None:
    trace, scen = files
    _, plain, _ = run(capsys, str(trace), "-s", str(scen), "-r", "0", "-o", "json")
    _, spot, _ = run(capsys, str(trace), "-s", str(scen), "-r", "0", "--spot", "64", "-o", "json")
    p, s = json.loads(plain)["runs"][0], json.loads(spot)["runs"][0]
    # at 30% of the price and 0.05 reclaims per node-hour with 30-minute checkpoints, spot saves money
    assert s["cost"]["total"] < p["cost"]["total"]
    # the work is the same: spot + on demand GPU-hours cover the trace's, plus what reclaims lost
    assert s["gpu_hours"]["spot"] + s["gpu_hours"]["burst"] > 0
    assert s["jobs"] == p["jobs"] and s["wait_hours"] == p["wait_hours"]


def test_requeue_and_no_checkpoints_lose_more(capsys: pytest.CaptureFixture[str], files: tuple[Path, Path]) -> None:
    trace, scen = files
    base = [str(trace), "-s", str(scen), "-r", "0", "--spot", "64", "--seed", "3", "-o", "json"]
    _, a, _ = run(capsys, *base)
    _, b, _ = run(capsys, *base, "--checkpoint", "none")
    _, c, _ = run(capsys, *base, "--checkpoint", "none", "--spot-fallback", "requeue")
    ra, rb, rc_ = (json.loads(x)["runs"][0] for x in (a, b, c))
    assert rb["lost_gpu_hours"] > ra["lost_gpu_hours"]  # the same draws, nothing kept
    assert rb["preemptions"] == ra["preemptions"]  # the same first runs, the same reclaims
    assert rc_["preemptions"] >= rb["preemptions"]  # requeued runs can be reclaimed again
    assert json.loads(c)["spot"]["max_spot_runs"] == 4


def test_spot_zero_prints_what_simulate_printed_before(capsys: pytest.CaptureFixture[str],
                                                      files: tuple[Path, Path]) -> None:
    trace, scen = files
    for fmt in ("json", "markdown"):
        _, before, _ = run(capsys, str(trace), "-s", str(scen), "-r", "0,16", "-o", fmt)
        _, zero, _ = run(capsys, str(trace), "-s", str(scen), "-r", "0,16", "--spot", "0", "--seed", "9", "-o", fmt)
        assert before == zero
        assert "preemptions" not in before and "spot" not in json.loads(before if fmt == "json" else "{}")


def test_table_and_markdown_show_the_spot_tier(capsys: pytest.CaptureFixture[str], files: tuple[Path, Path]) -> None:
    trace, scen = files
    for fmt, lang, words in (("markdown", "en", ("GPU-h spot", "Reclaims / lost GPU-h", "Spot tier: S = 32")),
                             ("markdown", "zh", ("竞价 卡时", "回收次数", "竞价层")),
                             ("table", "en", ("Spot tier", "h100-spot"))):
        rc, out, err = run(capsys, str(trace), "-s", str(scen), "-r", "16", "--spot", "32", "-o", fmt, "--lang", lang)
        assert rc == 0, err
        for w in words:
            assert w in out, (w, out)


@pytest.mark.parametrize(
    ("extra", "scenario_extra", "field"),
    [
        (["--checkpoint", "soon"], "", "--checkpoint"),
        (["--spot-fallback", "never"], "", "--spot-fallback"),
        ([], "requires: [no-preemption]", "--spot"),
        (["--seed", "-1"], "", "--seed"),
    ],
)
def test_bad_spot_input_exits_2(capsys: pytest.CaptureFixture[str], files: tuple[Path, Path], tmp_path: Path,
                                extra: list[str], scenario_extra: str, field: str) -> None:
    trace, scen = files
    if scenario_extra:
        scen = tmp_path / "strict.yaml"
        scen.write_text(SCENARIO % scenario_extra, encoding="utf-8")
    rc, _, err = run(capsys, str(trace), "-s", str(scen), "-r", "0", "--spot", "8", *extra)
    assert rc == 2 and field in err, err


def test_spot_needs_a_scenario_with_a_spot_offer(capsys: pytest.CaptureFixture[str], files: tuple[Path, Path],
                                                 tmp_path: Path) -> None:
    trace, scen = files
    rc, _, err = run(capsys, str(trace), "-r", "0", "--spot", "8")
    assert rc == 2 and "--scenario" in err
    plain = tmp_path / "plain.yaml"
    text = scen.read_text(encoding="utf-8")
    plain.write_text(text[: text.index("  - id: h100-spot")] + text[text.index("workloads:"):], encoding="utf-8")
    rc, _, err = run(capsys, str(trace), "-s", str(plain), "-r", "0", "--spot", "8")
    assert rc == 2 and "spot" in err and "offers" in err

"""The portfolio plan: the seed hybrid example, hard rules, demand inputs, JSON contract."""

import json
from pathlib import Path

import numpy as np
import pytest

from gpuplan import api
from gpuplan.cli import main
from gpuplan.contracts.plan_document import plan_document
from gpuplan.inputs.demand import daily_profile, from_schedules
from gpuplan.inputs.scenario import scenario_from_text
from gpuplan.render.plan import plan_json

ROOT = Path(__file__).resolve().parents[2]
HYBRID = ROOT / "examples" / "seed-hybrid.yaml"


def test_seed_hybrid_numbers() -> None:
    data = plan_json(plan_document(api.plan(HYBRID)))
    pool = data["pools"][0]
    assert pool["reserved_gpus"] == 4
    placements = {a["workload"]: a["placement"] for a in data["assignments"]}
    assert placements == {"core-training": "bare-metal", "experiments": "container"}
    cost = data["cost_per_month"]
    # the article's sums, plus the expected re-run work after interruptions (Llama 3's rate, 0.000474 per
    # GPU-day; 1 h checkpoints: k = 1 + rate x gpus x 1 h / 48 h) on both offers, as compare bills it:
    # containers x 1.00004 (0.06 CNY a month); on the lease s_b = the GPU-hour-weighted k of the pool's work,
    # 1 + 0.000474 / 48 x (4 x 2,880 + 2 x 150) / 3,030 = 1.0000385, so the 2,880 GPU-hours the 4 cards serve
    # run 0.111 card-hours longer: lease overtime 0.111 x 200 / 24 = 0.92 CNY a month
    k_bm = 1 + 0.000474 / 48 * (4 * 2880 + 2 * 150) / 3030
    overtime = (k_bm - 1) * 2880 * 200 / 24
    assert pool["slowdown_bare_metal"] == pytest.approx(k_bm, abs=1e-4)
    assert pool["cost_per_month"]["overtime"] == pytest.approx(overtime, abs=0.01)
    assert cost["hybrid"] == pytest.approx(24_000 + 1_500 * (1 + 0.000474 * 4 / 48) + overtime, abs=0.02)
    assert cost["hybrid"] < cost["all_bare_metal"] and cost["hybrid"] < cost["all_container"]
    # 6 cards at the peak, and the pool's 3,030 GPU-hours x (s_b - 1) of overtime
    assert cost["all_bare_metal"] == pytest.approx(36_000 + (k_bm - 1) * 3030 * 200 / 24, abs=0.02)
    assert cost["all_container"] == pytest.approx(4 * 720 * 10 + 1_500, rel=1e-4)


def test_seed_hybrid_states_the_real_sum(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(HYBRID)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "4 cards × 200.00 CNY/card-day × 30.00 paid days a month = 24,000" in out
    assert "= 1,500" in out and "25,501 CNY a month" in out  # 25,500.98: the lease overtime of its re-run work


def test_json_contract() -> None:
    data = plan_json(plan_document(api.plan(HYBRID)))
    assert data["schema"] == "gpuplan.plan/1"
    assert {"gpu", "offer_bare_metal", "offer_container", "reserved_gpus", "nodes", "demand",
            "reserved_utilization"} <= set(data["pools"][0])
    assert set(data["cost_per_month"]) == {"hybrid", "hybrid_low", "hybrid_high", "all_bare_metal", "all_container"}
    assert all({"workload", "placement", "reason"} <= set(a) for a in data["assignments"])
    curve = data["curve"]
    assert [c["reserved_gpus"] for c in curve] == list(range(0, 7))
    assert min(c["cost_per_month"] for c in curve) == pytest.approx(data["cost_per_month"]["hybrid"])


SCEN = """
version: 1
currency: CNY
team: {{engineer_hour_cost: 100}}
offers:
  - {{id: bm, gpu: h100-sxm, mode: bare-metal, price: {{amount: [{bm_lo}, {bm_hi}], per: node-month}},
     lease_unit: node, min_term: 30d}}
  - {{id: ct, gpu: h100-sxm, mode: container, price: {{amount: [{ct_lo}, {ct_hi}], per: gpu-hour}}}}
workloads:
  - {{id: core, kind: training, gpu: h100-sxm, gpus: 12, hours_per_day: 24, duration: 60d}}
  - {{id: regulated, kind: fine-tuning, gpu: h100-sxm, gpus: 8, hours_per_day: 4, duration: 60d,
     requires: [compliance]}}
  - {{id: serving, kind: inference, gpu: h100-sxm, gpus: 4, hours_per_day: 24, duration: 60d, requires: [elastic]}}
  - {{id: sweeps, kind: experiment, gpu: h100-sxm, gpus: 16, hours_per_day: 3, days_per_week: 5, duration: 60d}}
"""


def test_rules_nodes_and_uncertainty() -> None:
    s = scenario_from_text(SCEN.format(bm_lo=60000, bm_hi=80000, ct_lo=15, ct_hi=30))
    res = api.plan(s)
    pool = res.pools[0]
    assert pool.reserved % 8 == 0  # whole nodes
    assert pool.reserved >= 8  # the compliance workload's 8 cards are pinned
    place = {a.workload.id: a.placement for a in res.assignments}
    assert place["regulated"] == "bare-metal" and place["serving"] == "container"
    assert pool.demand_elastic.max() == 4  # elastic demand never counts against the pool
    data = plan_json(plan_document(res))
    c = data["cost_per_month"]
    assert c["hybrid_low"] <= c["hybrid"] <= c["hybrid_high"]
    assert data["pools"][0]["reserved_gpus_low"] % 8 == 0 and data["pools"][0]["reserved_gpus_high"] % 8 == 0


def test_window_placement() -> None:
    s = scenario_from_text("""
version: 1
currency: CNY
offers: [{id: ct, gpu: l40s, mode: container, price: {amount: 5, per: gpu-hour}}]
workloads:
  - {id: a, kind: experiment, gpu: l40s, gpus: 2, hours_per_day: 2.5, window: "10:00-18:00", duration: 7d,
     days_per_week: 5}
  - {id: b, kind: experiment, gpu: l40s, gpus: 1, hours_per_day: 3, window: "23:00-02:00", duration: 7d}
""")
    prof = daily_profile(s.workloads[0])
    assert prof[10] == 1 and prof[11] == 1 and prof[12] == 0.5 and prof.sum() == 2.5
    prof_b = daily_profile(s.workloads[1])
    assert prof_b[23] == 1 and prof_b[0] == 1 and prof_b[1] == 1 and prof_b.sum() == 3
    dem = from_schedules(s.workloads)
    a = dem.by_workload["a"]
    assert dem.hours == 30 * 24  # at least 30 days
    assert a.sum() == pytest.approx(2 * 2.5 * 5)  # five weekdays in the first week, then it ends
    assert np.all(a[7 * 24:] == 0)


def test_demand_csv_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "demand.csv"
    rows = ["time,gpu,gpus"] + [f"2026-11-01T{h:02d}:00:00Z,ascend-910b,{6 if 10 <= h < 12 else 4}"
                                 for h in range(24)]
    csv.write_text("\n".join(rows) + "\n")
    res = api.plan(HYBRID, demand=csv)
    assert res.pools[0].reserved == 4
    # a one-day sample is repeated to fill a week (whole copies: the same distribution of demand)
    assert (res.demand.hours, res.demand.sample_hours, res.demand.repeats) == (168, 24, 7)
    bad = tmp_path / "bad.csv"
    bad.write_text("time,gpu,gpus\n2026-11-01T00:00:00Z,ascend-910b,lots\n")
    assert main(["plan", str(HYBRID), "--demand", str(bad)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "bad.csv:2" in err and "Hint:" in err
    other = tmp_path / "other.csv"
    other.write_text("time,gpu,gpus\n2026-11-01T00:00:00Z,b200,3\n")
    assert main(["plan", str(HYBRID), "--demand", str(other)]) == 2
    assert "b200" in capsys.readouterr().err


def test_trace_demand_spreads_jobs_exactly(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("submit_time,duration,gpus\n0,5400,2\n1800,3600,4\n")
    res = api.plan(HYBRID, trace=trace)
    d = res.demand.by_gpu["ascend-910b"]
    assert d.sum() == pytest.approx(2 * 1.5 + 4 * 1.0)
    assert d[0] == pytest.approx(2 + 4 * 0.5) and d[1] == pytest.approx(1 + 2)


def test_cli_json_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(HYBRID), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["pools"][0]["reserved_gpus"] == 4
    assert main(["plan", str(HYBRID), "-o", "markdown", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "租用" in out and "边际规则" in out


def test_curve_band_and_hourly_demand() -> None:
    s = scenario_from_text(SCEN.format(bm_lo=60000, bm_hi=80000, ct_lo=15, ct_hi=30))
    data = plan_json(plan_document(api.plan(s)))
    pool = data["pools"][0]
    hourly = pool["demand"]["hourly"]
    assert len(hourly) == data["horizon_hours"] and max(hourly) == pytest.approx(pool["demand"]["peak"])
    for point in data["curve"]:
        assert point["cost_per_month_low"] <= point["cost_per_month"] <= point["cost_per_month_high"]
    lows = {c["reserved_gpus"]: c["cost_per_month_low"] for c in data["curve"]}
    assert min(lows.values()) == pytest.approx(data["cost_per_month"]["hybrid_low"])
    assert lows[pool["reserved_gpus_low"]] == pytest.approx(data["cost_per_month"]["hybrid_low"])


def test_html_reports_for_simulate_and_audit_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("submit_time,duration,gpus\n0,5400,2\n1800,3600,4\n")
    out = tmp_path / "sim.html"
    assert main(["simulate", str(trace), "--reserved", "0,4", "--html", str(out), "-o", "json"]) == 0
    capsys.readouterr()
    assert out.read_text().startswith("<!DOCTYPE html>") and "<svg" in out.read_text()
    log = tmp_path / "node1.csv"
    log.write_text("timestamp, index, utilization.gpu [%]\n" + "".join(
        f"2026/11/01 00:{m:02d}:00.000, 0, {90 if m % 2 else 10} %\n" for m in range(30)))
    out2 = tmp_path / "audit.html"
    assert main(["audit", str(log), "--html", str(out2), "--lang", "zh", "-o", "json"]) == 0
    assert "lang=\"zh" in out2.read_text()


def test_demand_csv_fast_and_careful_paths_agree(tmp_path: Path) -> None:
    """The vectorised reader and the row-by-row one give the same demand, on clean files and on
    files only the careful path reads (blank lines, quotes), zone offsets and epoch seconds."""
    from gpuplan.inputs import demand as dm

    rows = [("2026-11-02T00:00:00Z", "ascend-910b", "4"), ("2026-11-02T01:00:00Z", "ascend-910b", "2.5"),
            ("2026-11-02T01:00:00Z", " h100-sxm ", "1"), ("2026-11-02T03:00:00Z", "ascend-910b", "0")]
    variants = {
        "clean": "time,gpu,gpus\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows),
        "crlf_bom": "\ufefftime,gpu,gpus\r\n" + "".join(f"{a},{b},{c}\r\n" for a, b, c in rows),
        "blank": "time,gpu,gpus\n\n" + "".join(f"{a},{b},{c}\n\n" for a, b, c in rows),
        "quoted": "time,gpu,gpus\n" + "".join(f'"{a}","{b}",{c}\n' for a, b, c in rows),
        "offset": "time,gpu,gpus\n" + "".join(f"{a[:-1]}+00:00,{b},{c}\n" for a, b, c in rows),
        "epoch": "gpus,time,gpu\n" + "".join(f"{c},{1793577600 + 3600 * int(a[11:13])},{b}\n" for a, b, c in rows),
    }
    for name, text in variants.items():
        p = tmp_path / f"{name}.csv"
        p.write_text(text, encoding="utf-8")
        fast = dm._rows_fast(p.read_bytes())
        assert (fast is None) == (name in ("blank", "quoted")), name
        d = dm.from_csv(p)
        assert d.start.isoformat() == "2026-11-02T00:00:00+00:00" and d.hours == 4, name
        assert d.by_gpu["ascend-910b"].tolist() == [4.0, 2.5, 0.0, 0.0], name
        assert d.by_gpu["h100-sxm"].tolist() == [0.0, 1.0, 0.0, 0.0], name
        careful = dm._rows_careful(p)
        if fast is not None:
            assert fast[0].tolist() == careful[0].tolist() and fast[2] == careful[2], name


def test_trace_keeps_workloads_on_gpus_it_never_names(tmp_path: Path) -> None:
    """A trace without GPU types is demand for the first GPU; a workload on another GPU keeps its schedule."""
    scen = tmp_path / "two.yaml"
    scen.write_text(HYBRID.read_text().replace("workloads:", """workloads:
  - id: inference-h100
    kind: inference
    gpu: h100-sxm
    gpus: 2
    hours_per_day: 24
    duration: 30d""").replace("offers:", """offers:
  - {id: ct-h100, gpu: h100-sxm, mode: container, price: {amount: 20, per: gpu-hour}}"""))
    trace = tmp_path / "t.csv"
    trace.write_text("submit_time,duration,gpus\n0,5400,2\n1800,3600,4\n")
    res = api.plan(scen, trace=trace)
    assert res.demand.kept == ("inference-h100",)
    assert sorted(p.gpu for p in res.pools) == ["ascend-910b", "h100-sxm"]
    assert {a.workload.id for a in res.assignments} == {w.id for w in res.scenario.workloads}

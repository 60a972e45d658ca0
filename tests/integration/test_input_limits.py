"""Issue 27's unbounded inputs, each refused at the edge: exit 2 in bounded time, naming the field and the limit."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuplan.cli import main
from gpuplan.limits import MAX_OFFERS, MAX_WORKLOADS

HEAD = """version: 1
currency: USD
offers:
  - id: bm
    gpu: h100-sxm
    mode: bare-metal
    price: {amount: 2000, per: gpu-month}
    min_term: 30d
  - id: ct
    gpu: h100-sxm
    mode: container
    price: {amount: 3, per: gpu-hour}
"""
WORKLOAD = """  - id: {id}
    kind: training
    gpu: h100-sxm
    gpus: 8
    hours_per_day: 24
    duration: {duration}
"""


def scenario(tmp_path: Path, *, duration: str = "30d", wid: str = "train", extra: str = "") -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(HEAD + extra + "workloads:\n" + WORKLOAD.format(id=wid, duration=duration), encoding="utf-8")
    return p


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    rc = main(list(args))
    secs = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return rc, " ".join(err.split()), secs


@pytest.mark.parametrize("command", ["plan", "commit", "compare"])
def test_a_duration_of_three_million_days_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     command: str) -> None:
    # before: plan grew past 6.5 GB and ran past 60 s; commit 3.4 GB
    rc, err, secs = run(capsys, command, str(scenario(tmp_path, duration="3000000d")))
    assert rc == 2 and "s.yaml:" in err and "workloads[0].duration" in err, err
    assert "72,000,000 hours is over the limit of 87,600 hours" in err
    assert secs < 10


def test_a_29_digit_duration_exits_2_not_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, err, _ = run(capsys, "plan", str(scenario(tmp_path, duration="9" * 29 + "d")))
    assert rc == 2 and "workloads[0].duration" in err and "over the limit of 87,600 hours" in err, err


def test_ten_years_is_allowed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, err, _ = run(capsys, "compare", str(scenario(tmp_path, duration="3650d")))
    assert rc == 0, err


def test_a_min_term_past_ten_years_names_its_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    p = scenario(tmp_path)
    p.write_text(p.read_text().replace("min_term: 30d", "min_term: 5000w"))
    rc, err, _ = run(capsys, "compare", str(p))
    assert rc == 2 and "offers[0].min_term" in err and "840,000 hours" in err, err


def test_a_horizon_past_ten_years_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    p = scenario(tmp_path, extra="market: {horizon: 1000000mo}\n")
    rc, err, secs = run(capsys, "commit", str(p))
    assert rc == 2 and "market.horizon" in err and "over the limit of 120 months" in err, err
    assert secs < 10


def _many(tmp_path: Path, n: int) -> Path:
    p = tmp_path / "many.yaml"
    p.write_text(HEAD + "workloads:\n" + "".join(WORKLOAD.format(id=f"w{i}", duration="30d") for i in range(n)),
                 encoding="utf-8")
    return p


def test_more_workloads_than_the_limit_are_refused_before_parsing(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    # before: 200,000 workloads ran past 20 s in every command
    p = _many(tmp_path, 200_000)
    for command in ("compare", "plan"):
        rc, err, secs = run(capsys, command, str(p))
        assert rc == 2 and "many.yaml:" in err and "workloads:" in err, err
        assert f"over the limit of {MAX_WORKLOADS:,} workloads" in err
        assert secs < 5


def test_more_offers_than_the_limit_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    offer = "  - {id: o%d, gpu: h100-sxm, mode: container, price: {amount: 3, per: gpu-hour}}\n"
    p = tmp_path / "offers.yaml"
    p.write_text("version: 1\ncurrency: USD\noffers:\n" + "".join(offer % i for i in range(MAX_OFFERS + 1))
                 + "workloads:\n" + WORKLOAD.format(id="w", duration="30d"), encoding="utf-8")
    rc, err, _ = run(capsys, "compare", str(p))
    assert rc == 2 and "offers" in err and f"at most {MAX_OFFERS}" in err, err


@pytest.mark.parametrize(("wid", "words"), [
    ('"evil\\nPartitionName=evil Nodes=ALL Default=YES"', "U+000A"),
    ('"tab\\tid"', "U+0009"),
    ("x" * 129, "129 characters long"),
])
def test_bad_workload_ids_are_refused_when_read(capsys: pytest.CaptureFixture[str], tmp_path: Path, wid: str,
                                                 words: str) -> None:
    rc, err, _ = run(capsys, "compare", str(scenario(tmp_path, wid=wid)))
    assert rc == 2 and "workloads[0].id" in err and words in err, err


def test_bad_offer_and_provider_names_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    p = scenario(tmp_path)
    p.write_text(p.read_text().replace("  - id: bm\n", '  - id: bm\n    provider: "acme\\u2028corp"\n'))
    rc, err, _ = run(capsys, "compare", str(p))
    assert rc == 2 and "offers[0].provider" in err and "U+2028" in err, err


def _demand(tmp_path: Path, body: bytes) -> Path:
    p = tmp_path / "demand.csv"
    p.write_bytes(b"time,gpu,gpus\n" + body)
    return p


@pytest.mark.parametrize(("body", "words"), [
    # before: exit 1, MemoryError (7.28 TiB asked for)
    (b"2024-01-01T00:00:00Z,h100-sxm,4\n2024-01-01T01:00:00Z,h100-sxm,1e12\n",
     "demand.csv:3: gpus: 1,000,000,000,000 GPUs in one hour is over the limit of 100,000"),
    (b"2024-01-01T00:00:00Z,h100-sxm,4\n9999-01-01T01:00:00Z,h100-sxm,2\n",
     "demand.csv:3: time: the first to the last time"),
    (b"0,h100-sxm,4\n1700000000000,h100-sxm,2\n", "over the limit of 87,600 hours"),  # milliseconds
    (b"2024-01-01T00:00:00Z,h100-sxm,4\n2024-01-01T01:00:00Z,h\xff100,2\n", "demand.csv:3: not UTF-8"),
    (b'0,h100-sxm,4\n3600,"h100\nPartitionName=evil",2\n', "the GPU name 'h100\\nPartitionName=evil' contains"),
])
def test_bad_demand_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, body: bytes, words: str) -> None:
    rc, err, secs = run(capsys, "plan", str(scenario(tmp_path)), "--demand", str(_demand(tmp_path, body)))
    assert rc == 2 and words in err, err
    assert secs < 10


def test_deeply_nested_plan_json_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # before: exit 1, RecursionError
    p = tmp_path / "plan.json"
    p.write_bytes(b"[" * 200_000 + b"]" * 200_000)
    rc, err, secs = run(capsys, "export", "slurm", str(p))
    assert rc == 2 and "plan.json" in err and "200,000 levels is over the limit of 64" in err, err
    assert secs < 5


@pytest.mark.parametrize("value", ["inf", "1e999", "+inf"])
def test_trace_with_an_infinite_duration_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    value: str) -> None:
    t = tmp_path / "jobs.csv"
    t.write_text(f"submit_time,duration,gpus\n0,3600,4\n0,{value},2\n", encoding="utf-8")
    rc, err, _ = run(capsys, "plan", str(scenario(tmp_path)), "--trace", str(t))
    assert rc == 2 and "jobs.csv" in err and "job 2 has an infinite duration" in err, err


def test_trace_spanning_past_ten_years_is_refused_by_plan(capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    t = tmp_path / "jobs.csv"
    t.write_text("submit_time,duration,gpus\n0,3600,4\n0,1e300,2\n", encoding="utf-8")
    rc, err, _ = run(capsys, "plan", str(scenario(tmp_path)), "--trace", str(t))
    assert rc == 2 and "jobs.csv" in err and "over the limit of 87,600 hours" in err, err


def test_philly_json_nested_too_deep_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    t = tmp_path / "cluster_job_log"
    t.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    rc, err, _ = run(capsys, "simulate", str(t), "-r", "4", "--trace-format", "philly")
    assert rc == 2 and "cluster_job_log" in err and "levels" in err, err


@pytest.mark.parametrize(("old", "new", "field"), [
    ("amount: 2000,", "amount: [2000, 1e308],", "offers[0].price.amount[1]"),  # before: commit exit 1 (inf in linprog)
    ("amount: 3,", "amount: .inf,", "offers[1].price.amount"),
    ("min_term: 30d", "min_term: 30d\n    network_gbps: .inf", "offers[0].network_gbps"),
])
@pytest.mark.parametrize("command", ["compare", "commit"])
def test_numbers_past_the_quantity_limit_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, old: str,
                                                     new: str, field: str, command: str) -> None:
    p = scenario(tmp_path)
    p.write_text(p.read_text().replace(old, new, 1))
    rc, err, _ = run(capsys, command, str(p))
    assert rc == 2 and field in err and "less than or equal to 1000000000000" in err, err


def test_team_costs_and_fx_rates_are_bounded(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, err, _ = run(capsys, "commit", str(scenario(tmp_path, extra="team: {engineer_hour_cost: .inf}\n")))
    assert rc == 2 and "team.engineer_hour_cost" in err, err
    rc, err, _ = run(capsys, "compare", str(scenario(tmp_path, extra="fx: {CNY: 1e300}\n")))
    assert rc == 2 and "fx.CNY" in err and "1e12" in err, err


def test_a_drift_past_the_limit_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, err, _ = run(capsys, "commit", str(scenario(tmp_path, extra="market: {demand_growth: [0, 1e300]}\n")))
    assert rc == 2 and "market.demand_growth" in err and "1000%" in err, err


def test_a_big_scenario_without_aliases_is_not_called_an_alias_bomb(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # before: 10,000 workloads of 10 fields (210,055 values) were refused as 'the YAML aliases expand to'
    from gpuplan import limits
    from gpuplan.inputs import scenario as reader

    assert limits.MAX_YAML_VALUES >= MAX_WORKLOADS * 41  # 10,000 workloads of 20 fields fit
    monkeypatch.setattr(reader, "MAX_EXPANDED_VALUES", 40)
    rc, err, _ = run(capsys, "compare", str(_many(tmp_path, 3)))
    assert rc == 2 and "YAML values is over the limit of 40 YAML values" in err and "aliases" not in err, err

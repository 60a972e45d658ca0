"""Every command's table at 80, 100 and 160 columns: every number of its JSON appears whole (as the
table formats it), no table line is wider than the terminal, nothing is cut with an ellipsis, and no
column collapses to nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from gpuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (80, 100, 160)
BOX = "┏┃┡│└├┗"
BUNDLED = "traces/alibaba-gpu-v2023/openb_pod_list_default.csv"


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int | None,
        *args: str) -> str:
    if width is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(width))
    rc = main(list(args))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out


def as_json(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    return json.loads(run(capsys, monkeypatch, None, *args, "-o", "json"))


def check_layout(out: str, width: int, ids: tuple[str, ...] = ()) -> None:
    """Table lines fit `width`; an ellipsis only shortens one of `ids` in its middle; no empty column."""
    table_lines = [line for line in out.splitlines() if line[:1] in BOX]
    assert table_lines, "no table printed"
    too_wide = [line for line in table_lines if cell_len(line) > width]
    assert not too_wide, f"{len(too_wide)} table lines wider than {width}: {too_wide[0]!r}"
    for token in re.findall(r"[^\s│┃]*…[^\s│┃]*", out):
        head, _, tail = token.partition("…")
        assert any(i.startswith(head) and i.endswith(tail) and len(i) > len(token) for i in ids), token
    collapsed = [line for line in table_lines if re.search(r"[┳╋┻┃│┼]{2}", line)]
    assert not collapsed, f"a column collapsed: {collapsed[0]!r}"


def check_numbers(out: str, numbers: list[str]) -> None:
    assert numbers, "nothing to look for"
    missing = [n for n in numbers if not any(re.search(rf"(?<![\d.])(?<!\d,){re.escape(alt)}(?!\d|,\d)", out)
                                             for alt in n.split("|"))]
    assert not missing, f"numbers not shown whole: {missing[:10]}"


def money(x: float) -> str:
    """As the tables print money. The JSON rounds to cents, so a value at .5 may print either way:
    `check_numbers` accepts `a|b`."""
    lo, hi = f"{x - 0.005:,.0f}", f"{x + 0.005:,.0f}"
    return lo if lo == hi else f"{lo}|{hi}"


LONG_IDS = """\
version: 1
currency: USD
days_per_month: 30
offers:
  - id: aws-p5.48xlarge-h100-sxm-on-demand-us-east-1-reserved-capacity-block
    provider: aws
    gpu: h100-sxm
    mode: container
    price: {amount: [6.1, 7.4], per: gpu-hour}
    source: test
    as_of: 2026-11
  - id: coreweave-hgx-h100-bare-metal-three-year-commit-us-east-04-priority
    provider: coreweave
    gpu: h100-sxm
    mode: bare-metal
    gpus_per_node: 8
    price: {amount: [2.2, 2.9], per: gpu-hour}
    min_term: 30d
    source: test
    as_of: 2026-11
workloads:
  - id: llm-pretraining-run-with-a-very-long-identifier-for-the-team
    kind: training
    gpu: h100-sxm
    gpus: 16
    hours_per_day: 24
    duration: 90d
"""


@pytest.fixture(scope="module")
def long_ids(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("scen") / "long-ids.yaml"
    p.write_text(LONG_IDS, encoding="utf-8")
    return p


def compare_numbers(doc: dict[str, Any], width: int) -> list[str]:
    out = []
    for w in doc["workloads"]:
        for o in w["options"]:
            c = o["cost"]
            out += [money(c["total"]), money(c["low"]), money(c["high"]), money(c["per_month"]),
                    money(c["idle"]), f"{o['time']['wall_hours'] / 24:.1f}"]
            if width >= 130:
                out += [money(c["rental"]), money(c["ops"]), money(c["setup"])]
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scenario", ["examples/seed-hybrid.yaml", "examples/seed-910b.yaml",
                                      "examples/h100-multinode.yaml", "long-ids"])
def test_compare(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, long_ids: Path,
                 width: int, scenario: str) -> None:
    path = str(long_ids) if scenario == "long-ids" else str(ROOT / scenario)
    doc = as_json(capsys, monkeypatch, "compare", path)
    out = run(capsys, monkeypatch, width, "compare", path)
    check_layout(out, width, tuple(o["offer"] for w in doc["workloads"] for o in w["options"]))
    check_numbers(out, compare_numbers(doc, width))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scenario", ["examples/seed-hybrid.yaml", "examples/slow-network.yaml",
                                      "examples/h100-multinode.yaml"])
def test_plan(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int,
              scenario: str) -> None:
    path = str(ROOT / scenario)
    doc = as_json(capsys, monkeypatch, "plan", path)
    out = run(capsys, monkeypatch, width, "plan", path)
    check_layout(out, width)
    nums = []
    for p in doc["pools"]:
        nums += [str(p["reserved_gpus"]), f"{p['demand']['peak']:.1f}", f"{p['demand']['mean']:.2f}"]
        if p["cost_per_month"]["hybrid"] is not None:
            nums.append(money(p["cost_per_month"]["hybrid"]))
    c = doc["cost_per_month"]
    nums += [money(x) for x in (c["hybrid"], c["all_bare_metal"], c["all_container"]) if x is not None]
    check_numbers(out, nums)
    for p in doc["pools"]:  # the text breakdown names each pool's GPU on its total line
        assert f"{p['gpu']} hybrid total:" in out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_simulate(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, shared_dir: Path,
                  width: int, lang: str) -> None:
    trace = shared_dir / BUNDLED
    if not trace.is_file():
        pytest.skip(f"{BUNDLED} is not in the shared folder")
    args = ["simulate", str(trace), "-r", "0:64:8", "--wait", "inf", "-s", str(ROOT / "examples/seed-910b.yaml"),
            "--max-wait", "p95=2h"]
    doc = as_json(capsys, monkeypatch, *args)
    out = run(capsys, monkeypatch, width, *args, "--lang", lang)
    check_layout(out, width)
    nums = []
    for r in doc["runs"]:
        nums += [str(r["reserved_gpus"]), f"{r['burst_jobs']:,}", money(r["gpu_hours"]["reserved"]),
                 money(r["gpu_hours"]["burst"]), f"{r['wait_hours']['p95']:,.2f}", money(r["cost"]["per_month"])]
        if width >= 140:
            nums += [f"{r['wait_hours']['mean']:,.2f}", money(r["cost"]["total"])]
    check_numbers(out, nums)


@pytest.mark.parametrize("width", WIDTHS)
def test_audit(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    log = ROOT / "tests/fixtures/telemetry/omniopt-a100-bus-id.csv"
    if not log.is_file():
        pytest.skip("the telemetry fixture is missing")
    args = ["audit", str(log), "--price", "8/gpu-hour", "--currency", "CNY"]
    doc = as_json(capsys, monkeypatch, *args)
    out = run(capsys, monkeypatch, width, *args)
    check_layout(out, width)
    nums = []
    for g in doc["gpus"]:
        nums += [str(g["samples"]), f"{g['observed_hours']:.2f}", f"{100 * g['mean_util']:.1f}%"]
    for n in doc["nodes"]:
        nums += [str(n["gpus"]), f"{n['observed_hours']:.2f}"]
    check_numbers(out, nums)
    for g in doc["gpus"]:  # ids are folded at worst, never lost
        assert g["gpu"] in out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("what", ["gpus", "offers"])
def test_catalog(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int,
                 what: str) -> None:
    rows = as_json(capsys, monkeypatch, "catalog", what)
    out = run(capsys, monkeypatch, width, "catalog", what)
    check_layout(out, width)
    if what == "gpus":
        nums = [str(r[k]) for r in rows for k in ("memory_gb", "hbm_tbs", "bf16_tflops", "gpu_gpu_gbs")
                if r.get(k) is not None]
    else:  # the price as the table shows it: "[180, 260] CNY/gpu-day"
        nums = [n for r in rows for n in re.findall(r"\d+(?:\.\d+)?", str(r["price"]).split(" ")[0]
                                                    if not str(r["price"]).startswith("[") else
                                                    str(r["price"]).split("]")[0])]
    check_numbers(out, nums)
    # a source is never cut inside the table: each is printed whole in the legend below it
    flat = " ".join(out.split())
    for r in rows:
        assert " ".join(str(r["source"]).split()) in flat


def probe_doc() -> dict[str, Any]:
    """A probe document with two GPUs and RDMA, in the shape `gpuplan probe -o json` prints."""
    gpu = {"index": 0, "model": "NVIDIA H100 80GB HBM3", "catalog_id": "h100-sxm", "memory_gb": 79.6,
           "nvlink": {"active": 18, "links": 18}, "pcie": {"gen": 5, "width": 16},
           "mig": {"enabled": False, "instances": []}, "processes": [{"pid": 1, "memory_gb": 1.25}]}
    return {"host": {"deployment": "container-on-vm",
                     "container": {"detected": True, "runtime": "docker", "evidence": ["/.dockerenv exists"]},
                     "virtualization": {"detected": True, "hypervisor": "kvm", "evidence": []},
                     "cpu": {"model": "AMD EPYC 9654 96-Core Processor", "logical_cpus": 192},
                     "memory_gb": 1511.87,
                     "cgroup_limits": {"version": 2, "cpu_cores": 96.0, "memory_gb": 1024.5, "evidence": []},
                     "gpudirect_rdma": {"peermem_loaded": True, "evidence": []}},
            "gpus": [gpu, {**gpu, "index": 1, "memory_gb": 79.61}],
            "network": [{"name": "ibp12s0-very-long-interface-name", "speed_gbps": 400.0,
                         "rdma": {"device": "mlx5_0", "link_layer": "InfiniBand", "state": "ACTIVE"}}],
            "bench": None,
            "checks": [{"id": "rdma", "status": "pass",
                        "detail": "mlx5_0 active; GPUDirect peer memory loaded: yes; 400 Gb/s InfiniBand"}]}


@pytest.mark.parametrize("width", WIDTHS)
def test_probe(width: int) -> None:
    from rich.console import Console

    from gpuplan.render.probe import render_table

    doc = probe_doc()
    console = Console(width=width, record=True, highlight=False, soft_wrap=False)
    for item in render_table(doc, "en", width=width):
        console.print(item)
    out = console.export_text()
    check_layout(out, width)
    check_numbers(out, ["79.6", "79.61", "1511.87", "18/18", "gen5", "x16", "400", "192", "96", "1024.5"])
    assert "GiB" in out and " GB" not in out  # memory is GiB

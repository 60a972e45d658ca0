"""The web API's answers for the page's whole path: the replay's GPU, the audit's demand curve as plan demand,
the plan's exports, and the server's limits (422 before any engine runs). FastAPI's TestClient; real workers."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from web_inputs import SEED, write_nvsmi, write_trace  # noqa: E402

from gpuplan import api  # noqa: E402
from gpuplan.errors import GpuplanError  # noqa: E402

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from gpuplan.web import create_app, limits  # noqa: E402

SEED_TEXT = SEED.read_text(encoding="utf-8")
# two GPUs, each with a bare-metal and a container offer: a priced replay must be told which
TWO_GPUS = api.STARTER.replace("workloads:\n", """\
  - id: bm-a100
    gpu: a100-80g
    mode: bare-metal
    price: {amount: 14, per: gpu-hour}
    min_term: 30d
  - id: ct-a100
    gpu: a100-80g
    mode: container
    price: {amount: 25, per: gpu-hour}
workloads:
""", 1)


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = create_app()
    yield TestClient(base_url="http://127.0.0.1", app=app)
    app.state.shutdown()


def test_the_form_offers_the_scenarios_gpus(client: TestClient) -> None:
    r = client.post("/api/scenario/fields", json={"scenario": TWO_GPUS})
    assert r.status_code == 200 and r.json()["gpus"] == ["a100-80g", "ascend-910b"]
    assert client.post("/api/scenario/fields", json={"scenario": SEED_TEXT}).json()["gpus"] == ["ascend-910b"]
    # the page's replay form has the field, filled from that list
    page = client.get("/").text
    assert '<select name="gpu">' in page and '<select name="gpu_type">' in page


def test_a_priced_replay_of_a_two_gpu_scenario_takes_the_gpu(client: TestClient, tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "t.csv")
    scen = tmp_path / "two.yaml"
    scen.write_text(TWO_GPUS, encoding="utf-8")
    files = {"trace": ("t.csv", trace.read_bytes(), "text/csv")}
    r = client.post("/api/simulate", files=files, data={"reserved": "0:8:4", "scenario": TWO_GPUS})
    assert r.status_code == 422 and r.json()["field"] == "gpu" and "a100-80g" in r.json()["hint"]
    for gpu in ("a100-80g", "ascend-910b"):
        r = client.post("/api/simulate", files=files, data={"reserved": "0:8:4", "scenario": TWO_GPUS, "gpu": gpu})
        assert r.status_code == 200, r.text
        want = api.simulate(trace, "0:8:4", scenario=scen, gpu=gpu).to_json()
        assert r.json() == _relabel(want, str(trace), "t.csv")
    a100, ascend = (client.post("/api/simulate", files=files,
                                data={"reserved": "8", "scenario": TWO_GPUS, "gpu": g}).json()
                    for g in ("a100-80g", "ascend-910b"))
    assert a100 != ascend  # the GPU is not ignored: the prices differ


def _relabel(data: object, path: str, label: str) -> object:
    if isinstance(data, str):
        return data.replace(path, label)
    if isinstance(data, dict):
        return {k: _relabel(v, path, label) for k, v in data.items()}
    if isinstance(data, list):
        return [_relabel(v, path, label) for v in data]
    return data


def test_audit_demand_plans_and_exports(client: TestClient, tmp_path: Path) -> None:
    log = write_nvsmi(tmp_path / "node1.csv")
    r = client.post("/api/audit", files={"files": ("node1.csv", log.read_bytes(), "text/csv")},
                    data={"price": "8/gpu-hour", "demand_mode": "util", "gpu_type": "ascend-910b"})
    assert r.status_code == 200, r.text
    data = r.json()
    report = api.audit([log], price="8/gpu-hour", demand_mode="util", gpu_type="ascend-910b")
    assert report.demand is not None
    assert data.pop("demand_csv") == report.demand.csv
    assert data == _relabel(report.to_json("demand.csv"), str(log), "node1.csv")
    assert data["demand"] == {"file": "demand.csv", "mode": "util", "rows": report.demand.rows}

    # the demand as the plan's: the same plan as `plan SCENARIO --demand demand.csv`
    demand = tmp_path / "demand.csv"
    demand.write_text(report.demand.csv, encoding="utf-8")
    r = client.post("/api/plan", json={"scenario": SEED_TEXT, "demand_csv": report.demand.csv})
    assert r.status_code == 200, r.text
    plan = r.json()
    want = api.plan_scenario(SEED, demand=demand)
    for d in (plan, want):
        d.pop("generated_at", None)
        d.pop("scenario", None)
    assert plan == _relabel(want, str(demand), "demand.csv")
    assert plan != {k: v for k, v in api.plan_scenario(SEED).items() if k not in ("generated_at", "scenario")}

    plan_file = tmp_path / "plan.json"
    plan = r.json()
    import json

    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    for target in ("kueue", "slurm", "volcano", "skypilot"):
        r = client.post("/api/export", json={"target": target, "plan": plan})
        assert r.status_code == 200, r.text
        out = r.json()
        want_export = api.export(target, plan_file)
        assert [f["name"] for f in out["files"]] == [f.name for f in want_export.files]
        assert out["stdout"] == want_export.stdout.replace(str(plan_file), "plan.json")
        assert "gpuplan-web-" not in r.text  # no server path leaks
        if target != "slurm":
            docs = [d for d in yaml.safe_load_all(out["stdout"]) if d is not None]
            assert docs and all(isinstance(d, dict) for d in docs)
        else:
            assert "PartitionName=gpuplan" in out["stdout"]
    r = client.post("/api/export", json={"target": "kueue", "plan": {"schema": "nope"}})
    assert r.status_code == 422 and r.json()["error"] == "export"
    assert client.post("/api/export", json={"target": "k8s", "plan": plan}).status_code == 400


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/compare", {"scenario": SEED_TEXT.replace("gpus: 4", "gpus: 99999999999999999999999999999", 1)},
         "workloads[0].gpus"),
        ("/api/compare", {"scenario": SEED_TEXT.replace("gpus: 4", "gpus: 1000000000", 1)}, "workloads[0].gpus"),
        ("/api/compare", {"scenario": SEED_TEXT.replace("gpus: 4", "gpus: 1e9", 1)}, "workloads[0].gpus"),
        ("/api/plan", {"scenario": SEED_TEXT.replace("gpus: 4", "gpus: 100001", 1)}, "workloads[0].gpus"),
        ("/api/plan", {"scenario": SEED_TEXT, "demand_csv": "time,gpu,gpus\n2024-03-04T00:00:00Z,ascend-910b,1e9\n"},
         "gpus"),
        ("/api/report", {"kind": "compare", "scenario": SEED_TEXT.replace("gpus: 4", "gpus: 2000000", 1)},
         "workloads[0].gpus"),
    ],
)
def test_scenarios_past_the_limits_are_422_at_once(client: TestClient, path: str, body: dict[str, object],
                                                   field: str) -> None:
    t = time.perf_counter()
    r = client.post(path, json=body)
    assert time.perf_counter() - t < 2.0
    assert r.status_code == 422 and r.json()["error"] in ("limit", "scenario") and r.json()["field"] == field, r.text


def test_too_many_workloads_is_422(client: TestClient) -> None:
    head, _, rest = SEED_TEXT.partition("workloads:\n")
    one = "  - {id: w%d, kind: experiment, gpu: ascend-910b, gpus: 1, hours_per_day: 1, duration: 1d}\n"
    text = head + "workloads:\n" + "".join(one % i for i in range(limits.MAX_WORKLOADS + 1))
    c = TestClient(base_url="http://127.0.0.1", app=create_app(max_body_mb=5))
    t = time.perf_counter()
    r = c.post("/api/compare", json={"scenario": text})
    assert r.status_code == 422 and r.json()["field"] == "workloads" and "10,000" in r.json()["message"]
    assert time.perf_counter() - t < 10.0


@pytest.mark.parametrize("reserved", ["0:100000000:1", "0:1001:1", "0:8:4,2000000", "0:500:1,501:1001:1"])
def test_sweeps_past_the_limits_are_422_at_once(client: TestClient, tmp_path: Path, reserved: str) -> None:
    trace = write_trace(tmp_path / "t.csv").read_bytes()
    t = time.perf_counter()
    r = client.post("/api/simulate", files={"trace": ("t.csv", trace)}, data={"reserved": reserved})
    assert time.perf_counter() - t < 1.0
    assert r.status_code == 422 and r.json()["field"] == "reserved", r.text


def test_limits_are_no_lower_than_the_documented_bounds(client: TestClient, tmp_path: Path) -> None:
    limits.check_reserved("0:999:1")  # 1,000 pool sizes
    limits.check_reserved("1000000")
    limits.check_scenario(SEED_TEXT.replace("gpus: 4", "gpus: 100000", 1))
    limits.check_demand_csv("time,gpu,gpus\n2024-03-04T00:00:00Z,ascend-910b,100000\n")
    with pytest.raises(GpuplanError):
        limits.check_reserved("0:1000:1")
    # documented where a user reads them
    doc = (Path(__file__).resolve().parents[2] / "docs" / "web.md").read_text(encoding="utf-8")
    for n in (limits.MAX_GPUS_PER_WORKLOAD, limits.MAX_WORKLOADS, limits.MAX_SWEEP_LEVELS, limits.MAX_DEMAND_GPUS):
        assert f"{n:,}" in doc


def test_the_workers_never_import_the_cli(tmp_path: Path) -> None:
    """The heavy calls (plan with a demand, audit with its curve, every export) run the api in the worker,
    never a command line: run each as the worker does, in a fresh interpreter, and look at its modules."""
    import subprocess

    log = write_nvsmi(tmp_path / "node1.csv")
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from gpuplan.web.worker import AuditCall, ExportCall, PlanCall, Upload, handle\n"
        f"log = Path({str(log)!r}).read_bytes()\n"
        f"seed = Path({str(SEED)!r}).read_text(encoding='utf-8')\n"
        "s, body = handle(AuditCall(files=(Upload('node1.csv', log),), demand_mode='util',"
        " gpu_type='ascend-910b'), 0)\n"
        "assert s == 200, body\n"
        "s, plan = handle(PlanCall(scenario=seed, demand_csv=json.loads(body)['demand_csv']), 0)\n"
        "assert s == 200, plan\n"
        "for t in ('kueue', 'slurm', 'volcano', 'skypilot'):\n"
        "    s, out = handle(ExportCall(target=t, plan=plan.decode()), 0)\n"
        "    assert s == 200, out\n"
        "bad = sorted(m for m in sys.modules if m.startswith('gpuplan.cli'))\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_replay_form_offers_every_option_of_the_command(client: TestClient, tmp_path: Path) -> None:
    from gpuplan.constants import PACKINGS, QUEUEINGS
    from gpuplan.sim.traces import FORMATS
    from gpuplan.web.page import TRACE_FORMATS

    assert ("auto", *FORMATS) == TRACE_FORMATS
    page = client.get("/").text
    for name in ("trace", "reserved", "wait", "max_wait", "gpu", "queueing", "packing", "gpus_per_node",
                 "trace_format"):
        assert f'name="{name}"' in page, name
    for value in (*QUEUEINGS, *PACKINGS, *TRACE_FORMATS):
        assert f'<option value="{value}"' in page, value
    # the waiting budget reaches the api: the recommended R is the api's
    trace = write_trace(tmp_path / "t.csv")
    seed = tmp_path / "seed.yaml"
    seed.write_text(SEED_TEXT, encoding="utf-8")
    data = {"reserved": "0:16:4", "wait": "1h", "max_wait": "p95=2h", "scenario": SEED_TEXT, "queueing": "strict-fifo",
            "packing": "node", "gpus_per_node": "4", "trace_format": "generic"}
    r = client.post("/api/simulate", files={"trace": ("t.csv", trace.read_bytes())}, data=data)
    assert r.status_code == 200, r.text
    want = api.simulate(trace, "0:16:4", wait="1h", max_wait="p95=2h", scenario=seed, queueing="strict-fifo",
                        packing="node", gpus_per_node=4, trace_format="generic").to_json()
    assert r.json() == _relabel(want, str(trace), "t.csv")
    assert r.json()["max_wait_hours"] == {"p95": 2.0}
    r = client.post("/api/simulate", files={"trace": ("t.csv", trace.read_bytes())},
                    data={"reserved": "4", "max_wait": "p97=soon"})
    assert r.status_code in (400, 422) and "max" in (r.json()["field"] or "")


def test_plan_takes_the_queueing(client: TestClient) -> None:
    for q in ("strict-fifo", "best-effort-fifo"):
        r = client.post("/api/plan", json={"scenario": SEED_TEXT, "queueing": q})
        assert r.status_code == 200, r.text
        want = api.plan_scenario(SEED, queueing=q)
        got = r.json()
        for d in (got, want):
            d.pop("generated_at", None)
            d.pop("scenario", None)
        assert got == want
    assert client.post("/api/plan", json={"scenario": SEED_TEXT, "queueing": "lifo"}).status_code == 400


def test_audit_takes_a_scenario_offer_and_gpus_per_node(client: TestClient, tmp_path: Path) -> None:
    log = write_nvsmi(tmp_path / "node1.csv")
    files = {"files": ("node1.csv", log.read_bytes(), "text/csv")}
    assert client.post("/api/scenario/fields", json={"scenario": SEED_TEXT}).json()["offers"] == [
        o["id"] for o in yaml.safe_load(SEED_TEXT)["offers"]]
    r = client.post("/api/audit", files=files, data={"offer": "ct-910b", "scenario": SEED_TEXT})
    assert r.status_code == 200, r.text
    want = api.audit([log], offer="ct-910b", scenario=SEED)
    assert r.json() == _relabel(want.to_json(), str(log), "node1.csv")
    assert r.json()["fleet"]["price_per_gpu_hour"] is not None
    r = client.post("/api/audit", files=files, data={"price": "2000/node-month", "gpus_per_node": "4"})
    assert r.status_code == 200, r.text
    want = api.audit([log], price="2000/node-month", gpus_per_node=4)
    assert r.json() == _relabel(want.to_json(), str(log), "node1.csv")
    r = client.post("/api/audit", files=files, data={"offer": "nope", "scenario": SEED_TEXT})
    assert r.status_code == 422 and r.json()["field"] == "--offer"
    r = client.post("/api/audit", files=files, data={"price": "2000/node-month", "gpus_per_node": "100001"})
    assert r.status_code == 422 and r.json()["field"] == "gpus_per_node"


@pytest.mark.parametrize(("gpus", "refused"), [
    ("100000", False), ("100001", True), ("0100001", False),  # 0100001 is octal in YAML 1.1: 32,769
    ("30:00:00", True), ("0x1000000", True), ("1.0e+9", True), ("1_000_000", True), ('"100001"', True),
    ("99999999999999999999999999999", True), ("1e9", False),  # 1e9 is a string in YAML 1.1: the engine's error
])
def test_the_limit_reads_gpus_as_yaml_does(gpus: str, refused: bool) -> None:
    text = SEED_TEXT.replace("gpus: 4", f"gpus: {gpus}", 1)
    if refused:
        with pytest.raises(GpuplanError) as exc:
            limits.check_scenario(text)
        assert exc.value.field == "workloads[0].gpus"
    else:
        limits.check_scenario(text)


def test_the_workload_count_sees_flow_lists_and_aliases_without_expanding_them() -> None:
    head = SEED_TEXT.partition("workloads:\n")[0]
    w = "{id: w%d, kind: experiment, gpu: ascend-910b, gpus: 1, hours_per_day: 1, duration: 1d}"
    flow = head + "workloads: [" + ", ".join(w % i for i in range(limits.MAX_WORKLOADS + 1)) + "]\n"
    with pytest.raises(GpuplanError, match="10,000"):
        limits.check_scenario(flow)
    # aliases count once each, and nothing is expanded: a short text cannot become a big one here
    aliased = head + "workloads:\n  - &w " + w % 0 + "\n" + "  - *w\n" * limits.MAX_WORKLOADS
    with pytest.raises(GpuplanError, match="10,000"):
        limits.check_scenario(aliased)
    ok = head + "workloads:\n  - &w " + w % 0 + "\n" + "  - *w\n" * (limits.MAX_WORKLOADS - 1)
    limits.check_scenario(ok)
    for text in ("version: 1\nworkloads: 5\n", "[1, 2]\n", "workloads: [\n", "a: *nope\n", ""):
        limits.check_scenario(text + "#" * 100_000)  # left to the engine, which names the line

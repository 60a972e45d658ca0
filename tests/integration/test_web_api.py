"""`gpuplan serve`'s JSON API through FastAPI's TestClient, plus one real server process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from live_server import gpuplan_serve  # noqa: E402
from web_inputs import HYBRID, SEED, cli_json, write_nvsmi, write_trace  # noqa: E402

from gpuplan import api  # noqa: E402
from gpuplan.errors import GpuplanError  # noqa: E402

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from gpuplan.web import create_app  # noqa: E402

SEED_TEXT = SEED.read_text(encoding="utf-8")
ERROR_KEYS = {"error", "message", "file", "line", "field", "hint"}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(base_url="http://127.0.0.1", app=create_app(max_body_mb=1.0))


def test_page_and_meta(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert 'id="yaml"' in r.text and "window.GPUPLAN" in r.text and "<script src" not in r.text
    assert "中文" in r.text and "比较" in client.get("/?lang=zh").text
    assert client.get("/?lang=xx").status_code == 200
    h = client.get("/api/health").json()
    assert h["ok"] and h["engines"]["compare"] is True
    cat = client.get("/api/catalog").json()
    assert {"files", "gpus", "offers", "defaults"} <= set(cat) and any(g["id"] == "ascend-910b" for g in cat["gpus"])
    assert not any(k.startswith("_") for o in cat["offers"] for k in o)
    assert "version: 1" in client.get("/api/example").json()["scenario"]
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    for p in ("/api/compare", "/api/plan", "/api/simulate", "/api/audit", "/api/report", "/api/catalog"):
        assert p in paths
    assert "requestBody" in paths["/api/compare"]["post"]


def test_compare_is_exactly_the_cli_json(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    for lang in ("en", "zh"):
        got = client.post("/api/compare", json={"scenario": SEED_TEXT, "lang": lang})
        assert got.status_code == 200
        assert got.json() == cli_json(capsys, "compare", str(SEED), "--lang", lang)


def test_scenario_errors_carry_the_cli_fields(client: TestClient) -> None:
    bad = SEED_TEXT.replace("gpus: 4\n    hours_per_day: 6", "gpus: 4\n    hours_per_day: 30", 1)
    r = client.post("/api/compare", json={"scenario": bad})
    assert r.status_code == 422
    body = r.json()
    with pytest.raises(GpuplanError) as exc:
        api.compare_text(bad, name="scenario.yaml")
    assert body == exc.value.to_dict()
    assert body["field"] == "workloads[0].hours_per_day" and body["line"] and body["hint"] is not None
    r = client.post("/api/compare", json={"scenario": "version: 1\n  bad: [indent"})
    assert r.status_code == 422 and r.json()["error"] == "scenario" and r.json()["line"]


@pytest.mark.parametrize(
    ("body", "ctype", "status"),
    [
        (b"not json", "application/json", 400),
        (b"[1, 2]", "application/json", 400),
        (b'{"scenario": 5}', "application/json", 400),
        (b'{"scenario": "x", "extra": 1}', "application/json", 400),
        (b'{"scenario": "x", "lang": "fr"}', "application/json", 400),
        (b"{}", "application/json", 400),
        (b'{"scenario": "x"}', "text/plain", 415),
        (b"\xff\xfe\x00", "application/json", 400),
        (b"[" * 100000, "application/json", 400),
        (b'{"scenario": "' + b"a: " * 1000 + b'"}', "application/json", 422),
        (json.dumps({"scenario": "&a [" + "*a, " * 10 + "]"}).encode(), "application/json", 422),
    ],
)
def test_malformed_bodies_are_4xx_json(client: TestClient, body: bytes, ctype: str, status: int) -> None:
    r = client.post("/api/compare", content=body, headers={"content-type": ctype})
    assert r.status_code == status, r.text
    assert set(r.json()) >= ERROR_KEYS


def test_oversized_bodies_are_413(client: TestClient) -> None:
    big = {"scenario": "#" * (2 * 1024 * 1024)}
    r = client.post("/api/compare", json=big)
    assert r.status_code == 413 and r.json()["error"] == "too-large"

    def chunks():  # no Content-Length: the limit is enforced while streaming
        for _ in range(40):
            yield b"x" * 65536

    r = client.post("/api/compare", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and set(r.json()) >= ERROR_KEYS
    r = client.post("/api/compare", content=b"{}", headers={"content-type": "application/json",
                                                              "content-length": "999999999"})
    assert r.status_code == 413


def test_report_endpoint(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    r = client.post("/api/report", json={"kind": "compare", "scenario": SEED_TEXT, "lang": "zh"})
    assert r.status_code == 200 and r.text.startswith("<!DOCTYPE html>") and "四个维度" in r.text
    assert "attachment" in r.headers["content-disposition"]
    frag = client.post("/api/report", json={"scenario": SEED_TEXT, "fragment": True})
    assert frag.text.lstrip().startswith("<main") and "data-verdict" in frag.text
    plan = cli_json(capsys, "plan", str(HYBRID))
    r = client.post("/api/report", json={"kind": "plan", "data": plan})
    assert r.status_code == 200 and "Hybrid pool plan" in r.text
    assert client.post("/api/report", json={"kind": "audit"}).status_code == 400
    assert client.post("/api/report", json={"kind": "compare"}).status_code == 400
    bad = client.post("/api/report", json={"kind": "audit", "data": {"gpus": "nope"}})
    assert bad.status_code == 422 and bad.json()["field"] == "data.schema"  # checked against the contract
    bad = client.post("/api/report", json={"kind": "simulate", "data": [1, 2]})
    assert bad.status_code == 422 and bad.json()["field"].startswith("data.")


def test_a_report_renderer_bug_on_valid_data_is_a_500_not_the_clients_error(
        client: TestClient, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Data the plan contract accepts is the client's part done: a renderer that then fails is our bug
    (500 'internal'), not a 422 blaming the data (before: TypeError, KeyError ... on render were 422)."""
    import gpuplan.render.html as html

    def broken(*_args: object, **_kwargs: object) -> str:
        raise KeyError("a renderer bug")

    plan = cli_json(capsys, "plan", str(HYBRID))
    monkeypatch.setattr(html, "render_report", broken)
    r = client.post("/api/report", json={"kind": "plan", "data": plan})
    assert r.status_code == 500 and r.json()["error"] == "internal", r.text


def test_form_fields_and_edit(client: TestClient) -> None:
    fields = client.post("/api/scenario/fields", json={"scenario": SEED_TEXT}).json()["fields"]
    by = {f["path"]: f for f in fields}
    assert by["workloads[0].hours_per_day"]["value"] == 6
    assert by["workloads[1].hours_per_day"]["group"] == "training-24h"
    r = client.post("/api/scenario/edit", json={"scenario": SEED_TEXT, "set": {"workloads[0].hours_per_day": 24}})
    new = r.json()["scenario"]
    assert "hours_per_day: 24" in new and new.count("\n") == SEED_TEXT.count("\n")
    assert new.splitlines()[0] == SEED_TEXT.splitlines()[0]  # comments kept
    assert client.post("/api/compare", json={"scenario": new}).json()["workloads"][0]["recommendation"]["offer"] \
        == "bm-910b"
    # non-ASCII comments and a BOM: the value lands where it stood (libyaml and PyYAML count marks alike)
    for prefix in ("# 中文注释 😀\n", "\ufeff# 中文\n"):
        r = client.post("/api/scenario/edit", json={"scenario": prefix + SEED_TEXT,
                                                     "set": {"workloads[1].hours_per_day": 7.5}})
        assert r.json()["scenario"] == prefix + SEED_TEXT.replace("hours_per_day: 24", "hours_per_day: 7.5")
    for bad in ({"workloads[9].gpus": 1}, {"offers[0].price": 1}, {"workloads[0].gpus": "x"},
                {"currency": "yuan"}, {"workloads[0].duration": "forever"}):
        r = client.post("/api/scenario/edit", json={"scenario": SEED_TEXT, "set": bad})
        assert r.status_code == 422 and r.json()["field"], bad


def test_heavy_engines(client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # plan: the CLI's JSON, but for the time it was made
    r = client.post("/api/plan", json={"scenario": HYBRID.read_text(encoding="utf-8")})
    assert r.status_code == 200, r.text
    want = cli_json(capsys, "plan", str(HYBRID))
    got = r.json()
    for d in (got, want):
        d.pop("generated_at", None)
        d.pop("scenario", None)
    assert got == want
    bad = client.post("/api/plan", json={"scenario": "version: 1\ncurrency: CNY\n"})
    assert bad.status_code == 422 and bad.json()["file"] == "scenario.yaml" and "gpuplan-web-" not in bad.text

    trace = write_trace(tmp_path / "t.csv")
    files = {"trace": ("../../../etc/evil name.csv", trace.read_bytes(), "text/csv")}
    r = client.post("/api/simulate", files=files, data={"reserved": "0:8:4", "wait": "1h"})
    assert r.status_code == 200, r.text
    assert r.json() == cli_json(capsys, "simulate", str(trace), "--reserved", "0:8:4", "--wait", "1h")
    assert not Path("/etc/evil name.csv").exists() and not (tmp_path.parent / "evil_name.csv").exists()
    assert client.post("/api/simulate", data={"reserved": "4"}, files={"x": ("a", b"")}).status_code == 400
    r = client.post("/api/simulate", files=files, data={"reserved": "--help"})
    assert r.status_code == 400 and r.json()["field"] == "--reserved"
    r = client.post("/api/simulate", files={"trace": ("t.csv", b"submit_time,duration\n1,2\n")},
                    data={"reserved": "4"})
    assert r.status_code == 422 and set(r.json()) >= ERROR_KEYS
    assert client.post("/api/simulate", json={"reserved": 4}).status_code == 415

    log = write_nvsmi(tmp_path / "node1.csv")
    r = client.post("/api/audit", files=[("files", ("node1.csv", log.read_bytes(), "text/csv"))],
                    data={"price": "8/gpu-hour", "currency": "CNY"})
    assert r.status_code == 200, r.text
    got = r.json()
    want = cli_json(capsys, "audit", str(log), "--price", "8/gpu-hour", "--currency", "CNY")
    assert got["gpus"] == want["gpus"] and got["fleet"] == want["fleet"]
    assert client.post("/api/audit", data={"price": "8/gpu-hour"}, files={"x": ("a", b"")}).status_code == 400


def test_every_engine_is_in_the_build(client: TestClient) -> None:
    assert client.get("/api/health").json()["engines"] == {"compare": True, "plan": True, "simulate": True,
                                                           "audit": True, "export": True, "commit": True}
    page = client.get("/").text
    assert 'id="sim-form" class="tool"' in page and 'id="audit-form" class="tool"' in page
    assert 'id="quote-form" class="tool"' in page and 'id="import-form" class="tool"' in page
    assert page.count("<fieldset>") == 3 and "<fieldset disabled" not in page


def test_uploads_named_like_flags_are_just_names(client: TestClient, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A file called `--demand-out` once swallowed the next upload, and `--help` gave a 500: uploads are labels."""
    monkeypatch.chdir(tmp_path)  # the api reads the same names from here, so the answers must be identical
    trace = write_trace(tmp_path / "--help")
    r = client.post("/api/simulate", files={"trace": ("--help", trace.read_bytes(), "text/csv")},
                    data={"reserved": "0:8:4", "wait": "1h"})
    assert r.status_code == 200, r.text
    assert r.json() == api.simulate("--help", "0:8:4", wait="1h").to_json()

    a = write_nvsmi(tmp_path / "--help")
    b = write_nvsmi(tmp_path / "--demand-out")
    files = [("files", ("--help", a.read_bytes(), "text/csv")), ("files", ("--demand-out", b.read_bytes(), "text/csv"))]
    r = client.post("/api/audit", files=files, data={"price": "8/gpu-hour", "currency": "CNY"})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got == api.audit(["--help", "--demand-out"], price="8/gpu-hour", currency="CNY").to_json()
    assert got["input"]["files"] == ["--help", "--demand-out"]
    assert {g["node"] for g in got["gpus"]} == {"--help", "--demand-out"}  # nodes named after the files, as on the CLI


def test_web_errors_are_the_cli_errors(client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuplan.cli import main

    monkeypatch.chdir(tmp_path)
    text = "submit_time,duration,gpus\n0,10,1\n5,-3,1\n"
    Path("bad.csv").write_text(text, encoding="utf-8")
    r = client.post("/api/simulate", files={"trace": ("bad.csv", text.encode())}, data={"reserved": "4"})
    assert r.status_code == 422
    with pytest.raises(GpuplanError) as exc:
        api.simulate("bad.csv", "4")
    assert r.json() == exc.value.to_dict() and r.json()["file"] == "bad.csv" and r.json()["line"] == 3
    capsys.readouterr()
    assert main(["simulate", "bad.csv", "--reserved", "4"]) == 2
    assert str(exc.value) in " ".join(capsys.readouterr().err.split())  # the line the CLI prints

    r = client.post("/api/simulate", files={"trace": ("bad.csv", text.encode())},
                    data={"reserved": "4", "wait": "soon"})
    with pytest.raises(GpuplanError) as exc:
        api.simulate("bad.csv", "4", wait="soon")
    assert r.status_code == 400 and r.json() == exc.value.to_dict() and r.json()["error"] == "usage"

    r = client.post("/api/audit", files={"files": ("empty.csv", b"")})
    assert r.status_code == 422 and r.json()["error"] == "telemetry" and r.json()["file"] == "empty.csv"
    assert str(tmp_path) not in r.text and "gpuplan-web-" not in r.text


def test_odd_upload_names_and_form_values(client: TestClient, tmp_path: Path) -> None:
    from gpuplan.web.worker import safe_name

    assert safe_name("../../etc/passwd", 0) == "passwd" and safe_name("a\\b\x00c.csv", 1) == "b_c.csv"
    assert safe_name("..", 2) == "upload-2" and safe_name("", 3) == "upload-3"
    assert len(safe_name("é" * 300, 0).encode()) <= 200
    trace = write_trace(tmp_path / "t.csv").read_bytes()
    for name in ("..", "a/../../b.csv", "\x00", "😀.csv", "x" * 400):
        r = client.post("/api/simulate", files={"trace": (name, trace)}, data={"reserved": "4"})
        assert r.status_code == 200, (name, r.text)
    for data in ({"reserved": "4", "queueing": "fifo"}, {"reserved": "4", "packing": "rack"},
                 {"reserved": "4", "gpus_per_node": "eight"}, {"reserved": "4", "lang": "fr"},
                 {"reserved": "4" * 300}, {"reserved": " "}):
        r = client.post("/api/simulate", files={"trace": ("t.csv", trace)}, data=data)
        assert r.status_code == 400 and set(r.json()) >= ERROR_KEYS, data


def test_the_web_never_imports_the_cli() -> None:
    code = (
        "import sys\n"
        "from fastapi.testclient import TestClient\n"
        "from gpuplan.web.app import create_app\n"
        f"seed = open({str(SEED)!r}, encoding='utf-8').read()\n"
        f"hybrid = open({str(HYBRID)!r}, encoding='utf-8').read()\n"
        "c = TestClient(base_url='http://127.0.0.1', app=create_app())\n"
        "assert c.get('/').status_code == 200 and c.get('/api/example').status_code == 200\n"
        "assert c.post('/api/compare', json={'scenario': seed}).status_code == 200\n"
        "assert c.post('/api/plan', json={'scenario': hybrid}).status_code == 200\n"
        "assert c.post('/api/report', json={'kind': 'plan', 'scenario': hybrid}).status_code == 200\n"
        "bad = sorted(m for m in sys.modules if m.startswith('gpuplan.cli'))\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_heavy_requests_past_the_limit_kill_their_worker(tmp_path: Path) -> None:
    """A call past `heavy_timeout_s` is answered 503 and its worker process is killed (pebble stops it);
    the pool answers the next call with a fresh one."""
    import asyncio

    from slow_call import SlowCall

    import gpuplan.web.app as web_app
    from gpuplan.web.errors import ApiError

    app = web_app.create_app(heavy_timeout_s=3.0)
    rt = app.state.rt
    pid_file = tmp_path / "pid"
    with pytest.raises(ApiError) as caught:
        asyncio.run(rt.heavy_call(SlowCall(60.0, str(pid_file))))  # type: ignore[arg-type]
    assert caught.value.status == 503 and caught.value.body["error"] == "timeout"
    assert set(caught.value.body) >= ERROR_KEYS
    pid = int(pid_file.read_text())
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        rt.heavy.workers()  # reaps
        time.sleep(0.05)
    else:
        pytest.fail(f"worker {pid} still runs")
    r = asyncio.run(rt.heavy_call(SlowCall(0.0, str(tmp_path / "pid2"))))  # type: ignore[arg-type]
    assert r.status_code == 200 and json.loads(r.body) == {"slept": 0.0}
    app.state.shutdown()
    assert rt.heavy.workers() == 0


def test_heavy_requests_have_a_memory_bound() -> None:
    import gpuplan.web.app as web_app

    # generous time limits: this test is about memory, and a loaded machine must not turn it into a timeout
    app = web_app.create_app(heavy_memory_mb=150, timeout_s=300.0, heavy_timeout_s=300.0)
    c = TestClient(base_url="http://127.0.0.1", app=app)
    # within the server's limits (100,000 GPUs in an hour of demand), a worker's plan needs 170-220 MiB of
    # data segment (one BLAS thread) or 220-260 (a thread per core): past a 150 MiB bound either way, where
    # a worker answering the seed's own plan needs under 110 (measured 2026-12-01)
    demand = "time,gpu,gpus\n2024-03-04T00:00:00Z,ascend-910b,100000\n2024-03-04T01:00:00Z,ascend-910b,3\n"
    r = c.post("/api/plan", json={"scenario": SEED_TEXT, "demand_csv": demand})
    assert r.status_code == 503 and r.json()["error"] in ("memory", "worker") and "MiB" in r.json()["message"]
    r = c.post("/api/plan", json={"scenario": SEED_TEXT})  # a fresh worker answers
    assert r.status_code == 200 and r.json()["schema"] == "gpuplan.plan/1"
    app.state.shutdown()
    assert app.state.heavy.workers() == 0


def test_slow_requests_are_503(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuplan.web.app as web_app
    from gpuplan.web.routers import engines

    def slow(*_a: object) -> dict[str, object]:
        time.sleep(1.0)
        return {}

    monkeypatch.setattr(engines, "compare_json", slow)
    # the time limit holds for what runs in the thread pool: every compare with the inline path off, and
    # with it on, a scenario over the inline size or one with YAML anchors/aliases
    c = TestClient(base_url="http://127.0.0.1", app=web_app.create_app(timeout_s=0.2, inline_max_kb=0))
    r = c.post("/api/compare", json={"scenario": SEED_TEXT})
    assert r.status_code == 503 and r.json()["error"] == "timeout"
    c = TestClient(base_url="http://127.0.0.1", app=web_app.create_app(timeout_s=0.2))
    for text in (SEED_TEXT + "#" * 5000 + "\n", SEED_TEXT + "x: &a 1\n"):
        r = c.post("/api/compare", json={"scenario": text})
        assert r.status_code == 503 and r.json()["error"] == "timeout"


def test_small_compares_are_answered_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import gpuplan.web.app as web_app
    from gpuplan.web.routers import engines

    real = engines.compare_json
    threads: list[str] = []

    def spy(*a: object) -> object:
        threads.append(threading.current_thread().name)
        return real(*a)

    monkeypatch.setattr(engines, "compare_json", spy)
    c = TestClient(base_url="http://127.0.0.1", app=web_app.create_app())
    assert c.post("/api/compare", json={"scenario": SEED_TEXT}).status_code == 200
    assert c.post("/api/compare", json={"scenario": SEED_TEXT + "#" * 5000 + "\n"}).status_code == 200
    assert not threads[0].startswith("gpuplan-engine") and threads[1].startswith("gpuplan-engine"), threads


def test_an_engine_bug_is_a_500_internal_error(monkeypatch: pytest.MonkeyPatch,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """An exception that is not the user's input error (`GpuplanError`) is a bug of ours: 500 "internal
    error", one log line, and nothing of it (type, message, traceback) in the answer. Inline and in the
    thread pool alike."""
    import gpuplan.web.app as web_app
    from gpuplan.web.routers import engines

    def boom(*_a: object) -> dict[str, object]:
        raise ZeroDivisionError("float division by zero in secret_module.py")

    monkeypatch.setattr(engines, "compare_json", boom)
    c = TestClient(base_url="http://127.0.0.1", app=web_app.create_app())
    for text in (SEED_TEXT, SEED_TEXT + "#" * 5000 + "\n"):
        caplog.clear()
        with caplog.at_level("INFO", logger="gpuplan.web"):
            r = c.post("/api/compare", json={"scenario": text})
        assert r.status_code == 500 and r.json() == {**r.json(), "error": "internal", "message": "internal error"}
        assert "ZeroDivision" not in r.text and "secret_module" not in r.text and "Traceback" not in r.text
        lines = [rec for rec in caplog.records if rec.levelname == "ERROR"]
        assert len(lines) == 1 and "ZeroDivisionError" in lines[0].getMessage() and lines[0].exc_info is None


def test_gpuplan_serve_real_process() -> None:
    with gpuplan_serve("--max-body-mb", "0.5", tries=100) as base:
        r = httpx.post(base + "/api/compare", json={"scenario": SEED_TEXT}, timeout=10)
        assert r.status_code == 200 and r.json()["schema"] == "gpuplan.compare/1"
        r = httpx.post(base + "/api/compare", content=b"x" * 600_000, headers={"content-type": "application/json"})
        assert r.status_code == 413


def test_gpuplan_serve_workers() -> None:
    """`--workers 2`: two processes behind one port; every connection has TCP_NODELAY (without it, each
    response written in two parts waits ~40 ms for the client's delayed ACK)."""
    with gpuplan_serve("--workers", "2") as base, httpx.Client(base_url=base, timeout=10) as c:
        assert c.post("/api/compare", json={"scenario": SEED_TEXT}).json()["schema"] == "gpuplan.compare/1"
        t0 = time.perf_counter()
        for _ in range(20):  # one keep-alive connection
            assert c.post("/api/compare", json={"scenario": SEED_TEXT}).status_code == 200
        assert time.perf_counter() - t0 < 20 * 0.04, "responses wait for delayed ACKs (no TCP_NODELAY)"


def _listening(port: int) -> int:
    """How many sockets listen on `port` (Linux: /proc/net/tcp, state 0A)."""
    rows = (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
    return sum(1 for f in rows if int(f[1].split(":")[1], 16) == port and f[3] == "0A")


def _owners(port: int) -> dict[int, int]:
    """How many established connections to `port` each process holds (Linux: /proc/net/tcp gives the
    sockets' inodes, /proc/PID/fd which process holds each)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = line.split()
        if int(f[1].split(":")[1], 16) == port and f[3] == "01":  # local port; 01: ESTABLISHED
            inodes.add(f[9])
    owners: dict[int, int] = {}
    for pid_dir in Path("/proc").iterdir():
        if not pid_dir.name.isdigit() or int(pid_dir.name) == os.getpid():
            continue
        try:
            links = [os.readlink(fd) for fd in (pid_dir / "fd").iterdir()]
        except OSError:
            continue
        n = sum(1 for link in links if link.startswith("socket:[") and link[8:-1] in inodes)
        if n:
            owners[int(pid_dir.name)] = n
    return owners


@pytest.mark.skipif(sys.platform != "linux", reason="SO_REUSEPORT spreading is Linux's")
def test_gpuplan_serve_workers_share_the_connections() -> None:
    """`--workers 2`: 100 connections opened at once land on both processes about evenly (a socket each,
    SO_REUSEPORT). With one shared listening socket the first process to wake took most of them (1/49 and
    7/43 of 50 were seen), and its queue set everyone's tail latency."""
    import socket

    with gpuplan_serve("--workers", "2") as base:
        port = int(base.rsplit(":", 1)[1])
        # each process listens once it has warmed up: /api/health answers when the first does
        for _ in range(600):
            if _listening(port) == 2:
                break
            time.sleep(0.1)
        assert _listening(port) == 2
        conns = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(100)]
        try:
            for c in conns:
                c.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            for c in conns:
                assert c.recv(64).startswith(b"HTTP/1.1 200")
            owners = _owners(port)
        finally:
            for c in conns:
                c.close()
    assert len(owners) == 2 and min(owners.values()) >= 30, owners  # binomial(100, 1/2) < 30: p ~ 3e-5


def test_heavy_workers_under_the_gpuplan_script_do_not_import_the_cli(tmp_path: Path) -> None:
    """`gpuplan serve` runs as the `gpuplan` script, whose top imports the CLI; spawned workers re-import the
    parent's `__main__` unless told otherwise (`server._workers_spawn_cleanly`). A script like it, then a
    worker of the heavy pool reports what it has imported: no `gpuplan.cli`."""
    script = tmp_path / "like_the_gpuplan_script.py"
    script.write_text(
        "import json, sys\n"
        "import gpuplan.cli  # as the console script does\n"
        "from gpuplan.web import server\n"
        "from gpuplan.web.worker import HeavyPool\n"
        "from slow_call import ModulesCall\n"
        "if __name__ == '__main__':\n"
        "    server._workers_spawn_cleanly()\n"
        "    pool = HeavyPool(1, 0, 60)\n"
        "    fut = pool.submit(ModulesCall())\n"
        "    fut.result(timeout=120)\n"
        "    status, body = pool.reply(fut)\n"
        "    pool.close()\n"
        "    print(status, body.decode())\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "unit")}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, body = proc.stdout.split(" ", 1)
    assert status == "200" and "cli" not in json.loads(body), proc.stdout

"""A real Prometheus over a TSDB backfilled with dcgm-exporter samples: the live path gives the same
answer as the file path. One server for the module; skipped when prometheus/promtool are missing."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time

import httpx
import pytest

from gpuplan.errors import TelemetryError
from gpuplan.telemetry import Collector, analyze, read_into
from gpuplan.telemetry.promlive import LiveQuery, fetch

pytestmark = pytest.mark.skipif(
    not (shutil.which("prometheus") and shutil.which("promtool")),
    reason="needs Debian's prometheus and promtool (apt-get install prometheus)",
)

STEP = 60
N = 360  # six hours of one-minute samples


def _util(kind: str, i: int) -> float:
    if kind == "busy":
        return 90.0 + (i % 7)
    if kind == "idle":
        return float(i % 3)
    if kind == "starved":  # two minutes fed, three minutes waiting
        return 98.0 if i % 5 < 2 else 1.0
    if kind == "mixed":
        return 95.0 if i < N // 3 else 0.0
    raise ValueError(kind)


KINDS = {("gpu-a", "0"): "busy", ("gpu-a", "1"): "idle", ("gpu-b", "0"): "starved", ("gpu-b", "1"): "mixed"}


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("prom")
    end = (int(time.time()) // 3600 - 4) * 3600  # well behind the head block
    start = end - N * STEP
    om = ["# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    series = []
    for (host, gpu), kind in sorted(KINDS.items()):
        labels = f'Hostname="{host}",UUID="GPU-{host}-{gpu}",gpu="{gpu}",modelName="NVIDIA A100-SXM4-80GB"'
        values = []
        for i in range(N):
            ts = start + 30 + STEP * i  # mid-step, so each live window (t - step, t] holds exactly one
            v = _util(kind, i)
            om.append(f"DCGM_FI_DEV_GPU_UTIL{{{labels}}} {v} {ts}")
            values.append([ts, f"{v:g}"])
        series.append(
            {
                "metric": {
                    "__name__": "DCGM_FI_DEV_GPU_UTIL",
                    "Hostname": host,
                    "gpu": gpu,
                    "UUID": f"GPU-{host}-{gpu}",
                    "modelName": "NVIDIA A100-SXM4-80GB",
                },
                "values": values,
            }
        )
    om.append("# TYPE DCGM_FI_PROF_SM_ACTIVE gauge")
    for i in range(N):
        om.append(
            f'DCGM_FI_PROF_SM_ACTIVE{{Hostname="gpu-a",UUID="GPU-gpu-a-0",gpu="0"}} 0.5 '
            f"{start + 30 + STEP * i}"
        )
    om.append("# EOF")
    (d / "data.om").write_text("\n".join(om) + "\n")
    (d / "query.json").write_text(
        json.dumps({"status": "success", "data": {"resultType": "matrix", "result": series}})
    )
    tsdb = d / "tsdb"
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(d / "data.om"), str(tsdb)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (d / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (d / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [
            "prometheus",
            f"--config.file={d / 'prometheus.yml'}",
            f"--storage.tsdb.path={tsdb}",
            "--storage.tsdb.retention.time=100y",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("prometheus did not start: " + (d / "prometheus.log").read_text()[-2000:])
            time.sleep(0.2)
        yield {"url": url, "start": start, "end": end, "file": d / "query.json"}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_live_equals_file(prom) -> None:
    col = Collector()
    stats = fetch(LiveQuery(prom["url"], prom["start"] + STEP, prom["end"], step_s=STEP, max_points=500), col)
    assert stats["chunks"] > 1  # the range was cut into chunks
    live = analyze(col.finish())
    col2 = Collector()
    read_into([prom["file"]], col2)
    filed = analyze(col2.finish())
    assert live.bad_rows == filed.bad_rows == 0
    assert [(g.node, g.gpu) for g in live.gpus] == [(g.node, g.gpu) for g in filed.gpus]
    for a, b in zip(live.gpus, filed.gpus, strict=True):
        assert a.samples == b.samples == N
        assert a.cls == b.cls == KINDS[(a.node, a.gpu)]
        assert a.mean_util == pytest.approx(b.mean_util, abs=1e-9)
        assert a.idle_share == pytest.approx(b.idle_share, abs=1e-9)
        assert a.busy_share == pytest.approx(b.busy_share, abs=1e-9)
        assert a.observed_hours == pytest.approx(b.observed_hours, abs=1e-9)
    assert live.gpus[0].evidence["other_metrics"] == {"DCGM_FI_PROF_SM_ACTIVE": 0.5}
    assert live.fleet.mean_util == pytest.approx(filed.fleet.mean_util, abs=1e-9)


def test_selector_narrows(prom) -> None:
    col = Collector()
    fetch(LiveQuery(prom["url"], prom["start"] + STEP, prom["end"], selector='{Hostname="gpu-b"}'), col)
    assert {g.node for g in analyze(col.finish()).gpus} == {"gpu-b"}


def test_error_payload_from_real_server(prom) -> None:
    with pytest.raises(TelemetryError, match="Prometheus answered an error: bad_data"):
        fetch(LiveQuery(prom["url"], prom["start"], prom["end"], selector='{Hostname=~"("}'), Collector())


def test_nothing_matches(prom) -> None:
    with pytest.raises(TelemetryError, match="no DCGM_FI_DEV_GPU_UTIL"):
        fetch(LiveQuery(prom["url"], prom["start"], prom["end"], selector='{Hostname="nope"}'), Collector())

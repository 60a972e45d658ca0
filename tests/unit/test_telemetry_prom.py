"""Prometheus JSON files and the live reader against an injected transport (no network, no patching)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from gpuplan.errors import TelemetryError
from gpuplan.telemetry import Collector, analyze, read_into
from gpuplan.telemetry.promlive import LiveQuery, fetch

T0 = 1_700_000_000


def _matrix(series: list[tuple[dict[str, str], list[tuple[float, str]]]]) -> dict:
    return {
        "status": "success",
        "data": {"resultType": "matrix", "result": [{"metric": m, "values": v} for m, v in series]},
    }


def _labels(metric: str, host: str, gpu: str) -> dict[str, str]:
    return {
        "__name__": metric,
        "Hostname": host,
        "gpu": gpu,
        "UUID": f"GPU-{host}-{gpu}",
        "modelName": "NVIDIA A100",
    }


def test_promfile_prefers_gpu_util_and_counts_bad_values(tmp_path: Path) -> None:
    util = [(T0 + 60 * i, str(100 if i % 2 else 0)) for i in range(60)]
    util[5] = (util[5][0], "NaN")
    util[6] = (util[6][0], "abc")
    util[7] = (util[7][0], "150")
    gr = [(T0 + 60 * i, "0.9") for i in range(60)]
    sm = [(T0 + 60 * i, "0.25") for i in range(60)]
    p = tmp_path / "q.json"
    p.write_text(
        json.dumps(
            _matrix(
                [
                    (_labels("DCGM_FI_DEV_GPU_UTIL", "n1", "0"), util),
                    (_labels("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "n1", "0"), gr),  # ignored: GPU_UTIL present
                    (_labels("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "n1", "1"), gr),  # used: only ratio
                    (_labels("DCGM_FI_PROF_SM_ACTIVE", "n1", "1"), sm),
                ]
            )
        )
    )
    col = Collector()
    read_into([p], col)
    res = analyze(col.finish())
    by = {g.gpu: g for g in res.gpus}
    assert by["0"].samples == 57 and by["1"].samples == 60
    assert by["1"].mean_util == pytest.approx(0.9, abs=1e-6)
    assert by["1"].evidence["other_metrics"] == {"DCGM_FI_PROF_SM_ACTIVE": 0.25}
    assert res.bad_by_kind == {"malformed": 1, "na": 1, "out_of_range": 1}
    assert res.bad_examples["na"] == [f"{p}: result[0].values[5]"]


def test_promfile_error_payload(tmp_path: Path) -> None:
    p = tmp_path / "e.json"
    p.write_text(json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error at char 3"}))
    with pytest.raises(TelemetryError, match="parse error at char 3"):
        read_into([p], Collector())


# ---- live reader with an injected transport ------------------------------------------------------


class FakeProm:
    """Answers like Prometheus from in-memory samples, recording every request."""

    def __init__(self, gpus: int, fail_first: int = 0, error: str | None = None) -> None:
        self.gpus = gpus
        self.fail_first = fail_first
        self.error = error
        self.requests: list[dict[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        q = {k: v[0] for k, v in parse_qs(urlparse(str(request.url)).query).items()}
        self.requests.append(q)
        if self.fail_first > 0:
            self.fail_first -= 1
            return httpx.Response(503, text="overloaded")
        if self.error:
            return httpx.Response(400, json={"status": "error", "errorType": "bad_data", "error": self.error})
        if request.url.path.endswith("/api/v1/series"):
            n = self.gpus if "GPU_UTIL" in q["match[]"] else 0
            return httpx.Response(
                200, json={"status": "success", "data": [{"gpu": str(g)} for g in range(n)]}
            )
        start, end, step = float(q["start"]), float(q["end"]), float(q["step"])
        assert "avg_over_time(DCGM_FI_DEV_GPU_UTIL" in q["query"]
        steps = [start + i * step for i in range(int(round((end - start) / step)) + 1)]
        series = [
            (
                {"Hostname": f"n{g // 8}", "gpu": str(g % 8)},
                [(ts, str(50 + (g % 3) * 10)) for ts in steps],
            )
            for g in range(self.gpus)
        ]
        return httpx.Response(200, json=_matrix(series))


def _q(fake: FakeProm, **kw) -> LiveQuery:
    base = dict(url="http://prom:9090", start=T0, end=T0 + 6 * 3600, step_s=60.0, backoff_s=0.01)
    base.update(kw)
    return LiveQuery(transport=httpx.MockTransport(fake), sleep=lambda s: None, **base)


def test_live_chunks_bound_points_per_request() -> None:
    fake = FakeProm(gpus=40)
    col = Collector()
    stats = fetch(_q(fake, max_points=2_000), col)
    ranges = [r for r in fake.requests if "step" in r]
    assert len(ranges) == stats["chunks"] > 1
    for r in ranges:
        steps = round((float(r["end"]) - float(r["start"])) / 60) + 1
        assert steps * 40 <= 2_000
        assert r["query"].startswith("avg_over_time(DCGM_FI_DEV_GPU_UTIL[59999ms]")
    res = analyze(col.finish())
    assert len(res.gpus) == 40
    assert all(g.samples == 361 for g in res.gpus)  # every step once: chunks neither overlap nor skip
    assert res.bad_rows == 0


def test_live_selector_and_retry_then_success() -> None:
    fake = FakeProm(gpus=2, fail_first=2)
    col = Collector()
    fetch(_q(fake, selector='{Hostname="n0"}'), col)
    assert all('{Hostname="n0"}' in r.get("query", r.get("match[]", "")) for r in fake.requests)
    assert len(analyze(col.finish()).gpus) == 2


def test_live_gives_up_after_retries() -> None:
    fake = FakeProm(gpus=2, fail_first=100)
    with pytest.raises(TelemetryError, match="failed after 4 tries: HTTP 503"):
        fetch(_q(fake), Collector())
    assert len(fake.requests) == 4


def test_live_error_payload_fails_at_once() -> None:
    fake = FakeProm(gpus=2, error='unknown function "avg_ovr_time"')
    with pytest.raises(TelemetryError, match="bad_data"):
        fetch(_q(fake), Collector())
    assert len(fake.requests) == 1


def test_live_bad_selector() -> None:
    with pytest.raises(TelemetryError, match="braces"):
        fetch(_q(FakeProm(1), selector='Hostname="x"'), Collector())


def test_live_server_down() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    q = LiveQuery(f"http://127.0.0.1:{port}", T0, T0 + 3600, retries=1, backoff_s=0.0, timeout_s=2)
    with pytest.raises(TelemetryError, match="cannot connect"):
        fetch(q, Collector())


def test_live_slow_server_times_out() -> None:
    release = threading.Event()

    class Slow(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            release.wait(5)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        q = LiveQuery(
            f"http://127.0.0.1:{server.server_port}", T0, T0 + 3600, timeout_s=0.3, retries=1, backoff_s=0.0
        )
        started = time.monotonic()
        with pytest.raises(TelemetryError, match=r"no answer within 0.3 s"):
            fetch(q, Collector())
        assert time.monotonic() - started < 3
    finally:
        release.set()
        server.shutdown()
        server.server_close()

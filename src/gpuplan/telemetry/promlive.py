"""A live Prometheus (dcgm-exporter metrics): the server averages, we fetch in time chunks.

Each request asks for `avg_over_time(METRIC{selector}[step])` evaluated every `step`, so the server
reduces raw scrapes to one point per step; the time range is cut into chunks so that no response holds
more than `max_points` points (series x steps), whatever the fleet size. Timeouts, connection errors,
HTTP 429/5xx are retried with exponential backoff; an error payload fails at once with its message.
The HTTP transport can be injected (`httpx.MockTransport` in tests), HTTPX style.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpuplan.errors import TelemetryError
from gpuplan.telemetry.promfile import EXTRA_METRICS, UTIL_METRICS, Series, add_series, parse_payload
from gpuplan.telemetry.samples import Collector


@dataclass
class LiveQuery:
    url: str
    start: float  # unix seconds
    end: float
    step_s: float = 60.0
    selector: str = ""
    timeout_s: float = 30.0
    retries: int = 3
    backoff_s: float = 0.5
    max_points: int = 200_000
    transport: Any = None  # an httpx.BaseTransport; None = real network
    sleep: Callable[[float], None] = field(default=time.sleep)


def _check_selector(selector: str) -> str:
    sel = selector.strip()
    if sel and not (sel.startswith("{") and sel.endswith("}")):
        raise TelemetryError(
            f"the selector must be a label matcher in braces, got {selector!r}",
            field="--selector",
            hint="""for example --selector '{Hostname=~"gpu-node-.*"}'""",
        )
    return sel


class _Client:
    def __init__(self, q: LiveQuery) -> None:
        import httpx

        self.q = q
        self.base = q.url.rstrip("/")
        self.http = httpx.Client(transport=q.transport, timeout=httpx.Timeout(q.timeout_s))
        self.requests = 0

    def close(self) -> None:
        self.http.close()

    def get(self, path: str, params: dict[str, str]) -> Any:
        import httpx

        url = f"{self.base}{path}"
        last = ""
        for attempt in range(self.q.retries + 1):
            if attempt:
                self.q.sleep(self.q.backoff_s * 2 ** (attempt - 1))
            self.requests += 1
            try:
                resp = self.http.get(url, params=params)
            except httpx.TimeoutException:
                last = f"no answer within {self.q.timeout_s:g} s"
                continue
            except httpx.TransportError as exc:
                last = f"cannot connect ({type(exc).__name__}: {exc})"
                continue
            if resp.status_code == 429 or resp.status_code >= 500:
                body = _json(resp)
                if isinstance(body, dict) and body.get("status") == "error" and resp.status_code != 503:
                    return parse_error(body, url)  # a query that fails on the server: retrying will not help
                last = f"HTTP {resp.status_code}"
                continue
            body = _json(resp)
            if body is None:
                raise TelemetryError(
                    f"Prometheus at {self.base} answered HTTP {resp.status_code} "
                    "with a body that is not JSON",
                    field="--prometheus",
                    hint="is this the Prometheus server URL (e.g. http://prometheus:9090)?",
                )
            if body.get("status") != "success":
                return parse_error(body, url)
            return body
        raise TelemetryError(
            f"Prometheus at {self.base} failed after {self.q.retries + 1} tries: {last}",
            field="--prometheus",
            hint="check the URL and that the server is up; "
            "a slow server may need a shorter --since or a larger --step",
        )


def _json(resp: Any) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None


def parse_error(body: dict[str, Any], url: str) -> Any:
    raise TelemetryError(
        f"Prometheus answered an error: {body.get('errorType', '?')}: {body.get('error', '?')}",
        field="--prometheus",
        hint="check --selector and the time range",
    )


def _fmt_step(step_s: float) -> str:
    return f"{int(round(step_s * 1000))}ms"


def fetch(q: LiveQuery, collector: Collector) -> dict[str, int]:
    """Fetch utilisation (and the extra DCGM metrics when present) into `collector`; returns stats."""
    sel = _check_selector(q.selector)
    if not (q.end > q.start):
        raise TelemetryError("--until must be after --since", field="--since", hint="for example --since 7d")
    if q.step_s <= 0:
        raise TelemetryError("--step must be positive", field="--step", hint="for example --step 60s")
    client = _Client(q)
    try:
        series: list[Series] = []
        stats = {"requests": 0, "chunks": 0, "series": 0, "points": 0}
        counts = {m: _count(client, m, sel, q) for m in (*UTIL_METRICS, *EXTRA_METRICS)}
        for metric, count in counts.items():
            if count == 0:
                continue
            if metric == "DCGM_FI_PROF_GR_ENGINE_ACTIVE" and counts["DCGM_FI_DEV_GPU_UTIL"] >= count:
                continue  # every GPU has DCGM_FI_DEV_GPU_UTIL, which is preferred
            series.extend(_range(client, metric, sel, q, count, stats))
        if not any(s.metric in UTIL_METRICS for s in series):
            raise TelemetryError(
                f"no {' or '.join(UTIL_METRICS)} series"
                f"{(' match ' + sel) if sel else ''} between the given times",
                field="--selector",
                hint="check that dcgm-exporter is scraped by this Prometheus and the selector's labels",
            )
        stats["series"] = len({(s.metric, tuple(sorted(s.labels.items()))) for s in series})
        merged = _merge(series)
        stats["points"] = sum(len(s.values) for s in merged)
        for s in merged:
            s.where = f"{q.url} {s.metric}{{{','.join(f'{k}={v!r}' for k, v in sorted(s.labels.items()))}}}"
        add_series(merged, collector, source=f"{q.url}")
        collector.notes.append(f"prometheus: server-side avg_over_time at step {q.step_s:g}s")
        stats["requests"] = client.requests
        return stats
    finally:
        client.close()


def _count(client: _Client, metric: str, sel: str, q: LiveQuery) -> int:
    """How many series a metric has in the window (sizes the chunks): the series index, no samples read."""
    match = f"{metric}{sel[:-1]}}}" if sel else metric
    body = client.get(
        "/api/v1/series",
        {"match[]": match, "start": f"{q.start:.3f}", "end": f"{q.end:.3f}"},
    )
    return len(body.get("data") or [])


def _range(
    client: _Client, metric: str, sel: str, q: LiveQuery, count: int, stats: dict[str, int]
) -> list[Series]:
    steps_per_chunk = max(1, min(11_000, q.max_points // max(count, 1)))
    window = _fmt_step(q.step_s - 0.001) if q.step_s > 0.001 else _fmt_step(q.step_s)
    query = f"avg_over_time({metric}{sel}[{window}])"
    out: list[Series] = []
    start = q.start
    n_steps = math.floor((q.end - q.start) / q.step_s + 1e-9)
    end_all = q.start + n_steps * q.step_s
    while start <= end_all + 1e-9:
        end = min(start + (steps_per_chunk - 1) * q.step_s, end_all)
        body = client.get(
            "/api/v1/query_range",
            {"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{q.step_s:g}"},
        )
        stats["chunks"] += 1
        out.extend(parse_payload(body, f"{q.url} {query}", metric=metric))
        start = end + q.step_s
    return out


def _merge(series: list[Series]) -> list[Series]:
    """One series per (metric, labels) across chunks, points in time order."""
    by: dict[tuple[str, tuple[tuple[str, str], ...]], Series] = {}
    for s in series:
        labels = {k: v for k, v in s.labels.items() if k != "__name__"}
        key = (s.metric, tuple(sorted(labels.items())))
        if key in by:
            by[key].values.extend(s.values)
        else:
            by[key] = Series(s.metric, labels, list(s.values), s.where)
    for s in by.values():
        s.values.sort(key=lambda p: p[0])
    return [by[k] for k in sorted(by)]

"""Prometheus range-query results (`/api/v1/query_range` JSON) of dcgm-exporter metrics.

Utilisation per GPU comes from `DCGM_FI_DEV_GPU_UTIL` (percent) when a GPU has it, else from
`DCGM_FI_PROF_GR_ENGINE_ACTIVE` (a ratio); `DCGM_FI_PROF_SM_ACTIVE` and
`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE` are reported as evidence when present. The node is the `Hostname`
label (else `instance`), the GPU the `gpu` label (else `UUID`). The live reader (`promlive`) feeds the
same `add_series` so both paths give the same answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplan.errors import TelemetryError
from gpuplan.telemetry.samples import Collector

UTIL_METRICS = {"DCGM_FI_DEV_GPU_UTIL": 0.01, "DCGM_FI_PROF_GR_ENGINE_ACTIVE": 1.0}  # name -> to ratio
EXTRA_METRICS = ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE")


@dataclass
class Series:
    metric: str
    labels: dict[str, str]
    values: list[tuple[float, str]]  # (unix seconds, value text) as Prometheus sends them
    where: str  # e.g. "file.json: result[3]"
    lines: list[int] | None = None  # text scrapes: the line of each value (locations read file:line)


def node_gpu(labels: dict[str, str]) -> tuple[str | None, str | None]:
    node = labels.get("Hostname") or labels.get("hostname") or labels.get("instance")
    gpu = labels.get("gpu") or labels.get("UUID") or labels.get("uuid")
    return node, gpu


def parse_payload(payload: Any, where: str, metric: str | None = None) -> list[Series]:
    """The series of one query_range response; an error payload raises TelemetryError."""
    if not isinstance(payload, dict) or "status" not in payload:
        raise TelemetryError(
            "not a Prometheus query_range response (no status field)",
            file=where,
            hint="save the JSON body of "
            "/api/v1/query_range?query=DCGM_FI_DEV_GPU_UTIL&start=...&end=...&step=60",
        )
    if payload.get("status") != "success":
        raise TelemetryError(
            f"Prometheus answered an error: {payload.get('errorType', '?')}: {payload.get('error', '?')}",
            file=where,
            hint="check the query, the selector and the time range",
        )
    data = payload.get("data") or {}
    if data.get("resultType") != "matrix":
        raise TelemetryError(
            f"expected a range-query result (resultType matrix), got {data.get('resultType')!r}",
            file=where,
            hint="use /api/v1/query_range, not /api/v1/query",
        )
    result = data.get("result") or []
    if not isinstance(result, list):
        raise TelemetryError("data.result: expected a list of series", file=where,
                             hint="save the JSON body of /api/v1/query_range as Prometheus sends it")
    out: list[Series] = []
    for i, item in enumerate(result):
        metric_labels = item.get("metric") if isinstance(item, dict) else None
        values = item.get("values") if isinstance(item, dict) else None
        if not isinstance(metric_labels, dict | None) or not isinstance(values, list | None):
            raise TelemetryError(f"data.result[{i}]: expected {{metric: {{labels}}, values: [[time, value], ...]}}",
                                 file=where, hint="save the JSON body of /api/v1/query_range as Prometheus sends it")
        labels = {str(k): str(v) for k, v in (metric_labels or {}).items()}
        name = metric or labels.get("__name__", "")
        out.append(Series(name, labels, [_point(p) for p in values or []], f"{where}: result[{i}]"))
    return out


# A point whose time is not Unix seconds (not a number, not finite, before 1970 or after year 5138) or
# that is not a [time, value] pair keeps its place with this value, which `_numbers` counts as malformed.
_BAD_POINT = (0.0, "<not [unix seconds, value]>")
_LATEST_S = 1e11


def _point(p: Any) -> tuple[float, str]:
    if not isinstance(p, list | tuple) or len(p) != 2 or isinstance(p[0], bool):
        return _BAD_POINT
    try:
        t = float(p[0])
    except (TypeError, ValueError):
        return _BAD_POINT
    if not 0.0 <= t < _LATEST_S:  # also NaN and inf
        return _BAD_POINT
    return t, str(p[1])


def read_promfile(path: Path, collector: Collector) -> None:
    path = Path(path)
    from gpuplan.limits import load_json

    payload = load_json(path, hint="expected a Prometheus query_range response", error=TelemetryError)
    add_series(parse_payload(payload, str(path)), collector, source=str(path))


def add_series(series: list[Series], col: Collector, source: str | None = None) -> None:
    """Turn DCGM series into samples; values that are not numbers are counted as bad data."""
    import bisect

    import numpy as np
    import polars as pl

    bases: list[int] = []  # location ordinal where each series' kept points start
    owners: list[tuple[str, np.ndarray, list[int] | None]] = []  # (series, indices of its kept points, lines)

    def describe(i: int) -> str:
        r = bisect.bisect_right(bases, i) - 1
        where, idx, lines = owners[r]
        j = int(idx[i - bases[r]])
        return f"{where}:{lines[j]}" if lines is not None else f"{where}.values[{j}]"

    next_loc = 0

    name = source or (series[0].where.split(": result")[0] if series else "prometheus")
    src = col.add_source(name, describe)
    has_util: set[tuple[str, str]] = set()
    for s in series:
        node, gpu = node_gpu(s.labels)
        if s.metric == "DCGM_FI_DEV_GPU_UTIL" and node is not None and gpu is not None:
            has_util.add((node, gpu))
    for s in series:
        if s.metric not in UTIL_METRICS and s.metric not in EXTRA_METRICS:
            continue
        node, gpu = node_gpu(s.labels)
        if node is None or gpu is None:
            raise TelemetryError(
                f"a {s.metric} series has no Hostname/instance or gpu/UUID label: {s.labels}",
                file=s.where,
                hint="keep dcgm-exporter's labels (Hostname, gpu) in the query",
            )
        if s.metric == "DCGM_FI_PROF_GR_ENGINE_ACTIVE" and (node, gpu) in has_util:
            continue  # DCGM_FI_DEV_GPU_UTIL is used for this GPU
        kid = col.registry.id(node, gpu)
        col.registry.set_model(kid, s.labels.get("modelName"))
        col.rows += len(s.values)
        ts = np.round(np.array([p[0] for p in s.values], dtype=np.float64) * 1000).astype(np.int64)
        vs, bad = _numbers([p[1] for p in s.values])
        scale = UTIL_METRICS.get(s.metric, 1.0)
        ok = ~np.isnan(vs) & ~np.isinf(vs)
        ratio = vs * scale
        rng = ok & ((ratio < 0) | (ratio > 1.0 + 1e-9))
        if rng.any():
            bad.setdefault("out_of_range", []).extend(np.flatnonzero(rng).tolist())
        ok &= ~rng
        for kind in sorted(bad, key=lambda k: ("malformed", "na", "out_of_range").index(k)):
            idx = sorted(bad[kind])
            col.bad.add(kind, len(idx), [_where(s, j) for j in idx[:5]])
        if s.metric in EXTRA_METRICS:
            if ok.any():
                col.add_extra(kid, s.metric, float(ratio[ok].sum()), int(ok.sum()))
            continue
        base = next_loc
        bases.append(base)
        owners.append((s.where, np.flatnonzero(ok), s.lines))
        next_loc += int(ok.sum())
        col.good[src] = col.good.get(src, 0) + int(ok.sum())
        col.parts.append(
            pl.DataFrame(
                {
                    "key": np.full(int(ok.sum()), kid, dtype=np.uint32),
                    "t": ts[ok],
                    "u": np.clip(ratio[ok], 0.0, 1.0).astype(np.float32),
                    "src": np.full(int(ok.sum()), src, dtype=np.uint16),
                    "loc": np.arange(base, base + int(ok.sum()), dtype=np.uint32),
                }
            )
        )


def _where(s: Series, j: int) -> str:
    return f"{s.where}:{s.lines[j]}" if s.lines is not None else f"{s.where}.values[{j}]"


def _numbers(texts: list[str]) -> tuple[Any, dict[str, list[int]]]:
    """Prometheus sample values (strings) as floats; NaN/Inf are `na`, other text `malformed`."""
    import numpy as np

    bad: dict[str, list[int]] = {}
    try:
        vs = np.array(texts, dtype=np.float64) if texts else np.zeros(0)
    except ValueError:
        vs = np.empty(len(texts))
        for j, text in enumerate(texts):
            try:
                vs[j] = float(text)
            except ValueError:
                vs[j] = math.nan
                bad.setdefault("malformed", []).append(j)
    special = np.flatnonzero(~np.isfinite(vs))
    malformed = set(bad.get("malformed", []))
    na = [int(j) for j in special if int(j) not in malformed]
    if na:
        bad["na"] = na
    return vs, bad

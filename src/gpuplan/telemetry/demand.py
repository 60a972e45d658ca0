"""The hourly demand curve `plan --demand` reads: `time,gpu,gpus` (one row per hour and GPU type).

`gpus` in an hour is the sum over that type's GPUs of the time they were in use, divided by one hour:
- mode `util`: in use in proportion to utilisation (a GPU at 40% for the hour counts 0.4);
- mode `busy`: a GPU counts fully while its utilisation is at least 5% (it holds a job), else 0.
A sample's interval is attributed to the hour in which the sample was taken. Gaps count nothing, and
an hour in which no GPU of a type was observed at all is left out rather than written as zero.
`gpu` is the catalog id matched from the model name (nvidia-smi `name`, DCGM `modelName`), else the
name itself, else the `default_gpu` given by the user.

A burst seen once (`mark_once`, the `once` column): per GPU type, over the hours from its first to its
last row (a missing hour is 0), the baseline of an hour is the median of that type's demand at the same
hour of the day over the sample's days; a burst is a run of hours at least 1 GPU above the baseline
lasting at least 24 h and ending before the sample ends. When a type has exactly one burst, its hours
carry `once` = demand - baseline (the one-off work, which `plan --demand` removes from the standing
demand); two or more bursts recur and are left as they are. The column is written only when some row
has one-off work.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpuplan.telemetry.samples import Samples

MODES = ("util", "busy")


@dataclass(frozen=True)
class DemandRow:
    time: str  # ISO hour start, UTC: 2024-03-04T13:00:00Z
    gpu: str
    gpus: float
    once: float = 0.0  # of `gpus`, one-off work (a burst seen once; `mark_once`)


ONCE_MIN_HOURS = 24  # a burst shorter than a day is ordinary variation, not a project
ONCE_MIN_GPUS = 1.0  # at least one whole GPU above the baseline


def mark_once(rows: list[DemandRow]) -> list[DemandRow]:
    """The rows with `once` set where a type's only burst is (module docstring)."""
    from datetime import datetime

    out = list(rows)
    by_type: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_type.setdefault(r.gpu, []).append(i)
    for idx in by_type.values():
        hours = np.array([datetime.fromisoformat(rows[i].time.replace("Z", "+00:00")).timestamp() // 3600
                          for i in idx], dtype=np.int64)
        h0 = int(hours.min())
        n = int(hours.max()) - h0 + 1
        if n <= ONCE_MIN_HOURS:  # too short to hold a burst that ends before the sample does
            continue
        series = np.zeros(n)
        series[hours - h0] = [rows[i].gpus for i in idx]
        hod = (np.arange(n) + h0) % 24
        base = np.array([float(np.median(series[hod == h])) for h in range(24)])[hod]
        above = series - base >= ONCE_MIN_GPUS
        runs = []
        t = 0
        while t < n:
            if above[t]:
                e = t
                while e < n and above[e]:
                    e += 1
                if e - t >= ONCE_MIN_HOURS and e < n:  # ends before the sample ends
                    runs.append((t, e))
                t = e
            else:
                t += 1
        if len(runs) != 1:
            continue
        a, b = runs[0]
        for k, i in zip((hours - h0).tolist(), idx, strict=True):
            if a <= k < b:
                out[i] = DemandRow(rows[i].time, rows[i].gpu, rows[i].gpus, round(float(series[k] - base[k]), 4))
    return out


def demand_curve(
    samples: Samples,
    mode: str = "util",
    gpu_type: Callable[[str | None], str] | None = None,
    default_gpu: str = "gpu",
) -> list[DemandRow]:
    import polars as pl

    if mode not in MODES:
        raise ValueError(f"demand mode must be one of {MODES}, got {mode!r}")
    hourly = samples.agg.hourly
    if hourly.height == 0:
        return []
    types = []
    for k in range(len(samples.registry.keys)):
        model = samples.registry.models.get(k)
        types.append(gpu_type(model) if gpu_type else (model or default_gpu))
    keys = hourly["key"].unique().sort()
    type_of = pl.DataFrame({"key": keys, "type": [types[int(k)] or default_gpu for k in keys.to_list()]})
    value = "util_s" if mode == "util" else "inuse_s"
    per = (
        hourly.join(type_of, on="key", how="left")
        .group_by("type", "hour")
        .agg((pl.col(value).sum() / 3600.0).alias("gpus"))
        .sort("hour", "type")
    )
    rows = []
    for typ, h, gpus in per.iter_rows():
        stamp = (
            np.datetime64(int(h) * 3600, "s").astype("datetime64[s]").item().strftime("%Y-%m-%dT%H:00:00Z")
        )
        rows.append(DemandRow(stamp, str(typ), round(float(gpus), 4)))
    return rows


def demand_csv(rows: list[DemandRow]) -> str:
    """`time,gpu,gpus`, and a `once` column when some row carries one-off work (`mark_once`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    once = any(r.once > 0 for r in rows)
    w.writerow(["time", "gpu", "gpus", *(["once"] if once else [])])
    for r in rows:
        w.writerow([r.time, r.gpu, f"{r.gpus:g}", *([f"{r.once:g}"] if once else [])])
    return buf.getvalue()

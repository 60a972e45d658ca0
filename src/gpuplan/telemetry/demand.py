"""The hourly demand curve `plan --demand` reads: `time,gpu,gpus` (one row per hour and GPU type).

`gpus` in an hour is the sum over that type's GPUs of the time they were in use, divided by one hour:
- mode `util`: in use in proportion to utilisation (a GPU at 40% for the hour counts 0.4);
- mode `busy`: a GPU counts fully while its utilisation is at least 5% (it holds a job), else 0.
A sample's interval is attributed to the hour in which the sample was taken. Gaps count nothing, and
an hour in which no GPU of a type was observed at all is left out rather than written as zero.
`gpu` is the catalog id matched from the model name (nvidia-smi `name`, DCGM `modelName`), else the
name itself, else the `default_gpu` given by the user.
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
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["time", "gpu", "gpus"])
    for r in rows:
        w.writerow([r.time, r.gpu, f"{r.gpus:g}"])
    return buf.getvalue()

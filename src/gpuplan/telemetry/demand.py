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

from gpuplan.telemetry.analyze import GAP_FACTOR, IDLE_BELOW, MIN_GAP_S
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
    frame = samples.frame
    if frame.height == 0:
        return []
    types = []
    for k in range(len(samples.registry.keys)):
        model = samples.registry.models.get(k)
        types.append(gpu_type(model) if gpu_type else (model or default_gpu))
    type_map = {k: (v or default_gpu) for k, v in enumerate(types)}
    key = frame["key"].to_numpy()
    t = frame["t"].to_numpy()
    u = frame["u"].to_numpy().astype(np.float64)
    n = len(key)
    same_next = np.r_[key[1:] == key[:-1], False]
    dt = np.r_[(t[1:] - t[:-1]) / 1000.0, 0.0]
    dt_pos = np.where(same_next & (dt > 0), dt, np.nan)
    med = pl.DataFrame({"k": key, "dt": dt_pos}).group_by("k").agg(pl.col("dt").median())
    median = np.full(len(samples.registry.keys), 60.0)
    mk = med["k"].to_numpy()
    mv = med["dt"].fill_null(60.0).fill_nan(60.0).to_numpy()
    median[mk] = mv
    med_s = median[key]
    gap = same_next & (dt > np.maximum(GAP_FACTOR * med_s, MIN_GAP_S))
    w = np.where(same_next & ~gap, dt, med_s)
    use = u if mode == "util" else (u >= IDLE_BELOW).astype(np.float64)
    hour = t // 3_600_000
    df = pl.DataFrame({"type": [type_map[int(k)] for k in np.unique(key)]}).with_columns(
        k=pl.Series(np.unique(key))
    )
    per = (
        pl.DataFrame({"k": key, "h": hour, "v": w * use})
        .join(df, on="k", how="left")
        .group_by("type", "h")
        .agg((pl.col("v").sum() / 3600.0).alias("gpus"))
        .sort("h", "type")
    )
    del n
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

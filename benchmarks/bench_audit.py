"""Audit speed and memory: 10 million nvidia-smi rows read and analysed, against plain pandas.

    .venv/bin/python benchmarks/bench_audit.py [--rows 10000000]

    .venv/bin/python benchmarks/bench_audit.py --rows 1000000 --repeat 1     # a quick look

Writes a temporary nvidia-smi CSV (timestamp, index, utilization.gpu [%], memory.used [MiB]; 16 GPUs,
one sample a second, busy / starved / idle / partial GPUs; 420 MB for 10 million rows), then runs each
side `--repeat` times (default 3), alternating, each run in a fresh process so that its peak memory
(ru_maxrss, imports included) is its own:
- gpuplan: `read_nvsmi` (streamed in 16 MB blocks: compiled strict parser, careful path for unusual
  blocks) + `finish` + `analyze` + the hourly demand curve;
- pandas: the same work in plain pandas: `read_csv` of the whole file, time parsing, unit stripping
  and checks (utilisation, memory.used's unit), clock jumps and duplicates, per-GPU median interval and
  gaps, time-weighted means and shares, busy/near-idle stretches and classes, hourly demand.
The two sides' answers are compared (per-GPU mean, shares, gap hours, class; total demand) and any
difference printed. Prints min and median seconds, peak RSS and the ratios. Goal: gpuplan < 15 s, at
least 3x faster than pandas, memory bounded (well below the file's in-memory size).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def generate(path: Path, rows: int, gpus: int = 16) -> None:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(3)
    k = np.arange(rows, dtype=np.int64)
    step = k // gpus
    g = (k % gpus).astype(np.int32)
    kind = g % 4
    util = np.select(
        [kind == 0, kind == 1, kind == 2],
        [90 + rng.integers(0, 10, rows), np.where(step % 70 < 30, 98, 1), rng.integers(0, 3, rows)],
        45 + rng.integers(0, 10, rows),
    )
    t0 = np.datetime64("2024-03-01T00:00:00", "ms")
    df = pl.DataFrame({"t": t0 + step * np.timedelta64(1000, "ms"), "g": g, "u": util, "m": 1000 + util})
    df.select(
        pl.col("t").dt.strftime("%Y/%m/%d %H:%M:%S%.3f").alias("timestamp"),
        pl.col("g").cast(pl.String).alias(" index"),
        (" " + pl.col("u").cast(pl.String) + " %").alias(" utilization.gpu [%]"),
        (" " + pl.col("m").cast(pl.String) + " MiB").alias(" memory.used [MiB]"),
    ).write_csv(path)


def run_gpuplan(path: str) -> dict:
    from gpuplan.telemetry import Collector, analyze, demand_curve
    from gpuplan.telemetry.nvsmi import read_nvsmi

    t = time.perf_counter()
    col = Collector()
    read_nvsmi(Path(path), col)
    samples = col.finish()
    t_read = time.perf_counter() - t
    res = analyze(samples)
    demand = demand_curve(samples, "util")
    total = time.perf_counter() - t
    return {
        "seconds": total,
        "read_s": t_read,
        "rows": res.rows,
        "bad": res.bad_rows,
        "fleet_mean": res.fleet.mean_util,
        "classes": res.fleet.classes,
        "per_gpu": {g.gpu: [g.mean_util, g.idle_share, g.busy_share, g.gap_hours, g.cls] for g in res.gpus},
        "demand_gpu_hours": sum(r.gpus for r in demand),
    }


def run_pandas(path: str) -> dict:
    """The same analysis in plain pandas: read_csv, parse and check the same columns, clock jumps and
    duplicates, per-GPU median interval and gaps, time-weighted sums, busy/near-idle stretches and
    classes, hourly demand (all vectorised; whole file in memory)."""
    import numpy as np
    import pandas as pd

    A = importlib.import_module("gpuplan.telemetry.analyze")  # the module (the package exports the function)
    from gpuplan.telemetry.stream import DEFAULT_INTERVAL_S

    t0 = time.perf_counter()
    df = pd.read_csv(path, skipinitialspace=True)
    df.columns = [c.strip() for c in df.columns]
    rows = len(df)
    ts = pd.to_datetime(df["timestamp"], format="%Y/%m/%d %H:%M:%S.%f", errors="coerce")
    util = pd.to_numeric(df["utilization.gpu [%]"].str.rstrip(" %"), errors="coerce")
    ok = ts.notna() & util.between(0, 100) & df["memory.used [MiB]"].str.endswith("MiB") & df["index"].notna()
    d = pd.DataFrame(
        {
            "g": df["index"][ok].astype("int64"),
            "t": ts[ok].astype("datetime64[ms]").astype("int64"),
            "u": (util[ok] / 100.0).astype("float32").astype("float64"),
        }
    )
    del df, ts, util
    bad = int(rows - ok.sum())
    # clock jumps (earlier than the GPU's latest timestamp so far), then duplicates
    prev_max = d.groupby("g")["t"].cummax().groupby(d["g"]).shift(1)
    jump = d["t"] < prev_max
    d = d[~jump].sort_values(["g", "t"], kind="stable")
    dup = d.duplicated(["g", "t"])
    d = d[~dup].reset_index(drop=True)
    bad += int(jump.sum() + dup.sum())
    g, u = d["g"], d["u"]
    dt = (d.groupby("g")["t"].shift(-1) - d["t"]) / 1000.0
    med = dt.groupby(g).transform("median").fillna(DEFAULT_INTERVAL_S)
    gap = dt > np.maximum(A.GAP_FACTOR * med, A.MIN_GAP_S)
    w = dt.where(dt.notna() & ~gap, med)
    busy, idle = u >= A.BUSY_FROM, u < A.IDLE_BELOW
    sums = pd.DataFrame(
        {"g": g, "w": w, "wu": w * u, "idle": w * idle, "busy": w * busy, "gap": (dt - med).where(gap, 0.0)}
    ).groupby("g").sum()
    # busy / near-idle stretches within stretches of data between gaps
    state = pd.Series(np.select([busy, u < A.NEAR_IDLE_BELOW], [1, 0], 2), index=d.index)
    seg = (g.ne(g.shift()) | gap.shift(fill_value=False)).cumsum()
    r = pd.DataFrame({"g": g, "s": state, "seg": seg, "w": w})[state != 2]
    same_seg = r["seg"].eq(r["seg"].shift())
    changed = r["s"].ne(r["s"].shift())
    r["run"] = (~same_seg | changed).cumsum()
    switches = (same_seg & changed).groupby(r["g"]).sum()
    runs = r.groupby("run").agg(g=("g", "first"), s=("s", "first"), len=("w", "sum"))
    med_run = runs.groupby("g")["len"].median() / 60.0
    longest = runs.groupby(["g", "s"])["len"].max().unstack(fill_value=0.0) / 3600.0
    per_gpu = {}
    for gi, row in sums.iterrows():
        mean = row["wu"] / row["w"]
        hours = row["w"] / 3600.0
        sw = float(switches.get(gi, 0))
        mr = float(med_run.get(gi, np.nan))
        lb = float(longest.loc[gi, 1]) if 1 in longest.columns and gi in longest.index else 0.0
        li = float(longest.loc[gi, 0]) if 0 in longest.columns and gi in longest.index else 0.0
        if mean >= A.CLASS_BUSY_MEAN:
            cls = "busy"
        elif mean < A.CLASS_IDLE_MEAN:
            cls = "idle"
        elif (
            mean < A.STARVED_MAX_MEAN
            and sw >= A.STARVED_MIN_SWITCHES
            and sw / hours >= A.STARVED_SWITCHES_PER_HOUR
            and mr <= A.STARVED_MAX_RUN_MIN
        ):
            cls = "starved"
        elif lb >= A.MIXED_MIN_RUN_H and li >= A.MIXED_MIN_RUN_H:
            cls = "mixed"
        else:
            cls = "partial"
        per_gpu[str(gi)] = [mean, row["idle"] / row["w"], row["busy"] / row["w"], row["gap"] / 3600.0, cls]
    demand = (w * u).groupby(d["t"] // 3_600_000).sum() / 3600.0
    fleet = float(sums["wu"].sum() / sums["w"].sum())
    total = time.perf_counter() - t0
    classes = {c: sum(1 for v in per_gpu.values() if v[4] == c) for c in A.CLASSES}
    return {
        "seconds": total,
        "rows": rows,
        "bad": bad,
        "fleet_mean": fleet,
        "classes": classes,
        "per_gpu": per_gpu,
        "demand_gpu_hours": float(demand.sum()),
    }


def child(which: str, path: str) -> None:
    import numpy  # noqa: F401  (import cost is not part of the measurement)

    if which == "gpuplan":
        import polars  # noqa: F401

        import gpuplan.telemetry  # noqa: F401
    else:
        import pandas  # noqa: F401

        import gpuplan.telemetry.analyze  # noqa: F401  (only its thresholds)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = run_gpuplan(path) if which == "gpuplan" else run_pandas(path)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["start_rss_mb"] = base / 1024
    print(json.dumps(out))


def _run_child(which: str, path: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", which, str(path)], capture_output=True, text=True, env=os.environ
    )
    if proc.returncode != 0:
        print(f"{which} failed:\n{proc.stderr[-3000:]}")
        sys.exit(1)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _agree(g: dict, p: dict) -> list[str]:
    """Differences between the two sides' answers (there should be none)."""
    diffs = []
    if g["rows"] != p["rows"] or g["bad"] != p["bad"]:
        diffs.append(f"rows/bad {g['rows']}/{g['bad']} vs {p['rows']}/{p['bad']}")
    if set(g["per_gpu"]) != set(p["per_gpu"]):
        diffs.append("GPU sets differ")
    for k, a in g["per_gpu"].items():
        b = p["per_gpu"].get(k)
        if b is None:
            continue
        if a[4] != b[4] or any(abs(x - y) > 1e-6 for x, y in zip(a[:4], b[:4], strict=True)):
            diffs.append(f"GPU {k}: {a} vs {b}")
    if abs(g["demand_gpu_hours"] - p["demand_gpu_hours"]) > 1e-3 * max(1.0, p["demand_gpu_hours"]):
        diffs.append(f"demand {g['demand_gpu_hours']} vs {p['demand_gpu_hours']}")
    return diffs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--child", nargs=2, metavar=("WHICH", "PATH"))
    ap.add_argument("--generate", metavar="PATH")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side (min and median reported)")
    ap.add_argument("--file", help="an existing nvidia-smi log to use instead of a generated one")
    args = ap.parse_args()
    if args.generate:
        generate(Path(args.generate), args.rows)
        return
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as d:
        path = Path(args.file) if args.file else Path(d) / "node1.csv"
        if not args.file:
            t = time.perf_counter()
            # generated in a child process so its memory does not count in the measured processes' peak RSS
            subprocess.run(
                [sys.executable, __file__, "--generate", str(path), "--rows", str(args.rows)], check=True
            )
            print(f"generated {args.rows:,} rows in {time.perf_counter() - t:.1f} s")
        size = path.stat().st_size / 1e6
        print(f"input: {path.name}, {size:,.0f} MB; each run in a fresh process, peak RSS = ru_maxrss")
        # Compiled kernels are cached on disk (numba cache=True); a first run ever also compiles them.
        warm = Path(d) / "warm.csv"
        generate(warm, 1000)
        t = time.perf_counter()
        _run_child("gpuplan", warm)
        print(f"warm-up (loads or compiles the cached kernels) on 1,000 rows: {time.perf_counter() - t:.1f} s")
        results: dict[str, list[dict]] = {"gpuplan": [], "pandas": []}
        for i in range(args.repeat):
            for which in ("gpuplan", "pandas"):
                r = _run_child(which, path)
                results[which].append(r)
                print(
                    f"run {i + 1} {which:8s} {r['seconds']:6.2f} s  peak RSS {r['peak_rss_mb']:6.0f} MB "
                    f"(after imports {r['start_rss_mb']:.0f} MB)  fleet mean {r['fleet_mean']:.6f}  "
                    f"bad rows {r['bad']}  classes {r['classes']}"
                )
        diffs = _agree(results["gpuplan"][0], results["pandas"][0])
        print("answers agree (per-GPU mean, shares, gaps, class; demand)" if not diffs else f"DISAGREE: {diffs}")
        g = sorted(r["seconds"] for r in results["gpuplan"])
        p = sorted(r["seconds"] for r in results["pandas"])
        gm = max(r["peak_rss_mb"] for r in results["gpuplan"])
        pm = max(r["peak_rss_mb"] for r in results["pandas"])
        print(
            f"gpuplan: min {g[0]:.2f} s, median {statistics.median(g):.2f} s, peak RSS {gm:.0f} MB; "
            f"pandas: min {p[0]:.2f} s, median {statistics.median(p):.2f} s, peak RSS {pm:.0f} MB"
        )
        print(
            f"speed-up vs pandas: {p[0] / g[0]:.2f}x (min/min), "
            f"{statistics.median(p) / statistics.median(g):.2f}x (median/median), goal >= 3x; "
            f"peak RSS pandas/gpuplan {pm / gm:.1f}x; gpuplan under 15 s: {g[-1] < 15}; file {size:.0f} MB"
        )


if __name__ == "__main__":
    main()

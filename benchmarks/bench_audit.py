"""Audit speed and memory: 10 million nvidia-smi rows read and analysed, against plain pandas.

    .venv/bin/python benchmarks/bench_audit.py [--rows 10000000]

Writes a temporary nvidia-smi CSV (timestamp, index, utilization.gpu [%], memory.used [MiB]; 16 GPUs,
one sample a second, busy / starved / idle / partial GPUs), then runs, each in a fresh process so peak
memory (ru_maxrss) is its own:
- gpuplan: `read_nvsmi` (block-wise, vectorised, every bad row classified) + `analyze` (time-weighted
  means, gaps, shares, classes with run detection);
- pandas: `read_csv` + `to_datetime` + unit stripping + sort + per-GPU diff + groupby sums for the mean
  and the idle/busy shares (less work: no bad-data checks, no gaps, no classes).
Prints seconds, peak RSS and the ratio. Goal: gpuplan < 15 s and >= 3x faster than pandas.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
    from gpuplan.telemetry import Collector, analyze
    from gpuplan.telemetry.nvsmi import read_nvsmi

    t = time.perf_counter()
    col = Collector()
    read_nvsmi(Path(path), col)
    samples = col.finish()
    t_read = time.perf_counter() - t
    res = analyze(samples)
    total = time.perf_counter() - t
    return {
        "seconds": total,
        "read_s": t_read,
        "rows": res.rows,
        "bad": res.bad_rows,
        "fleet_mean": res.fleet.mean_util,
        "classes": res.fleet.classes,
    }


def run_pandas(path: str) -> dict:
    import numpy as np
    import pandas as pd

    t = time.perf_counter()
    df = pd.read_csv(path, skipinitialspace=True)
    df.columns = [c.strip() for c in df.columns]
    df["t"] = pd.to_datetime(df["timestamp"], format="%Y/%m/%d %H:%M:%S.%f")
    df["u"] = pd.to_numeric(df["utilization.gpu [%]"].str.rstrip(" %"), errors="coerce") / 100.0
    df = df.dropna(subset=["u"]).sort_values(["index", "t"], kind="stable")
    dt = df.groupby("index")["t"].diff().shift(-1).dt.total_seconds()
    med = dt.groupby(df["index"]).transform("median")
    df["w"] = dt.fillna(med)
    df["wu"] = df["w"] * df["u"]
    df["idle"] = df["w"] * (df["u"] < 0.05)
    df["busy"] = df["w"] * (df["u"] >= 0.7)
    agg = df.groupby("index")[["w", "wu", "idle", "busy"]].sum()
    mean = float(agg["wu"].sum() / agg["w"].sum())
    total = time.perf_counter() - t
    del np
    return {"seconds": total, "rows": len(df), "fleet_mean": mean}


def child(which: str, path: str) -> None:
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if which == "gpuplan":
        import polars  # noqa: F401  (import cost is not part of the measurement)

        out = run_gpuplan(path)
    else:
        import pandas  # noqa: F401

        out = run_pandas(path)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["start_rss_mb"] = base / 1024
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--child", nargs=2, metavar=("WHICH", "PATH"))
    ap.add_argument("--generate", metavar="PATH")
    args = ap.parse_args()
    if args.generate:
        generate(Path(args.generate), args.rows)
        return
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "node1.csv"
        t = time.perf_counter()
        # generate in a child process so its memory does not count in the measured processes' peak RSS
        subprocess.run([sys.executable, __file__, "--generate", str(path), "--rows", str(args.rows)], check=True)
        size = path.stat().st_size / 1e6
        print(f"generated {args.rows:,} rows ({size:,.0f} MB) in {time.perf_counter() - t:.1f} s")
        results = {}
        for which in ("gpuplan", "pandas"):
            proc = subprocess.run(
                [sys.executable, __file__, "--child", which, str(path)],
                capture_output=True,
                text=True,
                env=os.environ,
            )
            if proc.returncode != 0:
                print(f"{which} failed:\n{proc.stderr[-3000:]}")
                sys.exit(1)
            results[which] = json.loads(proc.stdout.strip().splitlines()[-1])
            r = results[which]
            print(
                f"{which:8s} {r['seconds']:6.2f} s  peak RSS {r['peak_rss_mb']:7.0f} MB "
                f"(at start {r['start_rss_mb']:.0f} MB)  fleet mean {r['fleet_mean']:.4f}"
                + (f"  read {r['read_s']:.2f} s, bad rows {r['bad']}, classes {r['classes']}" if "read_s" in r else "")
            )
        g, p = results["gpuplan"], results["pandas"]
        print(
            f"speed-up vs pandas: {p['seconds'] / g['seconds']:.2f}x (goal >= 3x); "
            f"memory ratio pandas/gpuplan: {p['peak_rss_mb'] / g['peak_rss_mb']:.2f}x; "
            f"gpuplan under 15 s: {g['seconds'] < 15}"
        )


if __name__ == "__main__":
    main()

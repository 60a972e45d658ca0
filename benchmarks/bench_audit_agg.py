"""`gpuplan audit` against a polars script that only aggregates: whole processes, median of N.

    .venv/bin/python benchmarks/bench_audit_agg.py [--rows 1000000,10000000] [--repeat 5]

The baseline (`--child polars-agg FILE`, below) is the least a polars user would write for the
audit's headline numbers, nothing more: a lazy scan of the three needed columns (timestamp, index,
utilization.gpu), the streaming engine, the time parsed and the unit stripped, each sample weighted
by the interval to the GPU's next sample, and per GPU the mean utilisation and the busy and idle
hours. It does not check bad rows, clock jumps, duplicates, gaps, stretches, classes or the hourly
demand; gpuplan does all of that too, so this baseline is a floor, not an equal.

gpuplan side: `gpuplan audit FILE -o json`, the command a user runs (python -m gpuplan, the
worktree's own interpreter). The log is the one benchmarks/bench_audit.py writes (16 GPUs, one
sample a second). Runs alternate (A B A B ...) after one warm-up each; wall and CPU (user + system)
seconds of each child (rusage), and the ratio of the medians. The answers are compared (per-GPU
mean to 1e-4, busy and idle hours to 2e-3 h: the JSON's 4 decimals). Issue 23's goals: at 1 M rows
gpuplan within 1.2x of this baseline; at 10 M rows ahead of it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IDLE_BELOW = 0.05  # gpuplan.telemetry.rules (checked equal in main)
BUSY_FROM = 0.70


def polars_agg(path: str) -> dict[str, list[float]]:
    """Per GPU: [mean utilisation, busy hours, idle hours], each sample weighted by the interval to
    the GPU's next one (the last sample of each GPU has no interval and weighs nothing)."""
    import polars as pl

    lf = pl.scan_csv(path, has_header=True, schema_overrides={" index": pl.Int32}).select(
        t=pl.col("timestamp").str.strptime(pl.Datetime("ms"), "%Y/%m/%d %H:%M:%S%.f"),
        g=pl.col(" index"),
        u=pl.col(" utilization.gpu [%]").str.strip_chars().str.strip_chars_end(" %").cast(pl.Float64) / 100.0,
    )
    w = (pl.col("t").shift(-1).over("g") - pl.col("t")).dt.total_milliseconds() / 1000.0
    out = (
        lf.sort("g", "t")
        .with_columns(w=w.fill_null(0.0))
        .group_by("g")
        .agg(
            mean=(pl.col("u") * pl.col("w")).sum() / pl.col("w").sum(),
            busy_h=pl.col("w").filter(pl.col("u") >= BUSY_FROM - 1e-6).sum() / 3600.0,
            idle_h=pl.col("w").filter(pl.col("u") < IDLE_BELOW - 1e-6).sum() / 3600.0,
        )
        .sort("g")
        .collect(engine="streaming")
    )
    return {str(g): [m, b, i] for g, m, b, i in out.iter_rows()}


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one child process (from its own rusage), and its stdout."""
    import resource

    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr[-2000:]}")
    return wall, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, r.stdout


def gpuplan_answers(report: str) -> dict[str, list[float]]:
    doc = json.loads(report)
    out = {}
    for g in doc["gpus"]:
        hours = g["observed_hours"]
        out[str(g["gpu"])] = [g["mean_util"], g["busy_share"] * hours, g["idle_share"] * hours]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--rows", default="1000000,10000000")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(polars_agg(args.child[1])))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_audit import generate

    from gpuplan.telemetry import rules

    assert (rules.IDLE_BELOW, rules.BUSY_FROM) == (IDLE_BELOW, BUSY_FROM)
    ok = True
    with tempfile.TemporaryDirectory() as d:
        for rows in (int(x) for x in args.rows.split(",")):
            path = Path(d) / f"nvsmi-{rows}.csv"
            generate(path, rows)
            sides = {
                "gpuplan": [sys.executable, "-m", "gpuplan", "audit", str(path), "-o", "json"],
                "polars-agg": [sys.executable, __file__, "--child", "polars-agg", str(path)],
            }
            for cmd in sides.values():
                timed(cmd)  # warm-up: the bytecode caches, the file in the page cache
            runs: dict[str, list[tuple[float, float, str]]] = {k: [] for k in sides}
            for _ in range(args.repeat):
                for k, cmd in sides.items():
                    runs[k].append(timed(cmd))
            med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for k, v in runs.items()}
            g, p = med["gpuplan"], med["polars-agg"]
            print(f"{rows:>11,} rows ({path.stat().st_size / 1e6:,.0f} MB), median of {args.repeat}: "
                  f"gpuplan {g[0]:.2f} s wall / {g[1]:.2f} s CPU, polars-agg {p[0]:.2f} s / {p[1]:.2f} s; "
                  f"ratio gpuplan/polars-agg {g[0] / p[0]:.2f}x wall, {g[1] / p[1]:.2f}x CPU", flush=True)
            a, b = gpuplan_answers(runs["gpuplan"][-1][2]), json.loads(runs["polars-agg"][-1][2])
            for gpu, want in b.items():  # gpuplan's JSON has 4 decimals: shares x hours to about 1e-3 h
                got = a.get(gpu)
                tol = (1e-4, 2e-3, 2e-3)
                if got is None or any(abs(x - y) > t for x, y, t in zip(got, want, tol, strict=True)):
                    print(f"  answers differ on GPU {gpu}: gpuplan {got}, polars-agg {want}")
                    ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""`gpuplan audit` speed and memory on 10 million nvidia-smi rows, against pandas and a tuned polars.

    .venv/bin/python benchmarks/bench_audit.py [--rows 10000000] [--repeat 3]

    .venv/bin/python benchmarks/bench_audit.py --rows 1000000 --repeat 1     # a quick look

Writes a temporary nvidia-smi CSV (timestamp, index, utilization.gpu [%], memory.used [MiB]; 16 GPUs,
one sample a second, busy / starved / idle / partial GPUs; 420 MB for 10 million rows), then runs each
side `--repeat` times (default 3), alternating, each run a fresh process.

Whole processes first, as a user runs them (wall seconds, CPU seconds = user + system, peak RSS =
ru_maxrss of that process from wait4; interpreter start, imports and exit included):
- gpuplan: `gpuplan audit FILE -o json --price 2/gpu-hour --demand-out DEMAND.csv`, the command a
  user runs: read (streamed in 16 MB blocks: compiled strict parser, careful path for unusual blocks),
  analysis, money, hourly demand curve written, the JSON report printed;
- pandas: `bench_audit.py --child pandas FILE`: the same work in plain pandas: `read_csv` of the whole
  file, time parsing, unit stripping and checks (utilisation, memory.used's unit), clock jumps and
  duplicates, per-GPU median interval and gaps, time-weighted means and shares, busy/near-idle
  stretches and classes, hourly demand;
- polars: `bench_audit.py --child polars FILE`: the same work written as a polars user would tune it:
  a lazy scan of the needed columns only (streaming engine: the text columns are never held whole),
  typed at read where the type is plain, vectorised time parsing and unit stripping, then one
  multi-threaded query per result (per-GPU sums, run-length stretches via rle_id, hourly demand)
  collected together so the shared frame is computed once.
The baseline processes import only numpy and pandas or polars (the thresholds are copied here, and
checked against gpuplan's own). Then in-process figures (after imports, library calls only; gpuplan:
`read_nvsmi` + `finish` + `analyze` + `demand_curve`), labelled as such.

All sides' answers are compared: per-GPU mean, idle and busy shares, gap hours and class, rows and bad
rows, total demand (the library and the two baselines to 1e-6; the command's JSON, rounded to 4
digits, to 1e-4). Any difference is printed.

Goals (issue 15): gpuplan whole process at least 5x faster than pandas and ahead of (faster than) the
tuned polars baseline, median against median; memory bounded (well below the file's in-memory size).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The audit's rules, copied so that the baseline processes import nothing of gpuplan (their whole-process
# time is theirs alone); `_check_rules` holds them to gpuplan.telemetry.rules before anything is timed.
RULES = {
    "IDLE_BELOW": 0.05,
    "BUSY_FROM": 0.70,
    "NEAR_IDLE_BELOW": 0.20,
    "GAP_FACTOR": 3.0,
    "MIN_GAP_S": 30.0,
    "CLASS_BUSY_MEAN": 0.80,
    "CLASS_IDLE_MEAN": 0.05,
    "STARVED_MAX_MEAN": 0.70,
    "STARVED_MIN_SWITCHES": 6,
    "STARVED_SWITCHES_PER_HOUR": 2.0,
    "STARVED_MAX_RUN_MIN": 10.0,
    "MIXED_MIN_RUN_H": 0.5,
}
CLASSES = ("busy", "idle", "starved", "mixed", "partial")
DEFAULT_INTERVAL_S = 60.0  # a GPU with a single sample
# Utilisation is held as float32 (70 % reads 0.6999999881): compare with cuts a hair below the
# thresholds, as gpuplan does, so that exactly 70 % is busy.
_TOL = 1e-6
PRICE = "2/gpu-hour"
ENGINE = os.environ.get("BENCH_POLARS_ENGINE", "streaming")


def _check_rules() -> None:
    from gpuplan.telemetry import rules
    from gpuplan.telemetry.stream import DEFAULT_INTERVAL_S as default_interval

    theirs = {k: getattr(rules, k) for k in RULES}
    if theirs != RULES or tuple(rules.CLASSES) != CLASSES or default_interval != DEFAULT_INTERVAL_S:
        sys.exit(f"bench_audit.RULES differ from gpuplan.telemetry.rules: {theirs}; update the copy")


def _classify(mean: float, hours: float, switches: float, med_run_min: float, busy_h: float, idle_h: float) -> str:
    """The class rules of docs/audit.md (first that holds wins), shared by both baselines."""
    r = RULES
    if mean >= r["CLASS_BUSY_MEAN"]:
        return "busy"
    if mean < r["CLASS_IDLE_MEAN"]:
        return "idle"
    if (
        mean < r["STARVED_MAX_MEAN"]
        and switches >= r["STARVED_MIN_SWITCHES"]
        and hours > 0
        and switches / hours >= r["STARVED_SWITCHES_PER_HOUR"]
        and med_run_min == med_run_min  # not NaN
        and med_run_min <= r["STARVED_MAX_RUN_MIN"]
    ):
        return "starved"
    if busy_h >= r["MIXED_MIN_RUN_H"] and idle_h >= r["MIXED_MIN_RUN_H"]:
        return "mixed"
    return "partial"


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


# ---------------------------------------------------------------- the three sides, in process


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

    R = RULES
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
    gap = dt > np.maximum(R["GAP_FACTOR"] * med, R["MIN_GAP_S"])
    w = dt.where(dt.notna() & ~gap, med)
    busy, idle = u >= R["BUSY_FROM"] - _TOL, u < R["IDLE_BELOW"] - _TOL
    sums = (
        pd.DataFrame(
            {"g": g, "w": w, "wu": w * u, "idle": w * idle, "busy": w * busy, "gap": (dt - med).where(gap, 0.0)}
        )
        .groupby("g")
        .sum()
    )
    # busy / near-idle stretches within stretches of data between gaps
    state = pd.Series(np.select([busy, u < R["NEAR_IDLE_BELOW"] - _TOL], [1, 0], 2), index=d.index)
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
        lb = float(longest.loc[gi, 1]) if 1 in longest.columns and gi in longest.index else 0.0
        li = float(longest.loc[gi, 0]) if 0 in longest.columns and gi in longest.index else 0.0
        cls = _classify(mean, row["w"] / 3600.0, float(switches.get(gi, 0)), float(med_run.get(gi, np.nan)), lb, li)
        per_gpu[str(gi)] = [mean, row["idle"] / row["w"], row["busy"] / row["w"], row["gap"] / 3600.0, cls]
    demand = (w * u).groupby(d["t"] // 3_600_000).sum() / 3600.0
    fleet = float(sums["wu"].sum() / sums["w"].sum())
    total = time.perf_counter() - t0
    classes = {c: sum(1 for v in per_gpu.values() if v[4] == c) for c in CLASSES}
    return {
        "seconds": total,
        "rows": rows,
        "bad": bad,
        "fleet_mean": fleet,
        "classes": classes,
        "per_gpu": per_gpu,
        "demand_gpu_hours": float(demand.sum()),
    }


def run_polars(path: str) -> dict:
    """The same analysis as a polars user would tune it.

    Read: one lazy scan of the four needed columns, the GPU index typed at read (a bad one reads as
    null and is counted bad), the text columns parsed and checked in the same query (strptime with
    the exact format, unit stripped, memory's unit checked); what is kept is (g i32, t i64 ms, u f64,
    ok). Then: the rows of each GPU made contiguous in file order (partition_by + concat, cheaper than
    a stable sort), clock jumps (earlier than the GPU's latest time so far: one running max over the
    key (GPU, time), no window), duplicates, intervals, the median interval (a window over the GPU)
    and gaps; per-GPU sums, the busy/near-idle stretches (rle_id over (stretch of data, state)) and
    hourly demand as three lazy queries collected together (multi-threaded). The read runs on the
    streaming engine (the text columns are never held whole: on 10M rows 0.78 GB peak against 1.4 GB
    with BENCH_POLARS_ENGINE=in-memory, and no slower)."""
    import polars as pl

    R = RULES
    t0 = time.perf_counter()
    names = {c.strip(): c for c in pl.scan_csv(path, infer_schema=False).collect_schema().names()}
    c_ts, c_idx = names["timestamp"], names["index"]
    c_u, c_mem = names["utilization.gpu [%]"], names["memory.used [MiB]"]
    ok = pl.col("t").is_not_null() & pl.col("pct").is_between(0, 100) & pl.col("mem_ok") & pl.col("g").is_not_null()
    parsed = (
        pl.scan_csv(
            path,
            schema_overrides={c_ts: pl.String, c_idx: pl.Int32, c_u: pl.String, c_mem: pl.String},
            ignore_errors=True,  # a non-integer index reads as null: a bad row
        )
        .select(
            pl.col(c_idx).alias("g"),
            pl.col(c_ts)
            .str.strptime(pl.Datetime("ms"), "%Y/%m/%d %H:%M:%S%.3f", strict=False)
            .dt.epoch("ms")
            .alias("t"),
            pl.col(c_u).str.strip_chars(" %").cast(pl.Float64, strict=False).alias("pct"),
            pl.col(c_mem).str.ends_with("MiB").alias("mem_ok"),
        )
        .select("g", "t", (pl.col("pct") / 100.0).cast(pl.Float32).cast(pl.Float64).alias("u"), ok.alias("ok"))
        .collect(engine=ENGINE)
    )
    rows = parsed.height
    d = parsed.filter("ok").drop("ok")
    del parsed
    # one frame per GPU, file order kept (cheaper than a stable sort), as one frame again
    d = pl.concat(d.partition_by("g", maintain_order=True)) if d.height else d

    g, t, u = pl.col("g"), pl.col("t"), pl.col("u")
    key = g.cast(pl.Int64) * (1 << 44) + t  # GPUs are contiguous: a running max of (g, t) is per GPU
    d = (
        d.lazy()
        .filter(key >= key.cum_max().shift(1).fill_null(key))  # clock jumps out
        .filter((t != t.shift(1)) | (g != g.shift(1)) | g.shift(1).is_null())  # duplicates out
        .with_columns(dt=pl.when(g.shift(-1) == g).then((t.shift(-1) - t) / 1000.0))
        .with_columns(med=pl.col("dt").median().over("g").fill_null(DEFAULT_INTERVAL_S))
        .with_columns(gap=pl.col("dt") > pl.max_horizontal(R["GAP_FACTOR"] * pl.col("med"), R["MIN_GAP_S"]))
        .with_columns(
            w=pl.when(pl.col("gap").not_()).then(pl.col("dt")).otherwise(pl.col("med")),
            state=pl.when(u >= R["BUSY_FROM"] - _TOL)
            .then(1)
            .when(u < R["NEAR_IDLE_BELOW"] - _TOL)
            .then(0)
            .otherwise(2)
            .cast(pl.Int8),
        )
        .collect()
        .lazy()
    )
    w = pl.col("w")
    sums_q = d.group_by("g").agg(
        pl.len().alias("n"),
        w.sum().alias("w"),
        (w * u).sum().alias("wu"),
        w.filter(u < R["IDLE_BELOW"] - _TOL).sum().alias("idle"),
        w.filter(u >= R["BUSY_FROM"] - _TOL).sum().alias("busy"),
        (pl.col("dt") - pl.col("med")).filter(pl.col("gap")).sum().alias("gap"),
    )
    # stretches: within a stretch of data between gaps, consecutive busy (1) / near-idle (0) samples,
    # other samples skipped; a switch is a change of state within a stretch of data
    seg = ((g != g.shift(1)) | g.shift(1).is_null() | pl.col("gap").shift(1).fill_null(False)).cum_sum()
    runs_q = (
        d.with_columns(seg=seg)
        .filter(pl.col("state") != 2)
        .with_columns(run=pl.struct("seg", "state").rle_id())
        .group_by("run")
        .agg(g.first(), pl.col("seg").first(), pl.col("state").first(), w.sum().alias("len"))
        .sort("run")
        .with_columns(switch=(pl.col("seg") == pl.col("seg").shift(1)))
        .group_by("g")
        .agg(
            pl.col("switch").sum().alias("switches"),
            (pl.col("len").median() / 60.0).alias("med_run"),
            (pl.col("len").filter(pl.col("state") == 1).max().fill_null(0.0) / 3600.0).alias("busy_h"),
            (pl.col("len").filter(pl.col("state") == 0).max().fill_null(0.0) / 3600.0).alias("idle_h"),
        )
    )
    demand_q = d.group_by(t // 3_600_000).agg(((w * u).sum() / 3600.0).alias("gpus"))
    sums, runs, demand = pl.collect_all([sums_q, runs_q, demand_q])
    per_gpu = {}
    stretches = {r["g"]: r for r in runs.iter_rows(named=True)}
    for r in sums.sort("g").iter_rows(named=True):
        mean = r["wu"] / r["w"]
        st = stretches.get(r["g"], {"switches": 0, "med_run": float("nan"), "busy_h": 0.0, "idle_h": 0.0})
        cls = _classify(mean, r["w"] / 3600.0, st["switches"], st["med_run"], st["busy_h"], st["idle_h"])
        per_gpu[str(r["g"])] = [mean, r["idle"] / r["w"], r["busy"] / r["w"], r["gap"] / 3600.0, cls]
    fleet = float(sums["wu"].sum() / sums["w"].sum())
    bad = int(rows - sums["n"].sum())  # unparsable, clock jumps and duplicates
    total = time.perf_counter() - t0
    return {
        "seconds": total,
        "rows": int(rows),
        "bad": int(bad),
        "fleet_mean": fleet,
        "classes": {c: sum(1 for v in per_gpu.values() if v[4] == c) for c in CLASSES},
        "per_gpu": per_gpu,
        "demand_gpu_hours": float(demand["gpus"].sum()),
    }


def child(which: str, path: str) -> None:
    """One side in this process: prints its answers, in-process seconds (after imports) and peak RSS."""
    import numpy  # noqa: F401  (import cost is not part of the in-process figure)

    if which == "gpuplan":
        import polars  # noqa: F401

        import gpuplan.telemetry  # noqa: F401
    elif which == "pandas":
        import pandas  # noqa: F401
    else:
        import polars  # noqa: F401
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fn = {"gpuplan": run_gpuplan, "pandas": run_pandas, "polars": run_polars}[which]
    out = fn(path)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["start_rss_mb"] = base / 1024
    print(json.dumps(out))


# ---------------------------------------------------------------- measuring whole processes


def _gpuplan_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("gpuplan")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "gpuplan"]


def _whole(argv: list[str], cwd: str) -> tuple[dict, str]:
    """Run argv as its own process: (wall s, CPU s = user + system, peak RSS MB of that process), stdout."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd, env=os.environ)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            print(f"{' '.join(argv)} failed ({proc.returncode}):\n{err.read()[-3000:]}")
            sys.exit(1)
        stdout = out.read()
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss / 1024}, stdout


def _cli_answers(report: str, demand_csv: Path) -> dict:
    """The answers in `gpuplan audit -o json` (rounded to 4 digits) and its demand CSV."""
    doc = json.loads(report)
    with demand_csv.open(newline="") as fh:
        demand = sum(float(r["gpus"]) for r in csv.DictReader(fh))
    return {
        "rows": doc["input"]["rows"],
        "bad": doc["input"]["bad_rows"],
        "fleet_mean": doc["fleet"]["mean_util"],
        "classes": doc["fleet"]["classes"],
        "per_gpu": {
            g["gpu"]: [g["mean_util"], g["idle_share"], g["busy_share"], g["gap_hours"], g["class"]]
            for g in doc["gpus"]
        },
        "demand_gpu_hours": demand,
    }


def _agree(g: dict, p: dict, tol: float = 1e-6) -> list[str]:
    """Differences between two sides' answers (there should be none)."""
    diffs = []
    if g["rows"] != p["rows"] or g["bad"] != p["bad"]:
        diffs.append(f"rows/bad {g['rows']}/{g['bad']} vs {p['rows']}/{p['bad']}")
    if set(g["per_gpu"]) != set(p["per_gpu"]):
        diffs.append("GPU sets differ")
    for k, a in g["per_gpu"].items():
        b = p["per_gpu"].get(k)
        if b is None:
            continue
        if a[4] != b[4] or any(abs(x - y) > tol for x, y in zip(a[:4], b[:4], strict=True)):
            diffs.append(f"GPU {k}: {a} vs {b}")
    if abs(g["demand_gpu_hours"] - p["demand_gpu_hours"]) > 1e-3 * max(1.0, p["demand_gpu_hours"]):
        diffs.append(f"demand {g['demand_gpu_hours']} vs {p['demand_gpu_hours']}")
    return diffs


def _agree_all(sides: dict[str, dict]) -> list[str]:
    """Each side against the library's answers: baselines to 1e-6, the command's rounded JSON to 1e-4."""
    ref = sides["gpuplan"]
    out = []
    for name, other in sides.items():
        if name != "gpuplan":
            tol = 1e-4 if name == "gpuplan audit" else 1e-6
            out += [f"gpuplan vs {name}: {d}" for d in _agree(ref, other, tol)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--child", nargs=2, metavar=("WHICH", "PATH"))
    ap.add_argument("--generate", metavar="PATH")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side (median reported)")
    ap.add_argument("--file", help="an existing nvidia-smi log to use instead of a generated one")
    args = ap.parse_args()
    if args.generate:
        generate(Path(args.generate), args.rows)
        return
    if args.child:
        child(*args.child)
        return
    _check_rules()
    with tempfile.TemporaryDirectory() as d:
        path = Path(args.file).resolve() if args.file else Path(d) / "node1.csv"
        if not args.file:
            t = time.perf_counter()
            # generated in a child process so its memory does not count in the measured processes' peak RSS
            subprocess.run([sys.executable, __file__, "--generate", str(path), "--rows", str(args.rows)], check=True)
            print(f"generated {args.rows:,} rows in {time.perf_counter() - t:.1f} s")
        size = path.stat().st_size / 1e6
        demand_csv = Path(d) / "demand.csv"
        sides = {
            "gpuplan audit": [
                *_gpuplan_cmd(),
                "audit",
                str(path),
                "-o",
                "json",
                "--price",
                PRICE,
                "--demand-out",
                str(demand_csv),
            ],
            "pandas": [sys.executable, __file__, "--child", "pandas", str(path)],
            "polars": [sys.executable, __file__, "--child", "polars", str(path)],
        }
        print(
            f"input: {path.name}, {size:,.0f} MB, {os.cpu_count()} CPUs, load average "
            f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} (1, 5, 15 min)"
        )
        warm = Path(d) / "warm.csv"  # the first run reads the package's files from disk
        generate(warm, 1000)
        t = time.perf_counter()
        _whole([*_gpuplan_cmd(), "audit", str(warm), "-o", "json"], d)
        print(f"warm-up on 1,000 rows: {time.perf_counter() - t:.1f} s")

        whole: dict[str, list[dict]] = {k: [] for k in sides}
        answers: dict[str, dict] = {}
        inproc: dict[str, list[dict]] = {"gpuplan": [], "pandas": [], "polars": []}
        for _ in range(args.repeat):
            for name, argv in sides.items():
                fig, stdout = _whole(argv, d)
                whole[name].append(fig)
                if name == "gpuplan audit":
                    answers.setdefault(name, _cli_answers(stdout, demand_csv))
                else:
                    r = json.loads(stdout.strip().splitlines()[-1])
                    inproc[name].append(r)
                    answers.setdefault(name, r)
            fig, stdout = _whole([sys.executable, __file__, "--child", "gpuplan", str(path)], d)
            r = json.loads(stdout.strip().splitlines()[-1])
            inproc["gpuplan"].append(r)
            answers.setdefault("gpuplan", r)

        med = {k: {m: statistics.median(f[m] for f in v) for m in ("wall", "cpu")} for k, v in whole.items()}
        peak = {k: max(f["rss"] for f in v) for k, v in whole.items()}
        print(
            f"\nWHOLE PROCESS (as a user runs it), median of {args.repeat}, each run a fresh process, "
            f"sides alternating; CPU = user + system; peak RSS = ru_maxrss:"
        )
        for k, v in whole.items():
            walls = ", ".join(f"{f['wall']:.2f}" for f in v)
            print(
                f"  {k:14s} wall {med[k]['wall']:6.2f} s  CPU {med[k]['cpu']:6.2f} s  peak RSS {peak[k]:6.0f} MB"
                f"   (runs: {walls} s)"
            )
        g = med["gpuplan audit"]
        for base, goal in (("pandas", ">= 5x"), ("polars", "> 1x")):
            b = med[base]
            print(
                f"  gpuplan audit vs {base}: {b['wall'] / g['wall']:.2f}x faster (wall), "
                f"{b['cpu'] / g['cpu']:.2f}x less CPU, {peak[base] / peak['gpuplan audit']:.1f}x less memory; "
                f"goal {goal} wall: {'met' if b['wall'] / g['wall'] >= (5 if base == 'pandas' else 1) else 'MISSED'}"
            )
        print(f"  command: gpuplan {' '.join(sides['gpuplan audit'][len(_gpuplan_cmd()) :])}")

        print(
            "\nIN-PROCESS (library calls only, after imports; median of "
            f"{args.repeat}; peak RSS of that process, imports included):"
        )
        ms = {k: statistics.median(r["seconds"] for r in v) for k, v in inproc.items()}
        for k, v in inproc.items():
            extra = f", read {statistics.median(r['read_s'] for r in v):.2f} s" if k == "gpuplan" else ""
            print(
                f"  {k:8s} {ms[k]:6.2f} s{extra}  peak RSS {max(r['peak_rss_mb'] for r in v):6.0f} MB "
                f"(after imports {v[0]['start_rss_mb']:.0f} MB)  fleet mean {v[0]['fleet_mean']:.6f}  "
                f"classes {v[0]['classes']}"
            )
        print(
            f"  in-process gpuplan vs pandas {ms['pandas'] / ms['gpuplan']:.2f}x, "
            f"vs polars {ms['polars'] / ms['gpuplan']:.2f}x"
        )

        diffs = _agree_all(answers)
        print(
            "\nanswers agree: gpuplan (library), gpuplan audit (JSON, 4 digits), pandas, polars "
            "(per-GPU mean, shares, gaps, class; rows, bad rows; demand)"
            if not diffs
            else f"\nDISAGREE: {diffs}"
        )


if __name__ == "__main__":
    main()

"""`gpuplan plan --demand` on a year of hourly demand for 10 GPU types, whole process.

    .venv/bin/python benchmarks/bench_plan_demand.py [--repeat 5]

Writes a temporary scenario (a bare-metal and a container offer and a workload for each of 10 GPU
types) and a demand CSV of a year of hours x 10 types (87,600 rows, the `time,gpu,gpus` format that
`gpuplan audit --demand-out` writes), then times, each run a fresh process, alternating:
- gpuplan: the `gpuplan plan SCENARIO --demand FILE -o json` command as installed (polars parse);
- baseline: the same command with the demand file parsed the previous way, row by row with the csv
  module and datetime.fromisoformat (`baseline_from_csv` below, the reader before the polars one),
  swapped in by a small wrapper that then runs the same CLI entry point.
Both outputs must be equal (the plan does not depend on how the file was parsed). Prints the medians
and min of --repeat runs (default 5), whole process first, then the floor (the same command on one
day of demand), then the parse alone in this process. Both commands run with compiled bytecode (in
the temporary folder), as an installed package runs. Goal: whole process under 0.3 s.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GPUS = ["h100-sxm", "h200-sxm", "a100-80g", "a100-40g", "l40s", "l4", "rtx-4090", "ascend-910b", "mi300x", "b200"]
HOURS = 365 * 24


def write_inputs(d: Path) -> tuple[Path, Path]:
    import numpy as np

    offers, workloads = [], []
    for g in GPUS:
        offers.append(f"  - {{id: bm-{g}, gpu: {g}, mode: bare-metal, price: {{amount: 1.5, per: gpu-hour}}}}")
        offers.append(f"  - {{id: ct-{g}, gpu: {g}, mode: container, price: {{amount: 3.0, per: gpu-hour}}}}")
        workloads.append(f"  - {{id: wl-{g}, kind: training, gpu: {g}, gpus: 8, hours_per_day: 12, duration: 365d}}")
    scen = d / "scenario.yaml"
    scen.write_text("version: 1\ncurrency: USD\noffers:\n" + "\n".join(offers) + "\nworkloads:\n"
                    + "\n".join(workloads) + "\n")
    rng = np.random.default_rng(7)
    t0 = datetime(2025, 1, 6, tzinfo=UTC)
    lines = ["time,gpu,gpus"]
    hours = np.arange(HOURS)
    for i, g in enumerate(GPUS):
        day = (hours % 24 >= 9) & (hours % 24 < 21)
        vals = np.round(np.where(day, 4 + 3 * rng.random(HOURS), rng.random(HOURS)) * (1 + i % 3), 4)
        for h in range(HOURS):
            lines.append(f"{(t0 + timedelta(hours=h)).strftime('%Y-%m-%dT%H:00:00Z')},{g},{vals[h]:g}")
    dem = d / "demand.csv"
    dem.write_text("\n".join(lines) + "\n")
    return scen, dem


def baseline_from_csv(path: str | Path):  # type: ignore[no-untyped-def]
    """The reader before the polars one: the csv module, a datetime per row, a dict of arrays."""
    import numpy as np

    from gpuplan.inputs.demand import Demand

    def parse_time(text: str) -> datetime:
        t = text.strip()
        try:
            value = float(t)
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return datetime.fromtimestamp(value, tz=UTC)
        dt = datetime.fromisoformat(t.replace("Z", "+00:00"))
        return dt if dt.tzinfo else dt.replace(tzinfo=UTC)

    p = Path(path)
    rows: list[tuple[datetime, str, float]] = []
    with p.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        cols = [h.strip().lower() for h in next(reader)]
        it, ig, ig2 = cols.index("time"), cols.index("gpu"), cols.index("gpus")
        for row in reader:
            if not row or all(not c.strip() for c in row):
                continue
            rows.append((parse_time(row[it]), row[ig].strip(), float(row[ig2])))
    start = min(r[0] for r in rows).replace(minute=0, second=0, microsecond=0)
    end = max(r[0] for r in rows)
    n = int((end - start) / timedelta(hours=1)) + 1
    by_gpu: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(n))
    for when, gpu, gpus in rows:
        by_gpu[gpu][int((when - start) / timedelta(hours=1))] += gpus
    return Demand(start, n, dict(by_gpu), {}, str(p), project=False)


WRAPPER = """
import sys
sys.path.insert(0, {bench!r})
import bench_plan_demand as b
import gpuplan.inputs.demand as d
d.from_csv = b.baseline_from_csv
from gpuplan.cli import entry
sys.argv = ["gpuplan", *sys.argv[1:]]
entry()
"""


ENV = {**os.environ, "SOURCE_DATE_EPOCH": "0"}  # the same generated_at in both outputs


def run(cmd: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV).stdout
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # compiled bytecode, as an installed package has it (and as a first run of a checkout writes
        # it), kept in the temporary folder: an environment with PYTHONDONTWRITEBYTECODE would
        # otherwise compile every module of gpuplan again in every run
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        scen, dem = write_inputs(Path(tmp))
        argv = ["plan", str(scen), "--demand", str(dem), "-o", "json"]
        gp = [str(Path(sys.executable).with_name("gpuplan")), *argv]
        base = [sys.executable, "-c", WRAPPER.format(bench=str(Path(__file__).parent)), *argv]
        print(f"input: {HOURS:,} hours x {len(GPUS)} GPU types = {HOURS * len(GPUS):,} rows, "
              f"{dem.stat().st_size / 1e6:.1f} MB; each run a fresh process, alternating, bytecode compiled")
        tiny = Path(tmp) / "tiny.csv"  # the floor: start-up, imports and a plan of one day
        tiny.write_text("\n".join(dem.read_text().splitlines()[: 1 + 24 * len(GPUS)]) + "\n")
        floor_cmd = [gp[0], "plan", str(scen), "--demand", str(tiny), "-o", "json"]
        run(gp), run(base), run(floor_cmd)  # warm the file cache and write the bytecode
        times: dict[str, list[float]] = {"gpuplan": [], "baseline": [], "floor": []}
        outs: dict[str, str] = {}
        for _ in range(args.repeat):  # in turn, so that a change in the machine's load hits all three
            for name, cmd in (("gpuplan", gp), ("baseline", base), ("floor", floor_cmd)):
                s, out = run(cmd)
                times[name].append(s)
                outs[name] = out
        same = outs["gpuplan"] == outs["baseline"]
        med = {k: statistics.median(v) for k, v in times.items()}
        paired = statistics.median(b / g for g, b in zip(times["gpuplan"], times["baseline"], strict=True))
        floor = med["floor"]
        print(f"whole process (median of {args.repeat}): gpuplan {med['gpuplan']:.3f} s, "
              f"baseline {med['baseline']:.3f} s; ratio of the medians {med['baseline'] / med['gpuplan']:.2f}x, "
              f"median of the paired ratios {paired:.2f}x; min {min(times['gpuplan']):.3f} vs "
              f"{min(times['baseline']):.3f} s; goal < 0.3 s: {med['gpuplan'] < 0.3}; outputs equal: {same}")
        print(f"floor (the same command on one day of demand, 240 rows): {floor:.3f} s; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        from gpuplan.inputs.demand import from_csv

        parse = {"gpuplan": [], "baseline": []}  # type: dict[str, list[float]]
        for _ in range(args.repeat):
            for name, fn in (("gpuplan", from_csv), ("baseline", baseline_from_csv)):
                t = time.perf_counter()
                fn(dem)
                parse[name].append(time.perf_counter() - t)
        pm = {k: statistics.median(v) for k, v in parse.items()}
        print(f"in process, the parse alone (median): gpuplan {pm['gpuplan'] * 1000:.1f} ms, baseline "
              f"{pm['baseline'] * 1000:.1f} ms; ratio {pm['baseline'] / pm['gpuplan']:.1f}x")
        if not same:
            sys.exit("outputs differ")


if __name__ == "__main__":
    main()

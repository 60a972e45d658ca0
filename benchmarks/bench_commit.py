"""`gpuplan commit` speed: 10,000 paths x 24 months x 3 GPU types x 4 terms (goal: under 5 s on 2 cores).

Times `gpuplan.api.commit` on a generated scenario (3 GPU types, each a bare-metal offer with 1/3/6/12-month
terms and a container offer, steady and part-time work, drifting prices and growing demand): the median
of `--runs` runs, after one warm-up (imports), pinned to the first two CPUs where the OS allows it.

    python benchmarks/bench_commit.py [--runs 3] [--paths 10000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

GPUS = [("ascend-910b", 240, 10), ("h100-sxm", 520, 24), ("a100-80g", 330, 15)]


def scenario() -> str:
    lines = ["version: 1", "currency: CNY", "team: {engineer_hour_cost: 150}", "offers:"]
    for gpu, day, hour in GPUS:
        lines.append(f"  - id: bm-{gpu}\n    gpu: {gpu}\n    mode: bare-metal\n"
                     f"    price: {{amount: {day}, per: gpu-day}}\n    terms:")
        for months, k in ((1, 1.0), (3, 0.92), (6, 0.85), (12, 0.75)):
            price = f"{{amount: {day * k:.0f}, per: gpu-day}}"
            lines.append(f"      - {{length: {months}mo, price: {price}, early_exit: 0.5}}")
        lines.append(f"  - {{id: ct-{gpu}, gpu: {gpu}, mode: container, price: {{amount: {hour}, per: gpu-hour}}}}")
    lines.append("workloads:")
    for gpu, _, _ in GPUS:
        lines.append(f"  - {{id: train-{gpu}, kind: training, gpu: {gpu}, gpus: 16, hours_per_day: 24, "
                     "duration: 30d}")
        lines.append(f"  - {{id: exp-{gpu}, kind: experiment, gpu: {gpu}, gpus: 8, hours_per_day: 8, duration: 30d, "
                     "window: \"09:00-18:00\"}")
    lines.append("market: {horizon: 24mo, container_price_drift: [-0.35, -0.10], "
                 "bare_metal_price_drift: [-0.25, 0.0], demand_growth: [0.0, 0.04]}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--paths", type=int, default=10_000)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))[:2]
        os.sched_setaffinity(0, cpus)
    from gpuplan import api

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.yaml"
        path.write_text(scenario(), encoding="utf-8")
        api.commit(path, paths=100)  # warm-up: imports
        times, cpu = [], []
        for _ in range(args.runs):
            t0, c0 = time.perf_counter(), time.process_time()
            doc = api.commit(path, paths=args.paths).to_json()
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    med = statistics.median(times)
    terms = sorted({x["term_months"] for x in doc["ladders"]})
    print(f"commit: {args.paths:,} paths x {doc['horizon_months']} months x {len(GPUS)} GPU types x 4 terms: "
          f"median {med:.2f} s wall, {statistics.median(cpu):.2f} s CPU over {args.runs} runs (goal < 5 s); "
          f"ladder terms used {terms}, "
          f"expected {doc['cost']['expected']:,.0f} {doc['currency']}")
    return 0 if med < 5.0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Startup and compare speed, end to end as a user runs them.

Prints the median wall time of `gpuplan --help` and of `gpuplan compare` on a generated
500-workload scenario, each with its ratio to a bare `python -c pass` measured in the same run
(the floor any Python CLI pays). Goals: --help under 0.3 s; compare of 500 workloads under 2 s.

    python benchmarks/bench_compare.py [--runs 7] [--workloads 500]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KINDS = ["training", "fine-tuning", "experiment", "inference"]


def scenario(n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines = [
        "version: 1", "currency: CNY", "team: {engineer_hour_cost: 150}", "offers:",
        "  - {id: bm-910b, gpu: ascend-910b, mode: bare-metal, price: {amount: [180, 260], per: gpu-day}, "
        "min_term: 30d, rdma: roce, network_gbps: 100}",
        "  - {id: ct-910b, gpu: ascend-910b, mode: container, price: {amount: [8, 12], per: gpu-hour}}",
        "  - {id: bm-node, gpu: ascend-910b, mode: bare-metal, price: {amount: [12000, 17040], per: node-month}, "
        "lease_unit: node, min_term: 30d}",
        "  - {id: ct-2, gpu: ascend-910b, mode: container, price: {amount: 9, per: gpu-hour}, rdma: none}",
        "workloads:",
    ]
    for i in range(n):
        req = rng.choice(["[]", "[]", "[]", "[compliance]", "[elastic]", "[multi-node]", "[isolation]"])
        lines.append(
            f"  - {{id: w{i}, kind: {rng.choice(KINDS)}, gpu: ascend-910b, gpus: {rng.choice([1, 2, 4, 8, 16, 32])}, "
            f"hours_per_day: {rng.choice([2, 6, 8, 12, 24])}, days_per_week: {rng.randint(3, 7)}, "
            f"duration: {rng.choice([3, 5, 14, 30, 60, 90])}d, utilization: {rng.uniform(0.3, 0.95):.2f}, "
            f"requires: {req}}}")
    return "\n".join(lines) + "\n"


def timed(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--workloads", type=int, default=500)
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.yaml"
        path.write_text(scenario(args.workloads))
        base = timed([py, "-c", "pass"], args.runs)
        help_t = timed([py, "-m", "gpuplan", "--help"], args.runs)
        cmp_t = timed([py, "-m", "gpuplan", "compare", str(path), "-o", "json"], max(3, args.runs // 2))
    print(f"python -c pass (baseline)      {base * 1000:8.0f} ms")
    print(f"gpuplan --help                 {help_t * 1000:8.0f} ms   {help_t / base:5.1f}x baseline   goal < 300 ms")
    print(f"gpuplan compare ({args.workloads} workloads) {cmp_t * 1000:8.0f} ms   {cmp_t / base:5.1f}x baseline"
          f"   goal < 2000 ms")


if __name__ == "__main__":
    main()

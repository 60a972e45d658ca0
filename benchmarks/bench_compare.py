"""Startup and compare speed, as a user runs them: whole processes, median of --runs.

Prints first, whole processes:
- `python -c pass`, the floor any Python CLI pays;
- `gpuplan --help`;
- `gpuplan compare SCENARIO -o json` on generated scenarios of 10 and 5,000 workloads, against the
  same command with the break-even searches the way they were before issue 15 (scipy's brentq on
  the same grids, scipy imported), run as its own process in the same run (`--brentq`), and the ratio.
Then, labelled as such, in-process figures: printing the 5,000-workload JSON pretty (indent=2, what
`-o json` writes) against compact.
Goals (issue 15): 10 workloads under 0.25 s and 5,000 under 1.5 s, whole process.

    python benchmarks/bench_compare.py [--runs 5] [--workloads 10,5000]
"""

from __future__ import annotations

import argparse
import random
import resource
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


def brentq_main(argv: list[str]) -> int:
    """The baseline: the CLI with the break-even searches as they were (every grid point priced,
    the bracket refined by scipy's brentq)."""
    from gpuplan.engines import breakeven

    def _root(f, grid, breakpoints=(), *, complete=False):  # type: ignore[no-untyped-def]
        from scipy.optimize import brentq

        prev_x, prev_y = grid[0], f(grid[0])
        if prev_y == 0:
            return prev_x
        for x in grid[1:]:
            y = f(x)
            if y == 0:
                return x
            if (prev_y < 0) != (y < 0):
                return float(brentq(f, prev_x, x, xtol=1e-7, rtol=1e-10))
            prev_x, prev_y = x, y
        return None

    breakeven.first_crossing = _root  # type: ignore[assignment]
    from gpuplan.cli import main

    return main(argv)


def differences(a: object, b: object) -> int:
    """Values that differ between two JSON documents (numbers by more than 1e-6 relative)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return sum(differences(a.get(k), b.get(k)) for k in set(a) | set(b))
    if isinstance(a, list) and isinstance(b, list):
        return abs(len(a) - len(b)) + sum(differences(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return int(abs(a - b) > 1e-6 * max(1.0, abs(a)))
    return int(a != b)


def timed(cmd: list[str], runs: int) -> tuple[float, bytes]:
    """Median wall seconds of `runs` child processes (CPU seconds of each, user + system, in CPU_S)."""
    times, cpus = [], []
    out = b""
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True).stdout
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    CPU_S[" ".join(cmd)] = statistics.median(cpus)
    return statistics.median(times), out


CPU_S: dict[str, float] = {}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--brentq":
        sys.exit(brentq_main(sys.argv[2:]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workloads", default="10,5000")
    args = ap.parse_args()
    py = sys.executable
    runs = max(3, args.runs)
    print(f"whole processes, median of {runs} (wall ms; CPU ms = user + system of the process)")
    base, _ = timed([py, "-c", "pass"], runs)
    help_t, _ = timed([py, "-m", "gpuplan", "--help"], runs)
    print(f"  python -c pass                       {base * 1000:8.0f}")
    print(f"  gpuplan --help                       {help_t * 1000:8.0f}")
    goals = {10: 250, 5000: 1500}
    big_json = b""
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.workloads.split(",")):
            path = Path(tmp) / f"w{n}.yaml"
            path.write_text(scenario(n))
            ours, out = timed([py, "-m", "gpuplan", "compare", str(path), "-o", "json"], runs)
            old, old_out = timed([py, __file__, "--brentq", "compare", str(path), "-o", "json"], runs)
            import json

            diff = differences(json.loads(out), json.loads(old_out))
            goal = f"goal < {goals[n]} ms" if n in goals else ""
            cpu = CPU_S[" ".join([py, "-m", "gpuplan", "compare", str(path), "-o", "json"])]
            old_cpu = CPU_S[" ".join([py, __file__, "--brentq", "compare", str(path), "-o", "json"])]
            print(f"  gpuplan compare, {n:>5} workloads     {ours * 1000:8.0f}   brentq as before {old * 1000:8.0f}"
                  f"   ratio {old / ours:4.2f}x   (CPU {cpu * 1000:.0f} vs {old_cpu * 1000:.0f})"
                  f"   values that differ: {diff}   {goal}")
            big_json = out
    if big_json:
        import json

        data = json.loads(big_json)
        t0 = time.perf_counter()
        pretty = json.dumps(data, ensure_ascii=False, indent=2)
        t1 = time.perf_counter()
        compact = json.dumps(data, ensure_ascii=False)
        t2 = time.perf_counter()
        print(f"\nin-process: the last JSON printed pretty (indent=2, as -o json does) {(t1 - t0) * 1000:.0f} ms, "
              f"{len(pretty) / 1e6:.1f} MB; compact {(t2 - t1) * 1000:.0f} ms, {len(compact) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()

"""Startup and compare speed, as a user runs them: whole processes, median of --runs.

Prints first, whole processes, as installed (Python's bytecode cache on, in a folder of the run's own;
one warm-up run of each command, not counted):
- `python -c pass`, the floor any Python CLI pays;
- `gpuplan --help`;
- `gpuplan compare SCENARIO -o json` on generated scenarios of 10 and 5,000 workloads, against a
  baseline run as its own process in the same run, and the ratio:
  - `--baseline REV`: the same command from the source of git revision REV (its `src/` exported to a
    temporary folder and put first on PYTHONPATH, same interpreter and dependencies), and whether
    the two print the same bytes;
  - without it: the same command with the break-even searches the way they were before issue 15
    (scipy's brentq on the same grids, scipy imported; `--brentq`), and the values that differ.
Then, labelled as such, in-process figures: printing the 5,000-workload JSON pretty (indent=2, what
`-o json` wrote before issue 15) against gpuplan's own writer of the same text, and compact.
Goals (issue 15): 10 workloads under 0.25 s and 5,000 under 1.5 s, whole process.

    python benchmarks/bench_compare.py [--runs 5] [--workloads 10,5000] [--baseline REV]
"""

from __future__ import annotations

import argparse
import os
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


def timed(cmd: list[str], runs: int, env: dict[str, str]) -> tuple[float, bytes]:
    """Median wall seconds of `runs` child processes after a warm-up (CPU seconds of each, user +
    system, in CPU_S)."""
    times, cpus = [], []
    out = subprocess.run(cmd, check=True, capture_output=True, env=env).stdout
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, env=env).stdout
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    CPU_S[" ".join(cmd)] = statistics.median(cpus)
    return statistics.median(times), out


CPU_S: dict[str, float] = {}


def export_source(rev: str, into: Path) -> Path:
    """`src/` of git revision `rev`, written under `into` (the repository itself is not touched)."""
    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "-C", str(root), "archive", rev, "src"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--brentq":
        sys.exit(brentq_main(sys.argv[2:]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workloads", default="10,5000")
    ap.add_argument("--baseline", metavar="REV", help="git revision to measure against (default: brentq as before)")
    args = ap.parse_args()
    py = sys.executable
    runs = max(3, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        # as installed: Python's bytecode cache on (pip writes it; PYTHONDONTWRITEBYTECODE would make
        # every run compile gpuplan's sources again), kept in this run's own folder, filled by a warm-up
        ours_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        ours_env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        print(f"whole processes, median of {runs} after a warm-up (wall ms; CPU ms = user + system of the "
              "process; bytecode cached, as installed)")
        base, _ = timed([py, "-c", "pass"], runs, ours_env)
        help_t, _ = timed([py, "-m", "gpuplan", "--help"], runs, ours_env)
        print(f"  python -c pass                       {base * 1000:8.0f}")
        print(f"  gpuplan --help                       {help_t * 1000:8.0f}")
        goals = {10: 250, 5000: 1500}
        big_json = b""
        old_env = ours_env
        if args.baseline:
            old_src = export_source(args.baseline, Path(tmp))
            old_env = {**ours_env, "PYTHONPATH": os.pathsep.join(filter(None, [str(old_src),
                                                                               os.environ.get("PYTHONPATH")]))}
            label = f"{args.baseline[:12]:>12}"
        else:
            label = "brentq as before"
        for n in (int(x) for x in args.workloads.split(",")):
            path = Path(tmp) / f"w{n}.yaml"
            path.write_text(scenario(n))
            ours_cmd = [py, "-m", "gpuplan", "compare", str(path), "-o", "json"]
            old_cmd = ours_cmd if args.baseline else [py, __file__, "--brentq", "compare", str(path), "-o", "json"]
            ours, old, ratio, out, old_out, cpu, old_cpu = paired(ours_cmd, old_cmd, runs, ours_env, old_env)
            import json

            if args.baseline:
                n_diff = differences(json.loads(out), json.loads(old_out))
                same = "same bytes" if out == old_out else f"DIFFERENT output ({n_diff} values differ)"
            else:
                same = f"values that differ: {differences(json.loads(out), json.loads(old_out))}"
            goal = f"goal < {goals[n]} ms" if n in goals else ""
            print(f"  gpuplan compare, {n:>5} workloads     {ours * 1000:8.0f}   {label} {old * 1000:8.0f}"
                  f"   ratio {ratio:4.2f}x   (CPU {cpu * 1000:.0f} vs {old_cpu * 1000:.0f})"
                  f"   {same}   {goal}")
            big_json = out
    if big_json:
        import json

        from gpuplan.render.json_out import dumps

        data = json.loads(big_json)
        t0 = time.perf_counter()
        json.dumps(data, ensure_ascii=False, indent=2)
        t1 = time.perf_counter()
        ours_text = dumps(data)
        t2 = time.perf_counter()
        compact = json.dumps(data, ensure_ascii=False)
        t3 = time.perf_counter()
        assert json.loads(ours_text) == data
        print(f"\nin-process: the last JSON printed pretty (indent=2) by json.dumps {(t1 - t0) * 1000:.0f} ms, "
              f"by gpuplan's writer (orjson, {len(ours_text) / 1e6:.1f} MB) {(t2 - t1) * 1000:.0f} ms; "
              f"compact {(t3 - t2) * 1000:.0f} ms, {len(compact) / 1e6:.1f} MB")


def paired(a: list[str], b: list[str], runs: int, a_env: dict[str, str], b_env: dict[str, str]
           ) -> tuple[float, float, float, bytes, bytes, float, float]:
    """A and B in turn (A B A B ...: a drift of the machine's speed hits both): median wall seconds,
    the median of B/A pair by pair, the last outputs, median CPU seconds (user + system of each child)."""
    walls: tuple[list[float], list[float]] = ([], [])
    cpus: tuple[list[float], list[float]] = ([], [])
    outs = [b"", b""]
    for run in range(runs + 1):  # the first, a warm-up, not counted
        for k, (cmd, env) in enumerate(((a, a_env), (b, b_env))):
            with tempfile.TemporaryFile() as sink:  # a file, as `> out.json` (a pipe would time our reading)
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=sink, env=env)
                wall = time.perf_counter() - t0
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                sink.seek(0)
                outs[k] = sink.read()
            if run:
                walls[k].append(wall)
                cpus[k].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    med = statistics.median
    ratio = med(y / x for x, y in zip(walls[0], walls[1], strict=True))
    return med(walls[0]), med(walls[1]), ratio, outs[0], outs[1], med(cpus[0]), med(cpus[1])


if __name__ == "__main__":
    main()

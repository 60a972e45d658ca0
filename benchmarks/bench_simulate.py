"""Benchmark of `gpuplan simulate` as a user runs it: whole processes, against a plain heapq replay.

The baseline is `plain_replay` below: the csv module reads the openb pod list by the trace README's
rules, and a heapq event loop replays it (the same semantics as `gpuplan.sim.replay`: strict FIFO,
pooled GPUs in thousandths of a card, a queued job bursts at its deadline). It runs as its own
process (`python bench_simulate.py --plain TRACE`), imports nothing but the standard library, and
prints the numbers gpuplan prints, which the benchmark checks are the same.

Prints first, whole processes (wall and CPU seconds, median of --repeats, and peak memory), for the
shared openb trace (6,203 jobs) and copies of it shifted in time (x10, x100 = 620,300 jobs, x1000 =
6.2 million): `gpuplan simulate TRACE -r R -w WAIT -o json` against the plain replay, run in turn
(A B A B ..., after a warm-up each, with Python's bytecode cache on as after `pip install`), the
ratio of the medians and the median of the paired ratios. Then, labelled as such, in-process
figures of the command's steps (read, replay, summary) on the largest trace.
Goals (issue 15, kept by issue 22 on the one path): never slower than the plain replay; >= 20x it at
x100; x1000 under 3 s and 1.5 GB. Issue 23 (`--deep`): -r 8 at most 2.5x -r 32, peak under 600 MB.

Run: .venv/bin/python benchmarks/bench_simulate.py [--copies 1,10,100,1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import csv
import heapq
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "traces" / "alibaba-gpu-v2023" / "openb_pod_list_default.csv"
GPUPLAN = Path(sys.executable).with_name("gpuplan")


# ---------------------------------------------------------------- the baseline (standard library only)


def plain_replay(path: str, reserved: int, wait_s: float) -> dict[str, float]:
    """Read the openb pods with csv, replay strict FIFO over pooled GPUs with heapq; the headline numbers."""
    jobs = []
    skipped = 0
    with open(path, newline="") as fh:
        for k, row in enumerate(csv.DictReader(fh)):
            num = float(row["num_gpu"])
            if num == 0 or not row["scheduled_time"]:
                skipped += 1
                continue
            run = float(row["deletion_time"]) - float(row["scheduled_time"])
            if run <= 0:
                skipped += 1
                continue
            milli = row["gpu_milli"]
            g = float(milli) / 1000 if num == 1 and milli else num
            jobs.append((float(row["creation_time"]), k, run, g))
    jobs.sort()
    n = len(jobs)
    cap = reserved * 1000
    free = cap
    running: list[tuple[float, int]] = []
    queue: list[int] = []  # FIFO: head at queue[qh]
    qh = 0
    units = [max(round(j[3] * 1000), 1) for j in jobs]
    start = [0.0] * n
    burst = [False] * n
    i = 0
    while True:
        t = jobs[i][0] if i < n else float("inf")
        if running and running[0][0] < t:
            t = running[0][0]
        if qh < len(queue) and jobs[queue[qh]][0] + wait_s < t:
            t = jobs[queue[qh]][0] + wait_s
        if t == float("inf"):
            break
        while running and running[0][0] <= t:
            free += units[heapq.heappop(running)[1]]
        while i < n and jobs[i][0] <= t:
            if units[i] <= cap:
                queue.append(i)
            else:
                start[i], burst[i] = t, True
            i += 1
        for phase in (0, 1, 2):
            if phase == 1:
                burst_any = False
                while qh < len(queue) and jobs[queue[qh]][0] + wait_s <= t:
                    j = queue[qh]
                    start[j], burst[j] = t, True
                    qh += 1
                    burst_any = True
                if not burst_any:
                    break
                continue
            while qh < len(queue) and units[queue[qh]] <= free:
                j = queue[qh]
                qh += 1
                free -= units[j]
                start[j] = t
                heapq.heappush(running, (t + jobs[j][2], j))
    gh = [j[3] * j[2] / 3600 for j in jobs]
    return {
        "jobs": n,
        "burst_jobs": sum(burst),
        "burst_gpu_hours": sum(g for g, b in zip(gh, burst, strict=True) if b),
        "mean_wait_hours": sum(start[k] - jobs[k][0] for k in range(n)) / 3600 / n,
    }


# ---------------------------------------------------------------- traces


def build_trace(src: Path, copies: int, dest: Path) -> None:
    """`copies` copies of the pod list, copy k shifted by k x the trace's span (seconds)."""
    times = ("creation_time", "deletion_time", "scheduled_time")
    with src.open(newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    cols = [header.index(c) for c in times]
    vals = [int(r[c]) for r in body for c in cols if r[c]]
    span = max(vals) - min(vals) + 1
    with dest.open("w", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(header)
        for k in range(copies):
            shift = k * span
            for r in body:
                r2 = list(r)
                r2[0] = f"{r[0]}-{k}"
                for c in cols:
                    if r2[c]:
                        r2[c] = str(int(r2[c]) + shift)
                w.writerow(r2)


# ---------------------------------------------------------------- whole processes


ENV = dict(os.environ)
"""Both sides' environment: Python's bytecode cache on, as after `pip install` (set in main)."""


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall and CPU (user + system) seconds of one child process, and its stdout."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False, env=ENV)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return wall, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, r.stdout


def paired(a: list[str], b: list[str] | None, repeats: int) -> tuple[tuple[float, float, str], ...]:
    """Runs A and B in turn (A B A B ...: a drift of the machine's speed hits both), after one warm-up
    each (it writes the bytecode cache); per side the median wall and CPU seconds and the last stdout,
    and the median of the paired wall ratios B/A (0 without B)."""
    timed(a)
    if b is not None:
        timed(b)
    runs: dict[int, list[tuple[float, float, str]]] = {0: [], 1: []}
    for _ in range(repeats):
        runs[0].append(timed(a))
        if b is not None:
            runs[1].append(timed(b))

    def med(side: list[tuple[float, float, str]]) -> tuple[float, float, str]:
        if not side:
            return 0.0, 0.0, ""
        return statistics.median(r[0] for r in side), statistics.median(r[1] for r in side), side[-1][2]

    ratio = statistics.median(y[0] / x[0] for x, y in zip(runs[0], runs[1], strict=True)) if runs[1] else 0.0
    return med(runs[0]), med(runs[1]), (ratio, 0.0, "")


def peak_mb(cmd: list[str]) -> float:
    """Peak resident memory of one run, measured in a fresh helper process (RUSAGE_CHILDREN is a max)."""
    code = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
    )
    r = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True, check=True)
    return float(r.stdout)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a))  # sums in another order


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plain", help=argparse.SUPPRESS)  # run the baseline on this trace and print JSON
    ap.add_argument("--copies", default="1,10,100,1000")
    ap.add_argument("--reserved", type=int, default=16)
    ap.add_argument("--wait-hours", type=float, default=2.0)
    ap.add_argument("--repeats", type=int, default=3, help="median of N whole-process runs")
    ap.add_argument("--plain-max-copies", type=int, default=100, help="skip the baseline above this (minutes)")
    ap.add_argument("--deep", action="store_true",
                    help="on the largest trace: -r 8 against -r 32 (--wait inf, strict-fifo) and peak memory")
    args = ap.parse_args()
    if args.plain:
        print(json.dumps(plain_replay(args.plain, args.reserved, args.wait_hours * 3600)))
        return 0
    if not SHARED.is_file():
        print(f"the shared trace is missing: {SHARED}", file=sys.stderr)
        return 2
    ok = True
    print(
        f"whole processes, median of {args.repeats} (wall s; CPU s = user + system; peak MB of one run): "
        f"R={args.reserved}, wait {args.wait_hours:g} h, strict-fifo, packing gpu"
    )
    print(
        f"{'trace':>10} {'jobs':>10} {'gpuplan s':>10} {'CPU s':>7} {'MB':>7} {'plain s':>9} {'CPU s':>7} "
        f"{'ratio':>7} {'CPU':>7} {'paired':>7}  same"
    )
    with tempfile.TemporaryDirectory() as tmp:
        # as installed: the bytecode cache on (pip writes it), kept in the temporary folder; under
        # PYTHONDONTWRITEBYTECODE every run would compile gpuplan again
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for copies in (int(c) for c in args.copies.split(",")):
            if copies == 1:
                path = SHARED
            else:
                path = Path(tmp) / f"openb_x{copies}.csv"
                build_trace(SHARED, copies, path)
            ours_cmd = [
                str(GPUPLAN), "simulate", str(path), "-r", str(args.reserved),
                "-w", f"{args.wait_hours:g}h", "--queueing", "strict-fifo", "-o", "json",
            ]
            plain_cmd = [
                sys.executable, __file__, "--plain", str(path), "--reserved", str(args.reserved),
                "--wait-hours", str(args.wait_hours),
            ]
            with_plain = copies <= args.plain_max_copies
            (t_ours, c_ours, out), (t_plain, c_plain, pout), (ratio, _, _) = paired(
                ours_cmd, plain_cmd if with_plain else None, args.repeats)
            mb = peak_mb(ours_cmd)
            run = json.loads(out)["runs"][0]
            line = f"{'x' + str(copies):>10} {run['jobs']:>10,} {t_ours:>10.3f} {c_ours:>7.3f} {mb:>7.0f}"
            if with_plain:
                base = json.loads(pout)
                same = (
                    (base["jobs"], base["burst_jobs"]) == (run["jobs"], run["burst_jobs"])
                    and _close(base["burst_gpu_hours"], run["gpu_hours"]["burst"])
                    and _close(base["mean_wait_hours"], run["wait_hours"]["mean"])
                )
                ok &= same
                line += (f" {t_plain:>9.3f} {c_plain:>7.3f} {t_plain / t_ours:>6.1f}x {c_plain / c_ours:>6.1f}x"
                         f" {ratio:>6.1f}x  {same}")
            else:
                line += f" {'-':>9} {'-':>7}  (baseline skipped: --plain-max-copies)"
            print(line, flush=True)
            base = os.environ.get("GPUPLAN_BASELINE")  # a checkout with its own venv (e.g. /work/base)
            if base and copies in (1, 100):
                base_cmd = [str(Path(base) / ".venv" / "bin" / "gpuplan"), *ours_cmd[1:]]
                (t_o, c_o, _), (t_b, c_b, _), (r_ob, _, _) = paired(ours_cmd, base_cmd, args.repeats)
                print(f"{'':>10} against GPUPLAN_BASELINE={base}: this {t_o:.3f} s ({c_o:.3f} CPU s), "
                      f"baseline {t_b:.3f} s ({c_b:.3f} CPU s); this/baseline {t_o / t_b:.2f}x wall, "
                      f"{c_o / c_b:.2f}x CPU", flush=True)
            if copies == max(int(c) for c in args.copies.split(",")):
                if args.deep:
                    deep(path, args)
                in_process(path, args)
            if path != SHARED:
                path.unlink()
    return 0 if ok else 1


def deep(path: Path, args: argparse.Namespace) -> None:
    """Issue 23: `-r 8 --wait inf --queueing strict-fifo` (most jobs queue) at most 2.5x the same with
    `-r 32`, and peak memory under 600 MB."""
    cmds = [[str(GPUPLAN), "simulate", str(path), "-r", r, "--wait", "inf", "--queueing", "strict-fifo", "-o", "json"]
            for r in ("8", "32")]
    (t8, c8, _), (t32, c32, _), (paired_ratio, _, _) = paired(cmds[0], cmds[1], args.repeats)
    mb = [peak_mb(c) for c in cmds]
    print(f"\nDEEP QUEUES, {path.name}, --wait inf, strict-fifo, median of {args.repeats}: -r 8 {t8:.3f} s "
          f"({c8:.3f} CPU s, {mb[0]:.0f} MB), -r 32 {t32:.3f} s ({c32:.3f} CPU s, {mb[1]:.0f} MB); "
          f"-r 8 / -r 32 {t8 / t32:.2f}x wall, {c8 / c32:.2f}x CPU (paired median {1 / paired_ratio:.2f}x)",
          flush=True)


def in_process(path: Path, args: argparse.Namespace) -> None:
    """In-process figures for the largest trace, step by step as the command runs them (after imports,
    in this process: not what a user sees): read (the C reader: rows counted, columns parsed, the
    jobs checked, skipped and sorted by `_ckernel.prepare_jobs`), replay (the C loop), summary (C)."""
    from gpuplan.sim.replay import read_jobs, replay, summarize

    t = [time.perf_counter()]
    jobs = read_jobs(path)
    t.append(time.perf_counter())
    res = replay(jobs, args.reserved, args.wait_hours * 3600, "strict-fifo", "gpu", 8)
    t.append(time.perf_counter())
    summarize(jobs, res, args.reserved)
    t.append(time.perf_counter())
    steps = ("read", "replay", "summary")
    print(f"\nIN-PROCESS, {path.name} ({len(jobs):,} jobs; the command's steps): "
          + ", ".join(f"{s} {b - a:.3f} s" for s, a, b in zip(steps, t[:-1], t[1:], strict=True))
          + f"; numpy loaded: {'numpy' in sys.modules}")


if __name__ == "__main__":
    sys.exit(main())

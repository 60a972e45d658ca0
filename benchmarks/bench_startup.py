"""Where a small command's process goes (issues 22/23, start-up): imports by package, and the exit.

    .venv/bin/python benchmarks/bench_startup.py [--runs 5] [--only NAME,...]

For each case (a `gpuplan` command line; inputs generated as bench_onepath.py makes them):
1. `python -X importtime -m gpuplan ...`, --runs times: the median import time (wall, microseconds
   as Python reports them, so noisy on a loaded machine) of each top-level package (typer, pydantic,
   numpy, yaml, gpuplan, the standard library ...), each module counted once by its own (self) time;
2. whole processes, paired and interleaved (A B A B ...): A = `main(args)` then the interpreter's
   ordinary exit (`python -c "sys.exit(main(...))"`), B = `python -m gpuplan ...` (`entry`: the same
   `main`, then `gc.freeze()` before the exit); median wall and CPU (user + system) of each and the
   median of the paired CPU differences: what the frozen exit saves.
Python's bytecode cache is on (written in a folder of the run's own; one warm-up run not counted).
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_onepath import OPENB  # noqa: E402
from bench_onepath import cases as onepath_cases  # noqa: E402

STDLIB_ROOTS = frozenset(sys.stdlib_module_names)
CASES = ("compare10-json", "plan-json", "plan-demand", "simulate-small", "help")


def importtime(cmd: list[str], env: dict[str, str]) -> dict[str, int]:
    """Self import time per top-level package (microseconds) of one process."""
    err = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True, env=env,
                         check=True).stderr
    by: dict[str, int] = collections.Counter()
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cum, name = line[len("import time:"):].split("|")
        root = name.strip().split(".")[0]
        by["stdlib" if root in STDLIB_ROOTS or root.startswith("_") else root] += int(self_us)
    return by


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, env=env)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated case names")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        all_cases = onepath_cases(d)
        chosen = [c for c in CASES if c in all_cases and (not args.only or c in args.only.split(","))]
        env = {**os.environ, "COLUMNS": "120", "PYTHONPYCACHEPREFIX": str(d / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        print(f"median of {args.runs} (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
        if not OPENB.exists():
            print(f"(the shared trace {OPENB} is missing: no simulate case)")
        for case in chosen:
            argv = all_cases[case]
            entry = [py, "-m", "gpuplan", *argv]
            plain = [py, "-c", f"import sys; from gpuplan.cli import main; sys.exit(main({argv!r}))"]
            timed(entry, env)  # warm-up: bytecode, file cache
            timed(plain, env)
            per = [importtime(entry, env) for _ in range(args.runs)]
            keys = sorted({k for p in per for k in p}, key=lambda k: -statistics.median(p.get(k, 0) for p in per))
            med = {k: statistics.median(p.get(k, 0) for p in per) / 1000 for k in keys}
            print(f"\n{case}: gpuplan {' '.join(Path(a).name if '/' in a else a for a in argv)}")
            print("  imports, self ms by package (wall): "
                  + ", ".join(f"{k} {v:.0f}" for k, v in med.items() if v >= 1) + f"; all {sum(med.values()):.0f}")
            a: list[tuple[float, float]] = []
            b: list[tuple[float, float]] = []
            for _ in range(args.runs):
                a.append(timed(plain, env))
                b.append(timed(entry, env))
            saved = statistics.median(x[1] - y[1] for x, y in zip(a, b, strict=True))
            print(f"  process: ordinary exit {statistics.median(x[0] for x in a):.3f} s wall, "
                  f"{statistics.median(x[1] for x in a):.3f} CPU s; entry (frozen exit) "
                  f"{statistics.median(y[0] for y in b):.3f} s, {statistics.median(y[1] for y in b):.3f} CPU s; "
                  f"paired CPU saved {saved * 1000:.0f} ms")


if __name__ == "__main__":
    main()

"""One path per command (issue 22) and where users wait (issue 23): whole processes, as installed.

    GPUPLAN_BASELINE=/work/base .venv/bin/python benchmarks/bench_onepath.py [--runs 5] [--only NAME,...]

Each case is a `gpuplan` command line run as its own process, `--runs` times (median; default 5),
the cases and the two programs in turn so that a change in the machine's load hits all of them.
Python's bytecode cache is on (each program writes it in a folder of the run's own, one warm-up run
not counted), as after `pip install`.

Programs:
- gpuplan: this checkout, `python -m gpuplan` with the interpreter running this script;
- baseline: `$GPUPLAN_BASELINE/.venv/bin/python -m gpuplan`, a checkout of the commit before this
  work (c9488e9, which has the fast paths of cli/fast.py); skipped when the variable is not set.

Cases (inputs are generated in a temporary folder):
- compare10-json / compare10-table: `compare` of 10 workloads (benchmarks/bench_compare.py's
  scenario), `-o json` and the table; goals: json under 0.35 s, and at most 0.1 s over the baseline;
- plan-json: `plan examples/seed-hybrid.yaml -o json`; goal: at most 0.1 s over the baseline, < 0.5 s;
- plan-demand: `plan --demand` on a year x 10 GPU types (bench_plan_demand.py's inputs); goal < 0.4 s;
- compare5000-json / -table / -details: 5,000 workloads; goal: the table at most 2x the json (run
  for gpuplan only unless --big-baseline: the baseline's table took 38.8 s; it has no --details);
- simulate-small: `simulate` of the openb pod list (8,152 rows) `-r 16 -w 2h -o json`, its time given;
- help: `gpuplan --help`.
Then the ratios, and the outputs' agreement where both programs print the same document (values
compared parsed: the JSON writer's float spelling changed).
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(Path(__file__).parent))
ONLY_OURS = frozenset({"compare5000-details"})  # an option the baseline does not have
BIG = frozenset({"compare5000-json", "compare5000-table"})  # the baseline's table takes ~40 s: only with --big-baseline
OPENB = ROOT.parent / "shared" / "traces" / "alibaba-gpu-v2023" / "openb_pod_list_default.csv"


def cases(d: Path) -> dict[str, list[str]]:
    from bench_compare import scenario
    from bench_plan_demand import write_inputs

    (d / "s10.yaml").write_text(scenario(10))
    (d / "s5000.yaml").write_text(scenario(5000))
    scen, dem = write_inputs(d)
    out = {
        "compare10-json": ["compare", str(d / "s10.yaml"), "-o", "json"],
        "compare10-table": ["compare", str(d / "s10.yaml")],
        "plan-json": ["plan", str(ROOT / "examples" / "seed-hybrid.yaml"), "-o", "json"],
        "plan-demand": ["plan", str(scen), "--demand", str(dem), "-o", "json"],
        "compare5000-json": ["compare", str(d / "s5000.yaml"), "-o", "json"],
        "compare5000-table": ["compare", str(d / "s5000.yaml")],
        "compare5000-details": ["compare", str(d / "s5000.yaml"), "--details"],
        "help": ["--help"],
    }
    if OPENB.exists():
        out["simulate-small"] = ["simulate", str(OPENB), "-r", "16", "-w", "2h", "-o", "json"]
    return out


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (user + system) and stdout of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, env=env).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def _values(text: bytes) -> object:
    def strip(v: object) -> object:  # the moment a document was made is not a value of it
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k != "generated_at"}
        return [strip(x) for x in v] if isinstance(v, list) else v

    return strip(json.loads(text))


def same_values(a: bytes, b: bytes) -> str:
    try:
        return "same values" if _values(a) == _values(b) else "DIFFERENT values"
    except ValueError:
        return "same text" if a == b else "text differs"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--big-baseline", action="store_true", help="run the baseline on 5,000 workloads too (slow)")
    args = ap.parse_args()
    base_root = os.environ.get("GPUPLAN_BASELINE")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        all_cases = cases(d)
        chosen = [c for c in all_cases if not args.only or c in args.only.split(",")]
        programs = {"gpuplan": [sys.executable, "-m", "gpuplan"]}
        if base_root:
            programs["baseline"] = [str(Path(base_root) / ".venv" / "bin" / "python"), "-m", "gpuplan"]
        envs = {}
        for name in programs:
            env = {**os.environ, "COLUMNS": "120", "PYTHONPYCACHEPREFIX": str(d / f"pycache-{name}")}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            envs[name] = env
        times: dict[tuple[str, str], list[float]] = {}
        cpus: dict[tuple[str, str], list[float]] = {}
        outs: dict[tuple[str, str], bytes] = {}
        def runs(case: str) -> list[tuple[str, list[str]]]:
            skip = ONLY_OURS if args.big_baseline else ONLY_OURS | BIG
            return [(n, p) for n, p in programs.items() if n == "gpuplan" or case not in skip]

        for case in chosen:  # warm-up: bytecode, file cache
            for name, prog in runs(case):
                timed([*prog, *all_cases[case]], envs[name])
        for _ in range(args.runs):
            for case in chosen:
                for name, prog in runs(case):
                    s, cpu, out = timed([*prog, *all_cases[case]], envs[name])
                    times.setdefault((case, name), []).append(s)
                    cpus.setdefault((case, name), []).append(cpu)
                    outs[(case, name)] = out
        print(f"whole processes, median of {args.runs} (load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} CPUs); baseline: {base_root or 'not set'}")
        for label, data in (("wall", times), ("CPU (user + system)", cpus)):
            med = {k: statistics.median(v) for k, v in data.items()}
            print(f"\n{label}:\n{'case':<20}{'gpuplan s':>10}{'baseline s':>12}{'diff s':>9}{'ratio':>8}  output")
            for case in chosen:
                ours = med[(case, "gpuplan")]
                line = f"{case:<20}{ours:>10.3f}"
                if (case, "baseline") in med:
                    old = med[(case, "baseline")]
                    line += (f"{old:>12.3f}{ours - old:>+9.3f}{ours / old:>7.2f}x  "
                             f"{same_values(outs[(case, 'gpuplan')], outs[(case, 'baseline')])}")
                print(line)
            _goals(med)


def _goals(med: dict[tuple[str, str], float]) -> None:
    for table, js in (("compare5000-table", "compare5000-json"), ("compare5000-details", "compare5000-json"),
                          ("compare10-table", "compare10-json")):
        if (table, "gpuplan") in med and (js, "gpuplan") in med:
            print(f"{table} / {js}: {med[(table, 'gpuplan')] / med[(js, 'gpuplan')]:.2f}x (goal for 5000: <= 2x)")
    goals = {"compare10-json": 0.35, "plan-demand": 0.4, "plan-json": 0.5}
    for case, goal in goals.items():
        if (case, "gpuplan") in med:
            print(f"goal {case} < {goal} s: {med[(case, 'gpuplan')] < goal}")


if __name__ == "__main__":
    main()

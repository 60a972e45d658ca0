"""The performance model against published measurements: the fidelity table.

    python benchmarks/fidelity.py

Prints one row per case of tests/fidelity/cases.yaml: measured penalty, predicted penalty, error,
tolerance, the term that drives the prediction, and whether the case also set a catalog default
(in-sample). Then the published figures the model cannot express, with why.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fidelity"))

from fidelity import load_cases, rows  # type: ignore[import-not-found]  # noqa: E402


def main() -> int:
    table = rows()
    head = f"{'case':<40} {'measured':>9} {'predicted':>9} {'error':>7} {'tol':>6}  {'driver':<10} sample"
    print(head)
    print("-" * len(head))
    for r in table:
        print(f"{r.id:<40} {r.measured:>+9.1%} {r.predicted:>+9.1%} {r.error:>+7.1%} {r.tolerance:>6.1%}  "
              f"{r.driver:<10} {'in' if r.in_sample else 'out'}{'' if r.ok else '  MISS'}")
    out = [r for r in table if not r.in_sample]
    mae = sum(abs(r.error) for r in out) / len(out)
    print(f"\n{sum(r.ok for r in table)}/{len(table)} within tolerance; mean |error| out of sample "
          f"{mae:.1%} over {len(out)} cases")
    print("\nNot expressible (not asserted):")
    for c in load_cases().get("not_expressible", []):
        print(f"  {c['id']}: {c['why']}")
    return 0 if all(r.ok for r in table) else 1


if __name__ == "__main__":
    raise SystemExit(main())

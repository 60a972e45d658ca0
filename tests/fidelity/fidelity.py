"""Evaluate the published cases in cases.yaml against the performance model.

Used by test_fidelity.py and benchmarks/fidelity.py (which prints the table). The prediction is
the slowdown of the platform offer `x` over that of the bare-metal reference `bm` for the case's one
workload, at the middle of every range: what `compare -o json` reports as time.slowdown.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text
from gpuplan.models.perf import Slowdown, slowdown

HERE = Path(__file__).parent
TERMS = ("compute", "intra_node", "inter_node", "straggler", "data")


@dataclass(frozen=True)
class Row:
    id: str
    measured: float
    predicted: float
    tolerance: float
    in_sample: bool
    driver: str  # the largest term of the platform's slowdown (or "none")
    source: str
    why: str

    @property
    def error(self) -> float:
        return self.predicted - self.measured

    @property
    def ok(self) -> bool:
        return abs(self.error) <= self.tolerance + 1e-12


def load_cases() -> dict[str, Any]:
    return yaml.safe_load((HERE / "cases.yaml").read_text(encoding="utf-8"))


def driver(sd: Slowdown) -> str:
    values = {k: getattr(sd.terms, k) for k in TERMS}
    name, value = max(values.items(), key=lambda kv: abs(kv[1]))
    return name if abs(value) > 1e-4 else "none"


def evaluate(case: dict[str, Any]) -> Row:
    cat = load_catalog(str(HERE / case["catalog"]) if case.get("catalog") else None)
    scen = scenario_from_text(case["scenario"], name=case["id"], catalog=cat)
    w = scen.workloads[0]
    ref, x = slowdown(w, scen.offer("bm"), cat), slowdown(w, scen.offer("x"), cat)
    return Row(id=case["id"], measured=float(case["measured"]), predicted=x.total / ref.total - 1,
               tolerance=float(case["tolerance"]), in_sample=bool(case["in_sample"]), driver=driver(x),
               source=case["source"], why=case["tolerance_why"])


def rows() -> list[Row]:
    return [evaluate(c) for c in load_cases()["cases"]]

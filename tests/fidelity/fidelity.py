"""Evaluate the published cases in cases.yaml against the performance model.

Used by test_fidelity.py and benchmarks/fidelity.py (which prints the table). The prediction is
the time of the case's one workload on the platform offer `x` over its time on the offer `bm`, at the
middle of every range: time.slowdown x time.gpu_speed.factor of `compare -o json`, x over bm.
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
    # time on x over time on bm: the slowdowns and, where the GPUs differ, their speed factors
    predicted = x.total * x.gpu_speed_factor / (ref.total * ref.gpu_speed_factor) - 1
    return Row(id=case["id"], measured=float(case["measured"]), predicted=predicted,
               tolerance=float(case["tolerance"]), in_sample=bool(case["in_sample"]), driver=driver(x),
               source=case["source"], why=case["tolerance_why"])


def rows() -> list[Row]:
    return [evaluate(c) for c in load_cases()["cases"]]

"""`cost.decision_over`: the break-even and flip searches' cost of one (workload, offer) as a function
of hours per day or of the duration must be `option_cost(...).decision` to the last bit (the searches
look for exact zeros and compare signs: a different rounding could move a verdict's flip)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gpuplan.engines.cost import decision_over, option_cost
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import load_scenario, scenario_from_text
from gpuplan.inputs.scenario_types import Scenario

CAT = load_catalog()
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))

# every branch: min term, node lease with ops per node-month, interruptions, data moved once, per run
# and daily over a slow link, stretched days over 24 h, days off
MIXED = """
version: 1
currency: USD
team: {engineer_hour_cost: 90, researcher_hour_cost: 35}
sites:
  - {id: home}
  - {id: far}
links:
  - {from: home, to: far, gbps: 2, cost_per_gb: 0.05}
offers:
  - {id: bm, gpu: h100-sxm, mode: bare-metal, price: {amount: [2.0, 2.6], per: gpu-hour}, min_term: 30d,
     ops: 20h/node-month, site: far, interruptions_per_gpu_day: 0.01}
  - {id: node, gpu: h100-sxm, mode: bare-metal, price: {amount: 14000, per: node-month}, lease_unit: node,
     site: home}
  - {id: ct, gpu: h100-sxm, mode: container, price: {amount: [2.5, 3.5], per: gpu-hour}, site: far,
     tenancy: shared-node, ops: 4h/gpu-month}
workloads:
  - {id: once, kind: training, gpu: h100-sxm, gpus: 16, hours_per_day: 20, days_per_week: 5, duration: 45d,
     data: {size_gb: 800, site: home, moves: once}}
  - {id: run, kind: fine-tuning, gpu: h100-sxm, gpus: 4, hours_per_day: 8, days_per_week: 6, duration: 12d,
     data: {size_gb: 300, site: home, moves: per-run}}
  - {id: daily, kind: experiment, gpu: h100-sxm, gpus: 2, hours_per_day: 23.5, days_per_week: 3, duration: 70d,
     data: {size_gb: 50, site: home, moves: daily}}
  - {id: serve, kind: inference, gpu: h100-sxm, gpus: 1, hours_per_day: 24, days_per_week: 7, duration: 200d}
"""


def _scenarios() -> list[Scenario]:
    return [load_scenario(p, CAT) for p in EXAMPLES] + [scenario_from_text(MIXED, "mixed", CAT)]


def test_the_mixed_scenario_exercises_every_branch() -> None:
    s = scenario_from_text(MIXED, "mixed", CAT)
    costs = [option_cost(w, o, s, CAT) for w in s.workloads for o in s.offers]
    assert any(c.transfer.moves > 1 for c in costs) and any(c.transfer.moves == 1 for c in costs)
    assert any(c.interruptions.expected > 0 for c in costs) and any(c.days_after_work > 0 for c in costs)
    assert any(c.billed_gpus > c.gpu_hours_used / max(c.run_hours, 1e-9) for c in costs if c.mode == "bare-metal")


@pytest.mark.parametrize("over", ["hours_per_day", "duration_hours"])
def test_decision_over_is_option_cost_to_the_last_bit(over: str) -> None:
    rng = random.Random(3)
    checked = 0
    for s in _scenarios():
        for w in s.workloads:
            for o in s.offers:
                if o.gpu not in w.gpus_allowed:
                    continue
                f = decision_over(w, o, s, CAT, over)  # type: ignore[arg-type]
                if over == "hours_per_day":
                    xs = [1e-6, 0.5, 6.0, 12.0, 23.999, 24.0] + [rng.uniform(0, 24) for _ in range(30)]
                else:
                    xs = [1.0, 24.0, 168.0, 720.0, w.duration_hours] + [rng.uniform(1, 20000) for _ in range(30)]
                for x in xs:
                    want = option_cost(w, o, s, CAT, **{over: x}).decision
                    assert f(x) == want, (s, w.id, o.id, x)
                    checked += 1
    assert checked > 1000

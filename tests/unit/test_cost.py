"""Hand-computed costs against the formulas in gpuplan.engines.cost."""

import pytest

from gpuplan.engines.cost import option_cost
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text

CAT = load_catalog()

NO_OVERHEAD = ("overhead: {compute: 0, interconnect: 1, jitter: 0}, setup: 0m, ops: 0h/node-month, "
               "interruptions_per_gpu_day: 0")
BASE = f"""
version: 1
currency: CNY
team: {{engineer_hour_cost: 100}}
offers:
  - {{id: bm, gpu: ascend-910b, mode: bare-metal, price: {{amount: 220, per: gpu-day}}, min_term: 30d, {NO_OVERHEAD}}}
  - {{id: ct, gpu: ascend-910b, mode: container, price: {{amount: 10, per: gpu-hour}}, {NO_OVERHEAD}}}
  - {{id: bm-node, gpu: ascend-910b, mode: bare-metal, price: {{amount: 12000, per: node-month}}, lease_unit: node,
      gpus_per_node: 8, min_term: 30d, setup: 12h, ops: 16h/node-month, interruptions_per_gpu_day: 0}}
workloads:
  - {{id: w, kind: experiment, gpu: ascend-910b, gpus: 4, hours_per_day: 6, duration: 30d, utilization: 0.5}}
  - {{id: short, kind: experiment, gpu: ascend-910b, gpus: 4, hours_per_day: 24, duration: 5d, utilization: 1}}
"""


@pytest.fixture(scope="module")
def scen():  # type: ignore[no-untyped-def]
    return scenario_from_text(BASE)


def test_container_bills_running_hours(scen) -> None:  # type: ignore[no-untyped-def]
    c = option_cost(scen.workloads[0], scen.offer("ct"), scen, CAT)
    assert c.rental_mid == pytest.approx(4 * 6 * 30 * 10)
    assert c.total_mid == c.rental_mid  # no ops, no setup
    assert c.idle == pytest.approx(c.rental_mid * 0.5)  # half the running time waits on data
    assert c.wall_hours == pytest.approx(30 * 24)


def test_bare_metal_bills_every_day_and_idle_is_part_of_rental(scen) -> None:  # type: ignore[no-untyped-def]
    c = option_cost(scen.workloads[0], scen.offer("bm"), scen, CAT)
    assert c.rental_mid == pytest.approx(4 * 30 * 220)
    busy = 4 * 6 * 30 * 0.5
    assert c.idle == pytest.approx(c.rental_mid * (1 - busy / (4 * 720)))
    assert c.total_mid == pytest.approx(c.rental_mid)  # idle not added again


def test_min_term_and_node_lease(scen) -> None:  # type: ignore[no-untyped-def]
    w = scen.workloads[1]
    c = option_cost(w, scen.offer("bm-node"), scen, CAT)
    assert c.billed_gpus == 8 and c.nodes == 1
    assert c.lease_hours == pytest.approx(720)  # 5 days + 12 h setup < 30-day term
    assert c.rental_mid == pytest.approx(12000)
    assert c.ops == pytest.approx(16 * 1 * 1 * 100)  # 16 h per node-month, one month, 100/h
    assert c.setup == pytest.approx(12 * 100)
    assert c.days_after_work == pytest.approx(30 - 5.5)
    assert c.total_low == pytest.approx(12000 + 1600 + 1200)


def test_ranges_are_ordered(scen) -> None:  # type: ignore[no-untyped-def]
    for w in scen.workloads:
        for o in scen.offers:
            c = option_cost(w, o, scen, CAT)
            assert c.total_low <= c.total_mid <= c.total_high
            assert 0 <= c.idle <= c.rental_mid + 1e-9


def test_days_off_in_the_schedule_are_not_days_after_the_work() -> None:
    """Mon-Fri for one week on a lease with no term: the weekend is leased, but no `min-term` days."""
    from gpuplan.engines.cost import option_cost
    from gpuplan.inputs.catalog import load_catalog
    from gpuplan.inputs.scenario import scenario_from_text

    cat = load_catalog()
    for term, after in (("0d", 0.0), ("30d", 30 - 0.5 - 7)):
        s = scenario_from_text(f"""
version: 1
currency: CNY
offers:
  - {{id: bm, gpu: h100-sxm, mode: bare-metal, price: {{amount: 200, per: gpu-day}}, min_term: {term}, setup: 12h}}
workloads:
  - {{id: w, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: 8, days_per_week: 5, duration: 7d}}
""", "s.yaml", cat)
        c = option_cost(s.workloads[0], s.offers[0], s, cat)
        assert c.lease_hours == max(12 + 7 * 24, float(term[:-1]) * 24)
        assert c.days_after_work == after

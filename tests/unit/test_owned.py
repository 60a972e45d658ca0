"""Owned hardware (issue 28, `mode: owned`): the scenario's fields, the money model and the break-even,
each figure checked against arithmetic done by hand here (not by the code under test)."""

from __future__ import annotations

import pytest

from gpuplan.engines.advise import advise_workload
from gpuplan.engines.cost import decision_over, option_cost
from gpuplan.errors import ScenarioError
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text

CAT = load_catalog()
# No interruptions, no setup, no ops and one 8-GPU node: every figure below is a product of inputs.
SCENARIO = """
version: 1
currency: USD
team: {{engineer_hour_cost: 0}}
offers:
  - {{id: own, gpu: h100-sxm, mode: owned, gpus_per_node: 8, purchase: {{amount: 250000, per: node}},
     life: 4y, resale: 0.3, power: {{kw_per_node: 10.2, pue: 1.3, price_per_kwh: 0.10}},
     colocation: {{amount: 1500, per: node-month}}, lead_time: 8w, setup: "0", ops: 0h/node-month,
     interruptions_per_gpu_day: 0}}
  - {{id: lease, gpu: h100-sxm, mode: bare-metal, price: {{amount: 1.9, per: gpu-hour}}, lease_unit: node,
     min_term: 365d, setup: "0", ops: 0h/node-month, interruptions_per_gpu_day: 0}}
  - {{id: cloud, gpu: h100-sxm, mode: container, price: {{amount: 2.5, per: gpu-hour}}, setup: "0",
     interruptions_per_gpu_day: 0,
     overhead: {{compute: 0, intra_node: 1, inter_node: 1, jitter: 0}}}}
workloads:
  - {{id: w, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: {h}, duration: 3y, utilization: 0.9}}
"""

DAYS = 3 * 365
CAPEX_RATE = 250000 * 0.7 / (4 * 8760)  # 4.994292... USD per node-hour held
BUSY_RATE = 10.2 * 1.3 * 0.10  # 1.326 USD per node-hour running
IDLE_RATE = BUSY_RATE * 0.35  # the catalog's idle share
COLO_RATE = 1500 / (30 * 24)  # 2.0833... USD per node-hour


def scenario(h: float):  # noqa: ANN201
    return scenario_from_text(SCENARIO.format(h=h), "t.yaml", CAT)


def test_an_owned_offer_is_a_node_lease_at_its_hourly_cost() -> None:
    s = scenario(24)
    o = s.offer("own")
    assert o.mode == "bare-metal" and o.lease_unit == "node" and o.owned is not None
    assert o.owned.capex_per_node_hour == pytest.approx(4.99429, abs=1e-5)
    assert o.owned.power_busy_per_node_hour == pytest.approx(1.326)
    # held per node-hour: capex + colocation + idle power = 4.99429 + 2.08333 + 0.46410
    assert o.price_per_gpu_hour.mid * 8 == pytest.approx(7.54172, abs=1e-5)
    assert o.owned.lead_time_hours == 8 * 168
    assert "power.idle_share" in o.defaults_used


@pytest.mark.parametrize(("h", "capex", "power", "colocation"), [
    # three years of a four-year write-off: 175,000 x 3/4; rack: 1,500 x 36.5 months
    (24, 131250.0, 1.326 * 26280, 54750.0),
    # 7 h a day: 7,665 node-hours at full draw, 18,615 at the idle draw
    (7, 131250.0, 1.326 * 7665 + 0.4641 * 18615, 54750.0),
])
def test_cost_items_by_hand(h: float, capex: float, power: float, colocation: float) -> None:
    s = scenario(h)
    c = option_cost(s.workloads[0], s.offer("own"), s, CAT)
    assert c.owned is not None
    assert c.owned.capex == pytest.approx(capex)
    assert c.owned.power == pytest.approx(power)
    assert c.owned.colocation == pytest.approx(colocation)
    assert c.rental_mid == pytest.approx(capex + power + colocation)
    assert c.total_mid == pytest.approx(capex + power + colocation)
    assert c.wall_hours == pytest.approx(DAYS * 24 + 1344)  # the work waits 8 weeks for delivery
    assert c.lease_hours == pytest.approx(DAYS * 24)  # nothing is paid before delivery


def test_buy_wins_around_the_clock_and_renting_wins_at_seven_hours() -> None:
    # by hand: buy 24 h = 131,250 + 34,847.28 + 54,750 = 220,847; lease = 8 x 26,280 x 1.9 = 399,456;
    # cloud = 8 x 26,280 x 2.5 = 525,600. 7 h: buy 204,803; cloud 8 x 7,665 x 2.5 = 153,300.
    s24, s7 = scenario(24), scenario(7)
    a24, a7 = advise_workload(s24.workloads[0], s24, CAT), advise_workload(s7.workloads[0], s7, CAT)
    assert a24.recommendation is not None and a24.recommendation.offer == "own"
    assert a7.recommendation is not None and a7.recommendation.offer == "cloud"
    costs24 = {r.offer.id: r.cost.total_mid for r in a24.options}
    assert costs24 == pytest.approx({"own": 220847.28, "lease": 399456.0, "cloud": 525600.0})
    costs7 = {r.offer.id: r.cost.total_mid for r in a7.options}
    assert costs7["own"] == pytest.approx(204803.01, abs=0.01) and costs7["cloud"] == pytest.approx(153300.0)


def test_break_even_against_each_rented_option() -> None:
    s = scenario(24)
    adv = advise_workload(s.workloads[0], s, CAT)
    by_other = {b.other: b for b in adv.buy_break_even}
    # cloud(h) = 8 x 2.5 x 1095 h; own(h) = 1095 days x 24 x (capex + colo + idle) + 1095 h x (busy - idle)
    fixed = DAYS * 24 * (CAPEX_RATE + COLO_RATE + IDLE_RATE)
    h = fixed / (8 * 2.5 * DAYS - DAYS * (BUSY_RATE - IDLE_RATE))  # 9.4577 h a day
    assert by_other["cloud"].hours_per_day == pytest.approx(h, rel=1e-6)
    assert by_other["cloud"].buy_wins == "above"
    assert by_other["lease"].hours_per_day is None and by_other["lease"].buy_wins == "always"
    keys = [n.key for n in adv.recommendation.reasons] if adv.recommendation else []
    assert "r_buy_above" in keys and "r_buy_always" in keys


def test_decision_over_matches_option_cost_for_owned() -> None:
    s = scenario(10)
    w, o = s.workloads[0], s.offer("own")
    f = decision_over(w, o, s, CAT, "hours_per_day")
    for h in (0.5, 3.0, 9.4, 17.0, 24.0):
        assert f(h) == option_cost(w, o, s, CAT, hours_per_day=h).decision


def _error(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as exc:
        scenario_from_text(text, "t.yaml", CAT)
    return exc.value


OWN = ("version: 1\ncurrency: USD\noffers:\n  - {id: own, gpu: h100-sxm, mode: owned, %s}\n"
       "workloads:\n  - {id: w, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: 8, duration: 30d}\n")
FULL = "purchase: {amount: 250000, per: node}, life: 4y, power: {kw_per_node: 10, price_per_kwh: 0.1}"


@pytest.mark.parametrize(("fields", "field", "words"), [
    (FULL + ", price: {amount: 2, per: gpu-hour}", "offers[0].price", "no rental price"),
    ("life: 4y, power: {kw_per_node: 10, price_per_kwh: 0.1}", "offers[0].purchase", "required for mode: owned"),
    (FULL.replace("life: 4y", "life: 4"), "offers[0].life", "e.g. 4y"),
    (FULL.replace("life: 4y", "life: \"0\""), "offers[0].life", "longer than 0"),
    (FULL + ", resale: 1.2", "offers[0].resale", "less than 1"),
    (FULL + ", lease_unit: gpu", "offers[0].lease_unit", "by the node"),
])
def test_owned_errors_name_the_field(fields: str, field: str, words: str) -> None:
    err = _error(OWN % fields)
    assert err.field == field, (err.field, str(err))
    assert words in str(err)
    assert err.hint


def test_owned_fields_on_a_rented_offer_are_refused() -> None:
    text = OWN.replace("mode: owned, %s", "mode: bare-metal, price: {amount: 2, per: gpu-hour}, life: 4y")
    err = _error(text)
    assert err.field == "offers[0].life" and "mode: owned" in str(err)


def test_defaults_recorded() -> None:
    s = scenario_from_text(OWN % FULL, "t.yaml", CAT)
    o = s.offer("own")
    assert o.owned is not None and o.owned.resale == 0 and o.owned.colocation_per_node_hour == 0
    assert {"resale", "colocation", "lead_time", "power.idle_share"} <= set(o.defaults_used)


def test_plan_buys_the_standing_pool_and_rents_until_delivery() -> None:
    from gpuplan import api

    res = api.plan(scenario(24), catalog=CAT)
    (pool,) = res.pools
    assert pool.bm is not None and pool.bm.id == "own" and pool.reserved == 8
    f = 720 / 26280  # per month over the three-year horizon
    held = 26280 - 1344  # paid from delivery, 8 weeks after the start
    assert pool.lease_hours == pytest.approx(held)
    # by hand: a node-hour held = 4.994292 capex + 2.083333 rack + 0.4641 idle power = 7.541725
    assert pool.lease_per_month == pytest.approx(held * 7.541725 * f, rel=1e-6)
    # running all the time after delivery: (1.326 - 0.4641) per node-hour
    assert pool.power_per_month == pytest.approx(held * 0.8619 * f, rel=1e-6)
    # the 8 weeks before delivery run in containers: 8 GPUs x 1,344 h x 2.5
    assert pool.spill_per_month == pytest.approx(8 * 1344 * 2.5 * f, rel=1e-6)
    assert pool.hybrid_per_month == pytest.approx(5152.34 + 588.84 + 736.44, abs=0.02)


def test_commit_holds_bought_servers_for_the_whole_horizon() -> None:
    from gpuplan.engines.commit import term_options

    s = scenario(24)
    (opt,) = term_options(s, s.offer("own"), 36)
    assert opt.months == 36 and opt.price_per_gpu_hour == pytest.approx(7.541725 / 8, rel=1e-6)
    (lease,) = term_options(s, s.offer("lease"), 36)
    assert lease.months == 13  # a lease keeps its own term (365 days in 30-day months, rounded up)

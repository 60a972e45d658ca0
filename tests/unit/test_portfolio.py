"""A real portfolio in every command (issue 25): GPU alternatives in plan and commit.

The oracle is `compare`: its options are priced one workload at a time by `engines.cost`, a different
path from plan's pool sizing. For a scenario of one workload listing two GPUs, plan's monthly cost is
no more than compare's verdict per month (a workload's total over its duration in months, in both
commands), and plan runs it on the GPU compare recommends.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan import api
from gpuplan.engines.alternatives import on_gpu
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text

CAT = load_catalog()
ROOT = Path(__file__).resolve().parents[2]


def _two_gpus(a_bm: float, a_ct: float, h_bm: float, h_ct: float, workload: str, *, a_ct_offer: bool = True,
              extra: str = "") -> str:
    a_ct_line = (f"  - {{id: a-ct, gpu: a100-80g, mode: container, price: {{amount: {a_ct}, per: gpu-hour}}}}\n"
                 if a_ct_offer else "")
    return f"""
version: 1
currency: CNY
offers:
  - {{id: a-bm, gpu: a100-80g, mode: bare-metal, price: {{amount: {a_bm}, per: gpu-day}}, rdma: infiniband,
     interruptions_per_gpu_day: 0}}
{a_ct_line}  - {{id: h-bm, gpu: h100-sxm, mode: bare-metal, price: {{amount: {h_bm}, per: gpu-day}}, rdma: infiniband,
     interruptions_per_gpu_day: 0}}
  - {{id: h-ct, gpu: h100-sxm, mode: container, price: {{amount: {h_ct}, per: gpu-hour}}}}
workloads:
{workload}
{extra}"""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([60.0, 120.0, 200.0]), st.sampled_from([3.0, 6.0, 12.0]),
       st.sampled_from([100.0, 200.0, 400.0]), st.sampled_from([5.0, 10.0, 25.0]),
       st.integers(1, 16), st.sampled_from([2.0, 8.0, 16.0]), st.integers(1, 7), st.integers(5, 70),
       st.sampled_from(["training", "experiment"]))
def test_plan_picks_compares_gpu_at_no_more_than_its_monthly_cost(a_bm: float, a_ct: float, h_bm: float,
                                                                  h_ct: float, gpus: int, hours: float, dpw: int,
                                                                  days: int, kind: str) -> None:
    wl = (f"  - {{id: w, kind: {kind}, gpu: [a100-80g, h100-sxm], gpus: {gpus}, hours_per_day: {hours}, "
          f"days_per_week: {dpw}, duration: {days}d}}")
    scen = scenario_from_text(_two_gpus(a_bm, a_ct, h_bm, h_ct, wl), "s.yaml", CAT)
    adv = api.compare(scen, catalog=CAT).advice[0]
    assert adv.recommendation is not None
    win = next(o for o in adv.options if o.offer.id == adv.recommendation.offer)
    res = api.plan(scen, catalog=CAT)
    plan_month = res.per_month("hybrid_per_month")
    assert plan_month <= win.cost.per_month * (1 + 1e-9) + 1e-6
    chosen = res.assignments[0].workload.gpus_allowed[0]
    if chosen != win.offer.gpu:  # only where plan found a strictly cheaper mix than compare's best option
        best = min(o.cost.per_month for o in adv.options if o.offer.gpu == chosen)
        assert plan_month < win.cost.per_month * (1 - 1e-9), (chosen, win.offer.id)
        assert plan_month <= best * (1 + 1e-9)


def test_the_issue_case_plan_follows_compare_to_h100() -> None:
    """A100 leases dearer per unit of work than H100's: compare and plan both choose H100, and say why."""
    wl = "  - {id: w, kind: training, gpu: [a100-80g, h100-sxm], gpus: 8, hours_per_day: 24, duration: 60d}"
    scen = scenario_from_text(_two_gpus(200.0, 9.0, 260.0, 12.0, wl), "s.yaml", CAT)
    adv = api.compare(scen, catalog=CAT).advice[0]
    assert adv.recommendation is not None and adv.recommendation.offer.startswith("h-")
    doc = api.plan_document(scen, catalog=CAT)
    a = doc.assignments[0]
    assert a.gpu == "h100-sxm" and [p.gpu for p in doc.pools] == ["h100-sxm"]
    assert a.gpu_reason is not None and "a100-80g" in a.gpu_reason and "h100-sxm" in a.gpu_reason
    win = next(o for o in adv.options if o.offer.id == adv.recommendation.offer)
    assert doc.cost_per_month.hybrid is not None
    assert doc.cost_per_month.hybrid <= win.cost.per_month + 0.005  # the document rounds to cents


def test_work_moves_in_gpu_hours_by_the_speed_ratio() -> None:
    """8 h a day on A100 is 8 x t_h100 / t_a100 hours on H100 (the catalog's published MLPerf BF16 ratio,
    1.9, issue 24 -- not the roofline's 989 / 312), same days."""
    scen = scenario_from_text(_two_gpus(150.0, 9.0, 260.0, 20.0, "  - {id: w, kind: training, gpu: [a100-80g, "
                                        "h100-sxm], gpus: 4, hours_per_day: 8, duration: 30d}"), "s.yaml", CAT)
    w = scen.workloads[0]
    a, h = CAT.gpus["a100-80g"], CAT.gpus["h100-sxm"]
    moved = on_gpu(w, "h100-sxm", CAT)
    assert moved.gpus_allowed[0] == "h100-sxm"
    assert moved.hours_per_day == pytest.approx(8 / 1.9)  # catalog gpu_speed mlperf-training-a100-h100-bf16
    assert moved.hours_per_day > 8 * a.bf16_tflops / h.bf16_tflops  # slower than the roofline says
    assert moved.duration_hours == w.duration_hours and moved.gpus == 4
    # a slower GPU that needs more than 24 h a day: a longer calendar, the same GPU-hours
    w24 = scenario_from_text(_two_gpus(150.0, 9.0, 260.0, 20.0, "  - {id: w, kind: training, gpu: [h100-sxm, "
                                       "a100-80g], gpus: 2, hours_per_day: 20, duration: 14d}"), "s.yaml", CAT)
    slow = on_gpu(w24.workloads[0], "a100-80g", CAT)
    ratio = 1.9  # the catalog's published ratio (issue 24), as above
    assert slow.hours_per_day == 24.0
    assert slow.duration_hours == pytest.approx(14 * 24 * 20 * ratio / 24)


def test_commit_uses_a_listed_gpu_with_a_container_offer() -> None:
    """`commit needs a container offer for a100-80g` no longer stops a workload that may run on H100."""
    wl = "  - {id: w, kind: training, gpu: [a100-80g, h100-sxm], gpus: 8, hours_per_day: 24, duration: 90d}"
    scen = scenario_from_text(_two_gpus(150.0, 9.0, 260.0, 20.0, wl, a_ct_offer=False,
                                        extra="market: {horizon: 6mo}"), "s.yaml", CAT)
    rep = api.commit(scen, catalog=CAT, paths=200)
    assert [g["gpu"] for g in rep.view["gpus"]] == ["h100-sxm"]
    assert any(r.startswith("w: on h100-sxm, the only one") for r in rep.to_json()["reasons"])


# --- waiting and the cost curve --------------------------------------------------------------------

CONTAINERS_ONLY = """
version: 1
currency: CNY
team: {researcher_hour_cost: 200}
offers:
  - {id: ct, gpu: h100-sxm, mode: container, price: {amount: 20, per: gpu-hour}}
workloads:
  - {id: w, kind: experiment, gpu: h100-sxm, gpus: 4, hours_per_day: 6, duration: 30d}
"""


def test_a_waiting_budget_with_no_pool_says_there_is_no_wait() -> None:
    scen = scenario_from_text(CONTAINERS_ONLY, "s.yaml", CAT)
    doc = api.plan_document(scen, catalog=CAT, max_wait="p95=2h")
    assert doc.waiting is not None
    (wt,) = doc.waiting
    assert wt.reserved_gpus == [0] and wt.recommended is not None
    assert wt.recommended.wait_hours.model_dump() == {"mean": 0.0, "p50": 0.0, "p95": 0.0, "max": 0.0}
    # everything bursts at once: the plan's own cost, no waiting to price
    assert wt.recommended.cost_per_month == pytest.approx(doc.cost_per_month.hybrid, abs=0.01)
    assert wt.recommended.waiting_cost_per_month == 0.0


def test_waiting_costs_its_price_in_plan() -> None:
    """4 GPUs 6 h a day on a 2-card pool that may wait 24 h: the waits are priced at 200 CNY per
    researcher-hour, one researcher per 4-GPU job."""
    text = CONTAINERS_ONLY.replace(
        "offers:\n", "offers:\n  - {id: bm, gpu: h100-sxm, mode: bare-metal, price: {amount: 100, per: gpu-day}}\n")
    scen = scenario_from_text(text, "s.yaml", CAT)
    doc = api.plan_document(scen, catalog=CAT, max_wait="p95=24h")
    (wt,) = doc.waiting or []
    rec = wt.recommended
    assert rec is not None and rec.waiting_cost_per_month is not None
    if rec.reserved_gpus in (1, 2, 3):  # a pool smaller than the job: its work waits and the wait is paid
        assert rec.waiting_cost_per_month > 0
    # by hand for R = 2: each day 24 GPU-hours arrive over 6 h (4 an hour); 2 an hour are served, the
    # queue drains over the next 6 h, so the GPU-hours wait 0..6 h; the priced figure is their
    # GPU-hour-weighted wait / 4 GPUs x 200 CNY
    from gpuplan.engines.waiting import fluid_queue, waiting_cost

    pool = api.plan(scen, catalog=CAT).pools[0]
    fr = fluid_queue(pool.demand_pool, 2, 24.0)
    gpu_hours = float(pool.demand_pool.sum())
    assert waiting_cost(fr, pool.demand_pool, scen, "h100-sxm") == pytest.approx(
        200 * fr.wait_hours["mean"] * gpu_hours / 4)
    assert 0 < fr.wait_hours["mean"] <= 6


def test_the_cost_curve_adds_each_sizes_container_setups() -> None:
    """At R = 0 every workload runs in containers: the curve's first point is the all-container cost
    (each workload's container setup once), not the optimum's setups."""
    res = api.plan(ROOT / "examples" / "seed-910b.yaml", catalog=CAT)
    p = res.pools[0]
    assert int(p.sizing.candidates[0]) == 0
    assert float(p.curve_per_month[0]) == pytest.approx(p.all_container_per_month, rel=1e-12)
    i = list(p.sizing.candidates).index(p.reserved)
    assert float(p.curve_per_month[i]) == pytest.approx(p.hybrid_per_month, rel=1e-12)


# --- dated one-off work, services, signed leases (the issue's "done when") -------------------------

PORTFOLIO = """
version: 1
currency: CNY
start: 2027-01-01
team: {engineer_hour_cost: 150}
offers:
  - {id: bm, gpu: ascend-910b, mode: bare-metal, price: {amount: 200, per: gpu-day}, lease_unit: node, min_term: 30d}
  - {id: ct, gpu: ascend-910b, mode: container, price: {amount: 12, per: gpu-hour}}
market: {horizon: 6mo}
workloads:
  - {id: core, kind: training, gpu: ascend-910b, gpus: 8, hours_per_day: 24, duration: 180d}
  - {id: experiments, kind: experiment, gpu: ascend-910b, gpus: 4, hours_per_day: 6, duration: 180d}
  - id: chat
    kind: inference
    gpu: ascend-910b
    gpus: 1
    hours_per_day: 24
    duration: 180d
    service: {peak: 30, unit: requests/s, per_replica: 10, min_replicas: 1,
              daily_profile: [0, 0, 0, 0, 0, 0, 0.2, 0.4, 0.6, 0.8, 1, 1, 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2, 0, 0, 0, 0]}
"""
ONE_OFF = ("  - {id: pretrain, kind: training, gpu: ascend-910b, gpus: 64, hours_per_day: 24, duration: 21d, "
           "start: 2027-03-02, once: true}\n")


def _scen(text: str) -> object:
    return scenario_from_text(text, "s.yaml", CAT)


def test_plan_never_sizes_a_standing_pool_from_one_off_work() -> None:
    with_run = api.plan_document(_scen(PORTFOLIO + ONE_OFF), catalog=CAT)
    without = api.plan_document(_scen(PORTFOLIO), catalog=CAT)
    # the pools are those of the ongoing work alone: the 64-GPU run leases no standing card
    assert [(p.gpu, p.reserved_gpus, p.demand.peak) for p in with_run.pools] == \
        [(p.gpu, p.reserved_gpus, p.demand.peak) for p in without.pools]
    assert with_run.pools[0].demand.peak < 64
    (pr,) = with_run.projects or []
    assert pr.workload == "pretrain" and pr.start == "2027-03-02" and pr.months == pytest.approx(0.7)
    assert pr.choice in ("lease", "containers") and "around the clock for 21 days, once" in pr.reason
    # its cost is compare's for that option (its own dates and duration)
    adv = api.compare(_scen(PORTFOLIO + ONE_OFF), catalog=CAT).advice[-1]
    opt = next(o for o in adv.options if o.offer.id == pr.offer)
    assert pr.cost == pytest.approx(opt.cost.total_mid, abs=0.01)
    assert pr.cost == pytest.approx(min(o.cost.total_mid for o in adv.options), abs=0.01)
    assert "intermittent" not in pr.reason


def test_a_service_bills_at_least_one_replica_around_the_clock() -> None:
    res = api.plan(_scen(PORTFOLIO), catalog=CAT)
    curve = res.demand.by_workload["chat"][: 180 * 24]
    assert float(curve.min()) >= 1.0  # min_replicas x 1 GPU, every hour, though the night's load is 0
    # peak: ceil(30 / 10) = 3 replicas; the hour before each step up also pays the new replica's start-up
    assert float(curve.max()) == pytest.approx(3.0)
    day = curve[:24]
    assert day[0] == 1.0 and day[12] == 3.0
    assert float(curve.sum()) >= 180 * 24 * 1.0


def test_half_throughput_on_the_second_gpu_means_twice_the_replicas_same_calendar() -> None:
    text = """
version: 1
currency: CNY
offers:
  - {id: ct-h, gpu: h100-sxm, mode: container, price: {amount: 20, per: gpu-hour}}
  - {id: ct-a, gpu: a100-80g, mode: container, price: {amount: 9, per: gpu-hour}}
workloads:
  - id: chat
    kind: inference
    gpu: [h100-sxm, a100-80g]
    speed: {a100-80g: 0.5}
    gpus: 1
    hours_per_day: 24
    duration: 30d
    service: {peak: 80, unit: tokens/s, per_replica: 10}
"""
    scen = _scen(text)
    w = scen.workloads[0]
    moved = on_gpu(w, "a100-80g", CAT)
    assert w.gpus == 8 and moved.gpus == 16  # ceil(80 / 10) -> ceil(80 / 5)
    assert moved.duration_hours == w.duration_hours and moved.hours_per_day == w.hours_per_day == 24
    adv = api.compare(scen, catalog=CAT).advice[0]
    h = next(o for o in adv.options if o.offer.id == "ct-h").cost
    a = next(o for o in adv.options if o.offer.id == "ct-a").cost
    # never a longer calendar: the same days on both (each stretched alike by its container's platform
    # slowdown, 1.17 here; a calendar stretched by the speed would be twice as long)
    assert a.calendar_hours == pytest.approx(h.calendar_hours, rel=0.01)
    assert a.slowdown.gpu_speed_factor == 1.0  # the speed went into the replicas, not the hours
    assert a.gpu_hours_used / a.slowdown.total == pytest.approx(2 * h.gpu_hours_used / h.slowdown.total, rel=0.02)


SIGNED = """
version: 1
currency: CNY
start: 2027-01-01
team: {engineer_hour_cost: 150}
offers:
  - {id: bm-a100, gpu: a100-80g, mode: bare-metal, price: {amount: 150, per: gpu-day}, lease_unit: node,
     min_term: 30d, ops: 8h/node-month}
  - {id: ct-a100, gpu: a100-80g, mode: container, price: {amount: 9, per: gpu-hour}}
market: {horizon: 12mo}
workloads:
  - {id: steady, kind: training, gpu: a100-80g, gpus: 8, hours_per_day: 24, duration: 360d}
"""
COMMITMENT = "commitments:\n  - {offer: bm-a100, cards: 8, until: 2027-05-01, paid: true}\n"


def test_a_signed_lease_is_used_first_and_saves_its_paid_months() -> None:
    """8 cards paid until the fourth month's end (120 days = 4 months of 30 days) and steady 8-GPU work:
    no new tranche before month 4, and the expected cost is lower by 4 months of rental:
    8 cards x 150 CNY a card-day x 120 days = 144,000 CNY (ops are paid either way)."""
    signed = api.commit(_scen(SIGNED + COMMITMENT), catalog=CAT, paths=200).to_json()
    plain = api.commit(_scen(SIGNED), catalog=CAT, paths=200).to_json()
    assert signed["ladders"] and all(x["start_month"] >= 4 for x in signed["ladders"])
    assert any(x["start_month"] == 0 for x in plain["ladders"])
    assert plain["cost"]["expected"] - signed["cost"]["expected"] == pytest.approx(8 * 150 * 120, abs=1.0)
    assert any("already signed until 2027-05-01" in r for r in signed["reasons"])
    # plan: the same signed cards, used first; the new lease runs from May (8 of 12 months)
    p_signed = api.plan_document(_scen(SIGNED + COMMITMENT), catalog=CAT).pools[0]
    p_plain = api.plan_document(_scen(SIGNED), catalog=CAT).pools[0]
    assert p_signed.committed_gpus == 8 and p_signed.committed_until == "2027-05-01"
    assert p_signed.cost_per_month.lease is not None and p_plain.cost_per_month.lease is not None
    assert p_plain.cost_per_month.lease - p_signed.cost_per_month.lease == pytest.approx(8 * 150 * 120 / 12, abs=0.01)
    # compare: the signed lease is the option the team already has
    adv = api.compare(_scen(SIGNED + COMMITMENT), catalog=CAT).advice[0]
    assert any(wn.code == "signed" for wn in adv.warnings)


def test_commit_places_one_off_work_in_its_months_only() -> None:
    with_run = api.commit(_scen(PORTFOLIO + ONE_OFF), catalog=CAT, paths=100).view
    without = api.commit(_scen(PORTFOLIO), catalog=CAT, paths=100).view
    a, b = with_run["gpus"][0]["leased"], without["gpus"][0]["leased"]
    # months of 30 days from 2027-01-01: the run (2027-03-02 + 21 days) is in month 2 only
    assert [x for m, x in enumerate(a) if m != 2] == [x for m, x in enumerate(b) if m != 2]
    assert a[2] >= b[2]


def test_the_portfolio_example_runs_in_every_command() -> None:
    path = ROOT / "examples" / "portfolio.yaml"
    doc = api.plan_document(path, catalog=CAT)
    assert [p.workload for p in doc.projects or []] == ["pretrain-64"]
    # by hand: 64 H100 on bm-h100 at 300 CNY a card-day for its 30-day minimum term = 576,000, ops
    # 8 h per node-month x 8 nodes x 150 CNY = 9,600, setup 12 h x 150 = 1,800 (the catalog's default)
    (pr,) = doc.projects or []
    assert (pr.choice, pr.offer, pr.cost) == ("lease", "bm-h100", 576_000 + 9_600 + 1_800)
    assert all(p.demand.peak < 64 for p in doc.pools)
    rep = api.commit(path, catalog=CAT, paths=100).to_json()
    months = {x["start_month"] for x in rep["ladders"] if x["gpu"] == "h100-sxm" and x["cards"] >= 64}
    assert months <= {2}
    assert not [x for x in rep["ladders"] if x["gpu"] == "a100-80g" and x["start_month"] < 4]


def _sample_rows(days: int = 60, bursts: tuple[int, ...] = (20,)) -> list:  # type: ignore[type-arg]
    """`days` of 8 GPUs 09:00-18:00 on ascend-910b, and 64 more around the clock for 21 days from each
    day in `bursts`."""
    from datetime import UTC, datetime, timedelta

    from gpuplan.telemetry.demand import DemandRow

    t0 = datetime(2026, 1, 5, tzinfo=UTC)
    rows = []
    for h in range(days * 24):
        gpus = 8.0 if 9 <= h % 24 < 18 else 0.0
        if any(b * 24 <= h < (b + 21) * 24 for b in bursts):
            gpus += 64.0
        if gpus:
            rows.append(DemandRow((t0 + timedelta(hours=h)).strftime("%Y-%m-%dT%H:00:00Z"), "ascend-910b", gpus))
    return rows


def test_audit_marks_a_burst_seen_once_and_plan_takes_it_out(tmp_path: Path) -> None:
    from gpuplan.telemetry.demand import demand_csv, mark_once

    rows = mark_once(_sample_rows())
    once = [r for r in rows if r.once > 0]
    assert len(once) == 21 * 24 and all(r.once == 64.0 for r in once)  # by hand: the 64 extra GPUs
    # a burst that recurs is not one-off: two such runs leave the curve as it is
    assert not any(r.once for r in mark_once(_sample_rows(120, (20, 80))))
    # nor is one still running when the sample ends
    assert not any(r.once for r in mark_once(_sample_rows(50, (30,))))
    path = tmp_path / "demand.csv"
    path.write_text(demand_csv(rows), encoding="utf-8")
    assert path.read_text().splitlines()[0] == "time,gpu,gpus,once"
    scen = ROOT / "examples" / "seed-910b.yaml"
    doc = api.plan_document(scen, catalog=CAT, demand=path)
    assert doc.one_off_removed == {"ascend-910b": 64.0 * 21 * 24}
    assert doc.pools[0].demand.peak == 8.0  # the standing demand only
    assert doc.pools[0].reserved_gpus <= 8


def test_one_off_work_the_standing_pools_spare_cards_cover_costs_nothing_new() -> None:
    """16 leased cards (8 GPUs around the clock + 8 from 08:00 to 20:00, at 100 CNY a card-day, cheaper than
    12 h of containers at 12 CNY/h): a one-off 8-GPU run from 20:00 to 08:00 for 5 days fits the 8 cards
    left at night, so it runs there at no new cost, and the plan says so."""
    text = """
version: 1
currency: CNY
start: 2027-01-01
offers:
  - {id: bm, gpu: ascend-910b, mode: bare-metal, price: {amount: 100, per: gpu-day}, setup: 0h, ops: 0h/node-month}
  - {id: ct, gpu: ascend-910b, mode: container, price: {amount: 12, per: gpu-hour}}
workloads:
  - {id: core, kind: training, gpu: ascend-910b, gpus: 8, hours_per_day: 24, duration: 90d}
  - {id: day, kind: experiment, gpu: ascend-910b, gpus: 8, hours_per_day: 12, window: "08:00-20:00", duration: 90d}
  - {id: night, kind: experiment, gpu: ascend-910b, gpus: 8, hours_per_day: 12, window: "20:00-08:00",
     duration: 5d, start: 2027-02-01, once: true}
"""
    doc = api.plan_document(_scen(text), catalog=CAT)
    assert doc.pools[0].reserved_gpus == 16
    (pr,) = doc.projects or []
    assert (pr.choice, pr.cost, pr.offer) == ("pool", 0.0, "bm")
    assert "spare cards cover it" in pr.reason

"""From costs to a verdict: hard rules, the article's four dimensions, break-even and what flips it.

- Hard rules: `compliance` and `custom-driver` allow bare metal only; `elastic` allows containers only;
  `no-preemption` and `compliance` never run on spot capacity, nor does spot work that cannot finish
  (`models.preemption`: a checkpoint segment outlives the instance, or the lost work grows it past the limit).
- Spot (issue 26): when a spot option is among the feasible or decides, a reason says what it costs
  against the best capacity that is not preemptible and how much of its work it loses, to how many
  preemptions, at what checkpoint interval.
- Verdict: the feasible option with the lowest decision cost (mid prices; slowdown is priced because
  containers bill the stretched running hours; waiting is priced at researcher_hour_cost per wall hour).
- Break-even hours per day: the h in (0, 24] where the cheapest feasible container option and the
  cheapest feasible bare-metal option have the same decision cost (root of their difference).
- Flip: the hours per day, duration and price at which the runner-up of the other mode would win.
- Dimensions (each favours bare-metal, container or neither, with a reason):
  performance  bare metal when the container's slowdown exceeds bare metal's by >= 5% and
               utilisation >= 0.7 (the article: below 70% the edge is wasted);
  flexibility  containers for experiments, inference, elastic needs and projects under a week, or when
               bare-metal setup is over 2% of the project; otherwise neither;
  cost         the cheaper mode when the difference is over 5%;
  scenario     the article's lists of typical container and bare-metal scenarios; the longer list wins.
Engines return message keys and values (`Note`); renderers translate them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplan.engines import breakeven
from gpuplan.engines.cost import OptionCost, decision_over, option_cost
from gpuplan.inputs.catalog import Catalog
from gpuplan.inputs.scenario_types import Offer, Scenario, Workload
from gpuplan.models.perf import card_slice, is_multi_node
from gpuplan.models.preemption import MAX_STRETCH

PERF_EDGE = 0.05
COST_EDGE = 0.05
SETUP_SHARE = 0.02
RECOVERY_SHARE = 0.02  # waiting on repairs for more than 2% of the run counts against stability
DATA_SHARE = 0.01  # moving data for more than 1% of the project's duration counts against an option


@dataclass(frozen=True)
class Note:
    """A message key (i18n catalog `compare.<key>`) and the values it formats."""

    key: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Warning:
    code: str
    note: Note


@dataclass(frozen=True)
class Dimension:
    favors: str
    reason: Note


@dataclass(frozen=True)
class Flip:
    parameter: str
    value: float | str | None
    note: Note


@dataclass(frozen=True)
class OptionResult:
    offer: Offer
    feasible: bool
    infeasible_reason: Note | None
    cost: OptionCost
    warnings: tuple[Warning, ...]


@dataclass(frozen=True)
class Recommendation:
    offer: str
    mode: str
    reasons: tuple[Note, ...]
    dimensions: dict[str, Dimension]
    flip: tuple[Flip, ...]


@dataclass(frozen=True)
class WorkloadAdvice:
    workload: Workload
    warnings: tuple[Warning, ...]
    options: tuple[OptionResult, ...]
    recommendation: Recommendation | None
    break_even_hours: float | None
    buy_break_even: tuple[BuyBreakEven, ...] = ()  # owned offers against each rented option (issue 28)


@dataclass(frozen=True)
class BuyBreakEven:
    """Where buying (`owned`, the cheapest feasible owned offer) costs the same as renting `other`.

    hours_per_day: the root of other's decision cost - owned's over (0, 24] (None: they never cross);
    buy_wins: 'above' (buying is cheaper above those hours a day), 'below', 'always' or 'never'."""

    owned: str
    other: str
    other_mode: str
    hours_per_day: float | None
    buy_wins: str
    owned_at_24: float
    other_at_24: float


@dataclass(frozen=True)
class HoursCurve:
    """One option's decision cost at each hours-per-day value (the report's break-even chart)."""

    offer: str
    mode: str
    feasible: bool
    points: tuple[tuple[float, float], ...]


HOURS_STEP = 0.5


def hours_grid(step: float = HOURS_STEP) -> list[float]:
    """(0, 24] in `step` hours: 0.5, 1.0, ..., 24.0."""
    n = int(round(24 / step))
    return [step * k for k in range(1, n + 1)]


def hours_curves(adv: WorkloadAdvice, s: Scenario, cat: Catalog, hours: list[float] | None = None) -> list[HoursCurve]:
    """The decision cost (total at mid prices + priced waiting, what the verdict minimises) of each
    option of one workload at each hours-per-day value; the break-even is where the cheapest
    container curve crosses the cheapest bare-metal curve. Computed on request (reports), not by `advise`."""
    grid = hours if hours is not None else hours_grid()
    return [HoursCurve(r.offer.id, r.offer.mode, r.feasible,
                       tuple((h, _decision(adv.workload, r.offer, s, cat, hours_per_day=h)) for h in grid))
            for r in adv.options]


def feasibility(w: Workload, o: Offer, cat: Catalog) -> Note | None:
    """Why `w` cannot run on `o` (a hard rule), or None."""
    # compliance needs hardware of one's own; a custom driver needs a kernel of one's own (a VM has one);
    # elastic scaling needs hourly billing, whatever the platform. Spot capacity can be reclaimed.
    if o.capacity == "spot" and {"no-preemption", "compliance"} & w.requires:
        return Note("infeasible_spot")
    if "compliance" in w.requires and o.platform != "bare-metal":
        return Note("infeasible_compliance")
    if "custom-driver" in w.requires and o.platform == "container":
        return Note("infeasible_custom_driver")
    if o.mode == "bare-metal" and "elastic" in w.requires:
        return Note("infeasible_elastic")
    spec = cat.gpus.get(o.gpu)
    have = spec.memory_gb * card_slice(w, o, cat)[1] if spec is not None else 0.0  # a shared card: its slice
    if w.memory_gb is not None and spec is not None and w.memory_gb > have:
        return Note("infeasible_memory", {"need": w.memory_gb, "gpu": o.gpu, "have": have})
    return None


def _option_warnings(w: Workload, o: Offer, c: OptionCost, s: Scenario, cat: Catalog) -> list[Warning]:
    out: list[Warning] = []
    multi = is_multi_node(w, o)
    min_net = float(cat.defaults["min_network_gbps"])
    if multi and o.network_gbps is not None and o.network_gbps < min_net:
        out.append(Warning("slow-network", Note("w_slow_network", {"gbps": o.network_gbps, "min": min_net})))
    if multi and o.rdma in (None, "none"):
        key = "w_no_rdma" if o.rdma == "none" else "w_rdma_unknown"
        out.append(Warning("no-rdma", Note(key, {"tcp": cat.defaults["tcp_efficiency"]})))
    if c.days_after_work > 0.01:
        out.append(Warning("min-term", Note("w_min_term", {"days": c.days_after_work,
                                                           "term": o.min_term_hours / 24})))
    if o.mode == "bare-metal" and c.billed_gpus > w.gpus:
        out.append(Warning("node-rounding", Note("w_node_rounding", {"billed": c.billed_gpus, "gpus": w.gpus})))
    if w.hours_per_day * c.slowdown.total * c.slowdown.gpu_speed_factor > 24 + 1e-9:
        out.append(Warning("over-24h", Note("w_over_24h", {"days": c.calendar_hours / 24,
                                                           "planned": w.duration_days})))
    if c.slowdown.speed_source.startswith("roofline") and abs(c.slowdown.gpu_speed_factor - 1) > 1e-9:
        out.append(Warning("cross-gpu-estimate", Note("w_cross_gpu", {"gpu": o.gpu, "ref": w.gpus_allowed[0],
                                                                      "factor": c.slowdown.gpu_speed_factor})))
    if c.slowdown.comm.network_assumed:
        out.append(Warning("network-assumed", Note("w_network_assumed", {
            "gbps": float(cat.defaults["reference_network_gbps_per_gpu"]) * o.gpus_per_node})))
    if o.overhead.estimate:
        out.append(Warning("overhead-estimate", Note("w_overhead_estimate", {
            "platform": o.platform, "tenancy": o.tenancy, "nic": o.nic})))
    if o.ops_hours > 0 and s.team.engineer_hour_cost is None:
        out.append(Warning("ops-unpriced", Note("w_ops_unpriced", {"hours": c.ops_hours})))
    return out


def _best(options: list[OptionResult], mode: str) -> OptionResult | None:
    cands = [r for r in options if r.feasible and r.offer.mode == mode]
    return min(cands, key=lambda r: (r.cost.decision, r.offer.id)) if cands else None


# Break-even and the duration flip: closed form over the cost's linear pieces (`gpuplan.engines.breakeven`).


def _decision(w: Workload, o: Offer, s: Scenario, cat: Catalog, **kw: float) -> float:
    return option_cost(w, o, s, cat, **kw).decision


def break_even_hours(w: Workload, ct: Offer, bm: Offer, s: Scenario, cat: Catalog) -> float | None:
    return breakeven.break_even_hours(w, ct, bm, s, cat)


def _dimensions(w: Workload, best_ct: OptionResult | None, best_bm: OptionResult | None,
                cat: Catalog) -> dict[str, Dimension]:
    threshold = float(cat.defaults["utilization_threshold"])
    short_days = float(cat.defaults["short_project_days"])
    dims: dict[str, Dimension] = {}

    # Performance stability
    if best_ct is None or best_bm is None:
        dims["performance"] = Dimension("neither", Note("d_perf_one_mode"))
    else:
        sc, sb = best_ct.cost.slowdown, best_bm.cost.slowdown
        gap = sc.total * sc.gpu_speed_factor / (sb.total * sb.gpu_speed_factor) - 1
        # `gap`: the container's time over bare metal's - 1; `times`: the faster one's speed-up
        params = {"gap": gap, "inter": sc.interconnect, "strag": sc.straggler, "compute": sc.compute,
                  "util": w.utilization, "threshold": threshold,
                  "times": 1 + gap if gap >= 0 else 1 / (1 + gap), "faster": 1 / (1 + gap) - 1}
        big = "_x" if params["times"] >= 1.5 else ""  # "3.2x faster", "12% slower"
        if gap < 0:  # the container's option runs faster (a faster GPU or fabric): never "-N% slower"
            favors = "container" if -gap >= PERF_EDGE else "neither"
            dims["performance"] = Dimension(favors, Note(f"d_perf_ct_faster{big}", params))
        elif w.utilization < threshold:
            dims["performance"] = Dimension("neither", Note(f"d_perf_low_util{big}", params))
        elif gap >= PERF_EDGE:
            dims["performance"] = Dimension("bare-metal", Note(f"d_perf_bm{big}", params))
        elif (best_bm.cost.interruptions.recovery_hours - best_ct.cost.interruptions.recovery_hours
              > RECOVERY_SHARE * max(best_bm.cost.wall_hours, 1.0)):
            # stability is also how long a run stands still: a lease without a spare waits for repair
            dims["performance"] = Dimension("container", Note("d_perf_recovery", {
                **params, "bm": best_bm.cost.interruptions.recovery_hours,
                "ct": best_ct.cost.interruptions.recovery_hours, "n": best_bm.cost.interruptions.expected}))
        else:
            dims["performance"] = Dimension("neither", Note("d_perf_small", params))

    # Deployment flexibility
    setup_bm = best_bm.offer.setup_hours if best_bm else 0.0
    setup_share = setup_bm / w.duration_hours if w.duration_hours else 0.0
    flex_reasons = []
    if w.kind in ("experiment", "inference"):
        flex_reasons.append(w.kind)
    if "elastic" in w.requires:
        flex_reasons.append("elastic")
    if w.duration_days < short_days:
        flex_reasons.append("short")
    if setup_share > SETUP_SHARE:
        flex_reasons.append("setup")
    moved_bm = best_bm.cost.transfer.hours if best_bm else 0.0
    moved_ct = best_ct.cost.transfer.hours if best_ct else 0.0
    if moved_bm - moved_ct > DATA_SHARE * w.duration_hours:
        flex_reasons.append("data")
    if flex_reasons:
        dims["flexibility"] = Dimension("container", Note("d_flex_ct", {
            "why": flex_reasons, "days": w.duration_days, "setup": setup_bm, "share": setup_share}))
    elif moved_ct - moved_bm > DATA_SHARE * w.duration_hours:
        dims["flexibility"] = Dimension("bare-metal", Note("d_flex_bm_data", {"hours": moved_ct}))
    else:
        dims["flexibility"] = Dimension("neither", Note("d_flex_neither", {"setup": setup_bm, "days": w.duration_days}))

    # Cost structure
    if best_ct is None or best_bm is None:
        dims["cost"] = Dimension("neither", Note("d_perf_one_mode"))
    else:
        c, b = best_ct.cost.decision, best_bm.cost.decision
        if abs(c - b) <= COST_EDGE * max(c, b):
            dims["cost"] = Dimension("neither", Note("d_cost_close", {"ct": c, "bm": b}))
        else:
            cheap, dear = ("container", "bare-metal") if c < b else ("bare-metal", "container")
            saving = 1 - min(c, b) / max(c, b)
            idle_share = best_bm.cost.idle / best_bm.cost.rental_mid if best_bm.cost.rental_mid else 0.0
            dims["cost"] = Dimension(cheap, Note(f"d_cost_{'ct' if cheap == 'container' else 'bm'}", {
                "ct": c, "bm": b, "saving": saving, "idle": idle_share}))

    # Scenario fit (the article's lists)
    ct_items: list[str] = []
    bm_items: list[str] = []
    if w.kind == "experiment":
        ct_items.append("s_experiment")
    if "isolation" in w.requires:
        ct_items.append("s_isolation")
    if w.kind == "inference" or "elastic" in w.requires:
        ct_items.append("s_inference")
    if w.duration_days < short_days:
        ct_items.append("s_short")
    if w.kind in ("training", "fine-tuning") and w.duration_days >= short_days and w.utilization >= threshold:
        bm_items.append("s_long_training")
    if "compliance" in w.requires:
        bm_items.append("s_compliance")
    if "multi-node" in w.requires or w.gpus > 8:
        bm_items.append("s_multi_node")
    if "custom-driver" in w.requires:
        bm_items.append("s_custom_driver")
    if len(ct_items) > len(bm_items):
        favors = "container"
    elif len(bm_items) > len(ct_items):
        favors = "bare-metal"
    else:
        favors = "neither"
    dims["scenario"] = Dimension(favors, Note("d_scenario", {"ct": ct_items, "bm": bm_items}))
    return dims


def _delay_reasons(winner: OptionResult, runner: OptionResult, s: Scenario) -> list[Note]:
    """Say so when moving data or recovering from interruptions decides: the runner-up pays more for it
    (transfer money + waiting priced at researcher_hour_cost + the rent it adds) than the winner wins by."""
    out: list[Note] = []
    gap = runner.cost.decision - winner.cost.decision
    wt, rt = winner.cost.transfer, runner.cost.transfer
    extra = rt.hours - wt.hours
    if extra > 0 and rt.moves > 0:
        out.append(Note("r_data", {"other": runner.offer.id, "gb": rt.gb * rt.moves, "path": " → ".join(rt.path),
                                   "hours": rt.hours, "cost": rt.cost, "currency": s.currency,
                                   "offer": winner.offer.id, "moves": wt.moves > 0,
                                   "decides": rt.cost + s.team.researcher_hour_cost * extra >= gap}))
    wi, ri = winner.cost.interruptions, runner.cost.interruptions
    if ri.recovery_hours - wi.recovery_hours > 0.01 * max(runner.cost.wall_hours, 1.0):
        out.append(Note("r_recovery", {"other": runner.offer.id, "hours": ri.recovery_hours,
                                       "mine": wi.recovery_hours, "n": ri.expected}))
    return out


def _cannot_finish(w: Workload, o: Offer, c: OptionCost) -> Note:
    lw = c.preemption
    assert lw is not None and o.preemption is not None
    life = o.preemption.max_lifetime_hours
    if lw.why_not == "lifetime" and life is not None:
        return Note("infeasible_spot_lifetime", {"seg": lw.segment_hours, "life": life, "ckpt": w.checkpoint_hours})
    return Note("infeasible_spot_stretch", {"work": lw.work_hours, "rate": o.preemption.rate.mid,
                                            "nodes": c.nodes, "ckpt": w.checkpoint_hours,
                                            "limit": MAX_STRETCH})


def _spot_reasons(w: Workload, winner: OptionResult, options: list[OptionResult], s: Scenario) -> list[Note]:
    """Why spot won or lost: its price against the best option that is not preemptible, the share of its
    running GPU-hours lost (re-run work and restarts), the expected preemptions, the checkpoint interval."""
    safe = [r for r in options if r.feasible and r.offer.capacity != "spot"]
    ref = min(safe, key=lambda r: (r.cost.decision, r.offer.id)) if safe else None
    out: list[Note] = []
    spots = [r for r in options if r.offer.capacity == "spot" and r.cost.preemption is not None]
    for r in sorted(spots, key=lambda r: (r is not winner, r.cost.decision, r.offer.id))[:1]:
        lw = r.cost.preemption
        assert lw is not None
        if r.infeasible_reason is not None and r.infeasible_reason.key.startswith("infeasible_spot_") \
                and r.infeasible_reason.key != "infeasible_spot":
            key = "r_" + r.infeasible_reason.key.removeprefix("infeasible_")  # r_spot_lifetime | r_spot_stretch
            out.append(Note(key, {"other": r.offer.id, **r.infeasible_reason.params}))
            continue
        if not r.feasible or ref is None:
            continue
        # the price against on-demand: the cheapest elastic offer of the GPU that is not spot, else ref
        od = [x for x in options if x.offer.capacity == "on-demand" and x.offer.mode == "container"
              and x.offer.gpu == r.offer.gpu]
        base = min(od, key=lambda x: (x.offer.price_per_gpu_hour.mid, x.offer.id)) if od else ref
        price = base.offer.price_per_gpu_hour.mid
        lost = lw.lost_hours / lw.expected_hours if lw.expected_hours > 0 else 0.0
        params = {"offer": r.offer.id, "od": base.offer.id, "other": ref.offer.id,
                  "share": r.offer.price_per_gpu_hour.mid / price if price > 0 else 0.0,
                  "lost": lost, "n": lw.preemptions, "ckpt": w.checkpoint_hours,
                  "cost": r.cost.total_mid, "other_cost": ref.cost.total_mid, "currency": s.currency}
        out.append(Note("r_spot_wins" if r is winner else "r_spot_loses", params))
    return out


def _flips(w: Workload, winner: OptionResult, runner: OptionResult | None, s: Scenario,
           cat: Catalog, be: float | None) -> list[Flip]:
    flips: list[Flip] = []
    forced = [r for r in ("compliance", "custom-driver", "elastic") if r in w.requires]
    if forced:
        flips.append(Flip("requires", ",".join(forced), Note("f_requires", {"req": forced})))
    if runner is None:
        return flips
    if be is not None:
        above = winner.offer.mode == "container"
        flips.append(Flip("hours_per_day", be, Note("f_hours", {
            "h": be, "other": runner.offer.id, "dir": "above" if above else "below",
            "now": w.hours_per_day})))

    root = breakeven.flip_duration(w, winner.offer, runner.offer, s, cat)
    if root is not None:
        flips.append(Flip("duration", root / 24, Note("f_duration", {
            "days": root / 24, "other": runner.offer.id, "now": w.duration_days})))

    gap = runner.cost.decision - winner.cost.decision
    if runner.cost.rental_mid > 0:
        k = 1 - gap / runner.cost.rental_mid
        if k > 0:
            flips.append(Flip("price", runner.offer.price_amount.mid * k, Note("f_price_runner", {
                "other": runner.offer.id, "price": runner.offer.price_amount.mid * k,
                "now": runner.offer.price_amount.mid, "per": runner.offer.price_per, "currency": s.currency})))
    if winner.cost.rental_mid > 0:
        k = 1 + gap / winner.cost.rental_mid
        flips.append(Flip("price", winner.offer.price_amount.mid * k, Note("f_price_winner", {
            "offer": winner.offer.id, "price": winner.offer.price_amount.mid * k,
            "now": winner.offer.price_amount.mid, "per": winner.offer.price_per, "currency": s.currency,
            "other": runner.offer.id})))
    return flips


def buy_break_evens(w: Workload, options: list[OptionResult], s: Scenario, cat: Catalog) -> list[BuyBreakEven]:
    """The hours a day at which the cheapest feasible owned offer breaks even with each feasible rented
    option (the verdict's break-even search, `breakeven.break_even_hours`, on that pair)."""
    owned = [r for r in options if r.feasible and r.offer.owned is not None]
    if not owned:
        return []
    own = min(owned, key=lambda r: (r.cost.decision, r.offer.id))
    own_cost = decision_over(w, own.offer, s, cat, "hours_per_day")
    out = []
    for r in options:
        if not r.feasible or r.offer.owned is not None:
            continue
        h = break_even_hours(w, r.offer, own.offer, s, cat)  # the first sign change of r - own
        other_cost = decision_over(w, r.offer, s, cat, "hours_per_day")
        o24, r24 = own_cost(24.0), other_cost(24.0)
        cheaper = o24 < r24  # buying at 24 h a day
        wins = ("always" if cheaper else "never") if h is None else ("above" if cheaper else "below")
        out.append(BuyBreakEven(own.offer.id, r.offer.id, r.offer.mode, h, wins, o24, r24))
    return out


def _buy_note(b: BuyBreakEven, w: Workload, currency: str) -> Note:
    return Note(f"r_buy_{b.buy_wins}", {"offer": b.owned, "other": b.other, "h": b.hours_per_day,
                                        "now": w.hours_per_day, "own": b.owned_at_24, "alt": b.other_at_24,
                                        "currency": currency})


def advise_workload(w: Workload, s: Scenario, cat: Catalog) -> WorkloadAdvice:
    options: list[OptionResult] = []
    for o in s.offers:
        if o.gpu not in w.gpus_allowed:
            continue
        c = option_cost(w, o, s, cat)
        reason = feasibility(w, o, cat)
        if reason is None and c.preemption is not None and not c.preemption.finishes:
            reason = _cannot_finish(w, o, c)
        options.append(OptionResult(o, reason is None, reason, c, tuple(_option_warnings(w, o, c, s, cat))))

    warnings: list[Warning] = []
    threshold = float(cat.defaults["utilization_threshold"])
    if w.utilization < threshold:
        warnings.append(Warning("low-utilization", Note("w_low_util", {"util": w.utilization, "threshold": threshold})))
    if "utilization" in w.defaults_used:
        warnings.append(Warning("utilization-assumed", Note("w_util_assumed", {"util": w.utilization})))
    if s.team.engineer_hour_cost is None and any(r.offer.ops_hours > 0 or r.offer.setup_hours > 0 for r in options):
        warnings.append(Warning("ops-unpriced", Note("w_team_unpriced")))
    for signed in s.commitments:  # a lease already signed: the option the team already has
        if any(r.offer.id == signed.offer for r in options):
            key = "w_signed" if signed.paid else "w_signed_unpaid"
            warnings.append(Warning("signed", Note(key, {"offer": signed.offer, "cards": signed.cards,
                                                         "until": signed.until.isoformat()})))

    best_ct, best_bm = _best(options, "container"), _best(options, "bare-metal")
    be = break_even_hours(w, best_ct.offer, best_bm.offer, s, cat) if best_ct and best_bm else None
    feasible = [r for r in options if r.feasible]
    if not feasible:
        warnings.append(Warning("no-feasible-option", Note("w_no_feasible")))
        return WorkloadAdvice(w, tuple(warnings), tuple(options), None, be)
    buys = tuple(buy_break_evens(w, options, s, cat))

    winner = min(feasible, key=lambda r: (r.cost.decision, r.offer.id))
    other_mode = "bare-metal" if winner.offer.mode == "container" else "container"
    runner = _best(options, other_mode)
    dims = _dimensions(w, best_ct, best_bm, cat)

    reasons: list[Note] = []
    for r in options:
        if (not r.feasible and r.infeasible_reason is not None and r.offer.mode == other_mode
                and r.offer.capacity != "spot"):
            reasons.append(Note("r_rule", {"rule": r.infeasible_reason.key}))
            break
    if runner is not None:
        saving = 1 - winner.cost.decision / runner.cost.decision if runner.cost.decision else 0.0
        reasons.append(Note("r_cost", {"offer": winner.offer.id, "cost": winner.cost.total_mid,
                                       "other": runner.offer.id, "other_cost": runner.cost.total_mid,
                                       "saving": saving, "currency": s.currency}))
        if winner.cost.total_high < runner.cost.total_low:
            reasons.append(Note("r_robust", {"high": winner.cost.total_high, "low": runner.cost.total_low,
                                             "saving": 1 - winner.cost.total_high / runner.cost.total_low}))
        elif winner.cost.total_low > runner.cost.total_high:
            pass
        elif runner.cost.total_low < winner.cost.total_high:
            reasons.append(Note("r_overlap", {"other": runner.offer.id}))
    else:
        reasons.append(Note("r_only_mode", {"mode": winner.offer.mode}))
    perf = dims["performance"]
    if perf.favors == "bare-metal" and winner.offer.mode == "bare-metal":
        times = perf.reason.params["times"]
        reasons.append(Note("r_perf_x" if times >= 1.5 else "r_perf",
                            {"gap": perf.reason.params["gap"], "times": times}))
    if winner.offer.mode == "bare-metal" and w.utilization < threshold:
        reasons.append(Note("r_low_util", {"util": w.utilization, "threshold": threshold}))
    if winner.offer.mode == "bare-metal" and winner.cost.idle > 0 and winner.cost.rental_mid:
        reasons.append(Note("r_idle", {"share": winner.cost.idle / winner.cost.rental_mid}))
    if w.duration_days < float(cat.defaults["short_project_days"]) and winner.offer.mode == "container":
        reasons.append(Note("r_short", {"days": w.duration_days}))
    if runner is not None:
        reasons += _delay_reasons(winner, runner, s)
    reasons += _spot_reasons(w, winner, options, s)
    reasons += [_buy_note(b, w, s.currency) for b in buys]

    rec = Recommendation(
        offer=winner.offer.id,
        mode=winner.offer.mode,
        reasons=tuple(reasons),
        dimensions=dims,
        flip=tuple(_flips(w, winner, runner, s, cat, be)),
    )
    return WorkloadAdvice(w, tuple(warnings), tuple(options), rec, be, buys)


def advise(s: Scenario, cat: Catalog) -> list[WorkloadAdvice]:
    return [advise_workload(w, s, cat) for w in s.workloads]

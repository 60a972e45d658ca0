"""The plan as its `gpuplan.plan/1` contract: the engine's result, rounded and labelled, in the output language.

Every renderer of a plan (JSON, table, markdown, --explain, HTML, export) reads this document; none of
them reads the engine's arrays or computes a figure.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from gpuplan.contracts.plan import SCHEMA
from gpuplan.contracts.plan import PlanResult as PlanDoc
from gpuplan.engines.planner import PlanResult
from gpuplan.i18n import t
from gpuplan.reproducible import generated_at


def _r(x: float, nd: int = 2) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), nd)


def round_list(values: Any, nd: int) -> list[float]:
    """`[round(x, nd) for x in values]`, exactly, at numpy speed: numpy's round (scale, rint, unscale)
    gives Python's correctly rounded answer except where the scaled value sits at a half. There
    Python rounds the float's exact value (ties to even); so does `_round_near_half`, which knows on
    which side of the half the exact product lies. The rest (not finite, huge) are rounded by Python."""
    import numpy as np

    a = np.asarray(values, dtype=np.float64)
    scaled = a * 10.0**nd
    out = np.rint(scaled) / 10.0**nd
    with np.errstate(invalid="ignore"):  # inf - inf: not near a half, and rounded by Python below
        near_half = np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5) < 1e-6
    odd = ~np.isfinite(a) | (np.abs(scaled) >= 2.0**40)
    if 0 <= nd <= 7:
        at = np.flatnonzero(near_half & ~odd)
        out[at] = _round_near_half(a[at], scaled[at], nd)
        near_half &= odd
    near_half |= odd
    result: list[float] = out.tolist()
    for i in np.flatnonzero(near_half).tolist():
        result[i] = round(float(a[i]), nd)
    return result


def _round_near_half(a: Any, scaled: Any, nd: int) -> Any:
    """round(x, nd) for floats x whose x * 10**nd is within 1e-6 of k + 1/2 (|x * 10**nd| < 2**40).

    x * 2 * 10**nd is computed exactly as p + e (Dekker's product: x split into two 26-bit halves,
    each times 2 * 10**nd exact), and compared with the odd integer 2k + 1 (p - (2k + 1) is exact by
    Sterbenz's lemma): above it rounds to k + 1, below to k, equal to the even one of them. The
    result is (k or k + 1) / 10**nd correctly rounded, as Python's round returns it; a zero keeps x's
    sign."""
    import numpy as np

    two = 2.0 * 10.0**nd  # 5**nd (at most 17 bits) times a power of two: each half times it is exact
    k = np.floor(scaled)
    p = a * two
    c = 134217729.0 * a  # 2**27 + 1
    hi = c - (c - a)
    lo = a - hi
    e = (hi * two - p) + lo * two
    diff = (p - (2.0 * k + 1.0)) + e
    up = (diff > 0) | ((diff == 0) & (np.fmod(k, 2.0) != 0))
    r = (k + up) / 10.0**nd
    return np.where(r == 0, np.copysign(0.0, a), r)


def assignment_text(a: Any, lang: str) -> str:
    return t(f"plan.{a.reason_key}", lang, sched=schedule_text(a.workload, lang), **a.params)


def gpu_choice_text(c: Any, currency: str, lang: str) -> str | None:
    """Why a workload that lists several GPUs runs on the one chosen (`GpuChoice`; None for one GPU)."""
    if c is None or not c.moved:
        return None
    if c.speed_source.startswith("benchmark:"):  # a published ratio from the catalog's gpu_speed (issue 24)
        source = t("plan.speed_benchmark", lang, id=c.speed_source.split(":", 1)[1])
    else:
        source = t("plan.speed_" + c.speed_source.replace(":", "_").replace("-", "_"), lang)
    if len(c.costs) < 2:
        return t("plan.gpu_only", lang, gpu=c.gpu, gpus=", ".join(c.listed), speed=c.speed, first=c.first,
                 source=source)
    cost = dict(c.costs)[c.gpu]
    other, other_cost = min(((g, x) for g, x in c.costs if g != c.gpu), key=lambda gx: gx[1])
    return t("plan.gpu_choice", lang, gpu=c.gpu, gpus=", ".join(g for g, _ in c.costs), cost=cost,
             currency=currency, other=other, other_cost=other_cost, speed=c.speed, first=c.first,
             source=source)


def schedule_text(w: Any, lang: str) -> str:
    """How a workload runs, in words: "around the clock for 21 days, once", "8 h a day, 5 days a week"."""
    days = w.duration_hours / 24
    if w.service is not None:
        reps = w.service.replicas()
        how = t("plan.sched_service", lang, low=min(reps), high=max(reps)) if min(reps) != max(reps) \
            else t("plan.sched_service_flat", lang, n=max(reps))
    elif w.hours_per_day >= 24 - 1e-9 and w.days_per_week == 7:
        how = t("plan.sched_clock", lang)
    else:
        how = t("plan.sched_hours", lang, hours=w.hours_per_day, days=w.days_per_week)
    return t("plan.sched_once" if w.once else "plan.sched_for", lang, how=how, days=days)


def project_entry(pr: Any, scenario: Any, lang: str) -> dict[str, Any]:
    """One `projects` entry of `gpuplan.plan/1` (see `planner.Project`)."""
    start = (scenario.start + timedelta(hours=pr.start_hours)).isoformat() if scenario.start else ""
    others = [x for x in pr.options if (x[0], x[1]) != (pr.choice, pr.offer or "")]
    nxt = min(others, key=lambda x: x[2]) if others else None
    why = t(f"plan.proj_{pr.choice}", lang, gpu=pr.gpu, offer=pr.offer or "", cost=pr.cost,
            currency=scenario.currency)
    if nxt is not None:
        why += t("plan.proj_next", lang, choice=t(f"plan.proj_word_{nxt[0]}", lang), offer=nxt[1], cost=nxt[2])
    return {"workload": pr.workload.id, "gpu": pr.gpu, "choice": pr.choice, "offer": pr.offer, "start": start,
            "months": _r(pr.months, 3), "cost": _r(pr.cost),
            "reason": f"{schedule_text(pr.workload, lang)}: {why}"}


def plan_document(res: PlanResult, lang: str = "en") -> PlanDoc:
    """The `gpuplan.plan/1` document of a plan: what every renderer of a plan reads."""
    pools: list[dict[str, Any]] = []
    curve = []
    for p in res.pools:
        pools.append({
            "gpu": p.gpu,
            "vendor": p.vendor,
            "offer_bare_metal": p.bm.id if p.bm else None,
            "offer_container": p.ct.id if p.ct else None,
            "reserved_gpus": p.reserved,
            "nodes": p.nodes,
            "gpus_per_node": p.bm.gpus_per_node if p.bm else (p.ct.gpus_per_node if p.ct else 8),
            "lease_unit": p.bm.lease_unit if p.bm else "gpu",
            "demand": {"peak": _r(float(p.demand_total.max())), "mean": _r(float(p.demand_total.mean()), 3),
                       "start": res.demand.start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "hourly": round_list(p.demand_total, 3)},
            "reserved_utilization": _r(p.reserved_utilization, 4),
            "reserved_gpus_low": p.sizing_low.reserved,
            "reserved_gpus_high": p.sizing_high.reserved,
            "container_slowdown": _r(p.slowdown, 4),
            "slowdown_bare_metal": _r(p.slowdown_bare_metal, 6) if p.bm is not None else None,
            "cost_per_month": {"lease": _r(p.lease_per_month), "ops": _r(p.ops_per_month),
                               "spill": _r(p.spill_per_month), "elastic": _r(p.elastic_per_month),
                               "setup": _r(p.setup_per_month), "hybrid": _r(p.hybrid_per_month),
                               **({"committed": _r(p.committed_per_month)} if p.committed_cards else {}),
                               **({"power": _r(p.power_per_month)} if p.power_per_month else {}),
                               **({"overtime": _r(p.overtime_per_month)} if p.overtime_per_month else {})},
            **({"overtime_per_gpu_hour": _r(p.overtime_per_gpu_hour, 4)} if p.bm is not None else {}),
            "lease_hours": _r(p.lease_hours),
            "lease_per_gpu_hour": _r(p.lease_per_gpu_hour, 4),
            "lease_days_per_month": _r(p.lease_days_per_month, 4),
            "container_per_gpu_hour": _r(p.container_per_gpu_hour, 4),
            "container_slowdown_elastic": _r(p.slowdown_elastic, 4),
            "pinned_peak": _r(p.pinned_peak, 3),
            "step": p.step,
            "gpu_hours_per_month": {
                "spill": _r(p.spill_gpu_hours_per_month - p.elastic_gpu_hours_per_month, 3),
                "elastic": _r(p.elastic_gpu_hours_per_month, 3),
                "bare_metal": _r(p.bare_metal_gpu_hours_per_month, 3)},
            **({"committed_gpus": p.committed_cards,
                "committed_until": (res.scenario.start + timedelta(hours=p.committed_hours)).isoformat()
                if res.scenario.start else None} if p.committed_cards else {}),
            "marginal": {"ratio": _r(p.marginal.ratio, 4),
                         "share_above_reserved_minus_step": _r(p.marginal.share_above_below, 4),
                         "share_above_reserved": _r(p.marginal.share_above, 4)},
        })
        if p.spot is not None:  # the third tier: only where a spot offer takes work (older plans unchanged)
            sp = p.spot
            pools[-1]["cost_per_month"]["spot"] = _r(sp.per_month)
            pools[-1]["spot"] = {
                "offer": sp.offer.id, "gpus": sp.gpus, "gpus_per_node": sp.offer.gpus_per_node,
                "gpu_hours_per_month": _r(sp.gpu_hours_per_month, 3),
                "lost_gpu_hours_per_month": _r(sp.lost_gpu_hours_per_month, 3),
                "preemptions_per_month": _r(sp.preemptions_per_month, 4),
                "preemption_rate": _r(sp.offer.preemption.rate.mid if sp.offer.preemption else 0.0, 8),
                "workloads": list(sp.workloads)}
        for i, (r, c) in enumerate(zip(p.sizing.candidates, p.curve_per_month, strict=True)):
            point: dict[str, Any] = {"gpu": p.gpu, "reserved_gpus": int(r), "cost_per_month": _r(float(c))}
            if p.curve_low_per_month is not None and p.curve_high_per_month is not None:
                point["cost_per_month_low"] = _r(float(p.curve_low_per_month[i]))
                point["cost_per_month_high"] = _r(float(p.curve_high_per_month[i]))
            curve.append(point)
    assignments = [{
        "workload": a.workload.id, "placement": a.placement, "reason": assignment_text(a, lang),
        "gpu": a.workload.gpus_allowed[0], "gpus": a.workload.gpus, "kind": a.workload.kind,
        "requires": sorted(a.workload.requires),
        "pool_share": _r(float(a.params["share"]), 4) if "share" in a.params else None,
        **({"gpu_reason": why} if (why := gpu_choice_text(a.choice, res.scenario.currency, lang)) else {}),
    } for a in res.assignments]
    extra: dict[str, Any] = {}
    if res.demand.repeats > 1 and res.demand.sample_hours:
        extra["sample_hours"] = res.demand.sample_hours
        extra["sample_repeats"] = res.demand.repeats
    if res.demand.kept:
        extra["kept_schedules"] = list(res.demand.kept)
    if res.demand.once_removed:
        extra["one_off_removed"] = {g: _r(h, 3) for g, h in res.demand.once_removed}
    if res.projects:
        extra["projects"] = [project_entry(pr, res.scenario, lang) for pr in res.projects]
    return PlanDoc.model_validate({
        **extra,
        "schema": SCHEMA,
        "currency": res.scenario.currency,
        "scenario": res.scenario.path,
        "generated_at": generated_at(),
        "queueing": res.queueing,
        "horizon_hours": res.demand.hours,
        "calendar_hours": _r(res.pools[0].horizon_hours if res.pools else float(res.demand.hours)),
        "demand_source": res.demand.source,
        "days_per_month": res.scenario.days_per_month,
        "pools": pools,
        "assignments": assignments,
        "cost_per_month": {
            "hybrid": _r(res.per_month("hybrid_per_month")),
            "hybrid_low": _r(res.per_month("hybrid_low_per_month")),
            "hybrid_high": _r(res.per_month("hybrid_high_per_month")),
            "all_bare_metal": _r(res.per_month("all_bare_metal_per_month")),
            "all_container": _r(res.per_month("all_container_per_month")),
        },
        "curve": curve,
    })



"""Rendering a plan: the `gpuplan.plan/1` JSON contract, a Rich table, markdown, and --explain."""

from __future__ import annotations

import math
from typing import Any

from gpuplan.engines.planner import PlanResult, PoolPlan
from gpuplan.i18n import t
from gpuplan.reproducible import generated_at

SCHEMA = "gpuplan.plan/1"


def _r(x: float, nd: int = 2) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), nd)


def assignment_text(a: Any, lang: str) -> str:
    return t(f"plan.{a.reason_key}", lang, **a.params)


def plan_json(res: PlanResult, lang: str = "en") -> dict[str, Any]:
    pools = []
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
                       "hourly": [round(float(x), 3) for x in p.demand_total]},
            "reserved_utilization": _r(p.reserved_utilization, 4),
            "reserved_gpus_low": p.sizing_low.reserved,
            "reserved_gpus_high": p.sizing_high.reserved,
            "container_slowdown": _r(p.slowdown, 4),
            "cost_per_month": {"lease": _r(p.lease_per_month), "ops": _r(p.ops_per_month),
                               "spill": _r(p.spill_per_month), "elastic": _r(p.elastic_per_month),
                               "setup": _r(p.setup_per_month), "hybrid": _r(p.hybrid_per_month)},
            "lease_hours": _r(p.lease_hours),
            "marginal": {"ratio": _r(p.marginal.ratio, 4),
                         "share_above_reserved_minus_step": _r(p.marginal.share_above_below, 4),
                         "share_above_reserved": _r(p.marginal.share_above, 4)},
        })
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
    } for a in res.assignments]
    return {
        "schema": SCHEMA,
        "currency": res.scenario.currency,
        "scenario": res.scenario.path,
        "generated_at": generated_at(),
        "queueing": res.queueing,
        "horizon_hours": res.demand.hours,
        "calendar_hours": _r(res.pools[0].horizon_hours if res.pools else float(res.demand.hours)),
        "demand_source": res.demand.source,
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
    }


def _m(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.0f}"


def _sum_lines(res: PlanResult, p: PoolPlan, lang: str) -> list[str]:
    cur = res.scenario.currency
    lines = []
    if p.bm and p.reserved:
        lines.append(t("plan.sum_lease", lang, r=p.reserved, price=p.lease_per_gpu_hour * 24, currency=cur,
                       days=p.lease_days_per_month, total=p.lease_per_month))
    if p.ops_per_month:
        lines.append(t("plan.sum_ops", lang, total=p.ops_per_month))
    elastic_h = p.elastic_gpu_hours_per_month
    spill_h = p.spill_gpu_hours_per_month - elastic_h
    if p.ct and spill_h > 1e-9:
        lines.append(t("plan.sum_containers", lang, hours=spill_h, price=p.container_per_gpu_hour, currency=cur,
                       sd=p.slowdown, total=p.spill_per_month))
    if p.ct and elastic_h > 1e-9:
        lines.append(t("plan.sum_elastic", lang, hours=elastic_h, price=p.container_per_gpu_hour, currency=cur,
                       sd=p.slowdown_elastic, total=p.elastic_per_month))
    if p.setup_per_month > 1e-9:
        lines.append(t("plan.sum_setup", lang, total=p.setup_per_month))
    lines.append(t("plan.sum_total", lang, total=p.hybrid_per_month, currency=cur))
    return lines


def plan_table(res: PlanResult, lang: str, console: Any, explain: bool = False) -> None:
    from rich.table import Table

    cur = res.scenario.currency
    console.print(f"[bold]{t('plan.title', lang, scenario=res.scenario.path or '')}[/]")
    console.print(t("plan.horizon", lang, days=res.demand.hours / 24, source=res.demand.source,
                    dpm=res.scenario.days_per_month), markup=False)
    table = Table(title=t("plan.pools", lang), title_justify="left", title_style="bold cyan")
    for col in ("gpu", "leased", "offers", "peak", "mean", "util", "hybrid"):
        table.add_column(t(f"plan.col_{col}", lang), justify="left" if col in ("gpu", "offers") else "right")
    for p in res.pools:
        nodes = t("plan.nodes", lang, n=p.nodes) if p.bm and p.bm.lease_unit == "node" else ""
        table.add_row(p.gpu, f"{p.reserved}{nodes}", f"{p.bm.id if p.bm else '—'} / {p.ct.id if p.ct else '—'}",
                      f"{float(p.demand_total.max()):.1f}", f"{float(p.demand_total.mean()):.2f}",
                      f"{p.reserved_utilization:.0%}", _m(p.hybrid_per_month))
    console.print(table)
    cmp = Table(title=t("plan.per_month", lang, currency=cur), title_justify="left", title_style="bold cyan")
    for col in ("hybrid", "range", "all_bm", "all_ct"):
        cmp.add_column(t(f"plan.cmp_{col}", lang), justify="right")
    cmp.add_row(_m(res.per_month("hybrid_per_month")),
                f"{_m(res.per_month('hybrid_low_per_month'))}–{_m(res.per_month('hybrid_high_per_month'))}",
                _m(res.per_month("all_bare_metal_per_month")), _m(res.per_month("all_container_per_month")),
                style="bold")
    console.print(cmp)
    for p in res.pools:
        for line in _sum_lines(res, p, lang):
            console.print("  " + line, markup=False)
    at = Table(title=t("plan.assignments", lang), title_justify="left", title_style="bold cyan")
    for col in ("workload", "placement", "reason"):
        at.add_column(t(f"plan.col_{col}", lang))
    for a in res.assignments:
        at.add_row(a.workload.id, t(f"plan.place_{a.placement}", lang), assignment_text(a, lang))
    console.print(at)
    if explain:
        for line in explain_lines(res, lang):
            console.print(line, markup=False)


def explain_lines(res: PlanResult, lang: str) -> list[str]:
    lines = [t("plan.explain_title", lang)]
    for p in res.pools:
        lines.append(t("plan.explain_formula", lang, gpu=p.gpu))
        if p.bm and p.ct:
            mg = p.marginal
            lines.append("  " + t("plan.explain_marginal", lang, ratio=mg.ratio,
                                  lease=p.lease_per_gpu_hour, ct=p.container_per_gpu_hour, sd=p.slowdown,
                                  r=p.reserved, below=mg.share_above_below, above=mg.share_above, step=p.step))
        lines.append("  " + t("plan.explain_range", lang, low=p.sizing_low.reserved, high=p.sizing_high.reserved))
        if p.pinned_peak > 0:
            lines.append("  " + t("plan.explain_pinned", lang, peak=p.pinned_peak))
        best = int(list(p.sizing.candidates).index(p.reserved))
        lo, hi = max(0, best - 3), min(len(p.sizing.candidates), best + 4)
        for r, c in zip(p.sizing.candidates[lo:hi], p.curve_per_month[lo:hi], strict=True):
            mark = " ←" if int(r) == p.reserved else ""
            lines.append(f"    R={int(r):>4}  {float(c):>14,.0f}{mark}")
    return lines


def plan_markdown(res: PlanResult, lang: str) -> str:
    cur = res.scenario.currency
    out = [f"# {t('plan.title', lang, scenario=res.scenario.path or '')}", "",
           t("plan.horizon", lang, days=res.demand.hours / 24, source=res.demand.source,
             dpm=res.scenario.days_per_month), ""]
    cols = ("gpu", "leased", "offers", "peak", "mean", "util", "hybrid")
    out += ["| " + " | ".join(t(f"plan.col_{c}", lang) for c in cols) + " |", "|" + "---|" * len(cols)]
    for p in res.pools:
        out.append(f"| {p.gpu} | {p.reserved} | {p.bm.id if p.bm else '—'} / {p.ct.id if p.ct else '—'} | "
                   f"{float(p.demand_total.max()):.1f} | {float(p.demand_total.mean()):.2f} | "
                   f"{p.reserved_utilization:.0%} | {_m(p.hybrid_per_month)} |")
    out += ["", f"**{t('plan.per_month', lang, currency=cur)}**", "",
            f"| {t('plan.cmp_hybrid', lang)} | {t('plan.cmp_range', lang)} | {t('plan.cmp_all_bm', lang)} | "
            f"{t('plan.cmp_all_ct', lang)} |", "|---|---|---|---|",
            f"| {_m(res.per_month('hybrid_per_month'))} | {_m(res.per_month('hybrid_low_per_month'))}–"
            f"{_m(res.per_month('hybrid_high_per_month'))} | {_m(res.per_month('all_bare_metal_per_month'))} | "
            f"{_m(res.per_month('all_container_per_month'))} |", ""]
    for p in res.pools:
        out += [f"- {line}" for line in _sum_lines(res, p, lang)]
    out += ["", f"## {t('plan.assignments', lang)}", ""]
    out += [f"- **{a.workload.id}**: {t(f'plan.place_{a.placement}', lang)} — {assignment_text(a, lang)}"
            for a in res.assignments]
    out += ["", "```", *explain_lines(res, lang), "```", ""]
    return "\n".join(out)

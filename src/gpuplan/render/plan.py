"""Rendering a plan from its `gpuplan.plan/1` document: JSON, a Rich table, markdown, and --explain.

The document (`contracts.plan_document`) holds every figure; these functions only lay it out.
"""

from __future__ import annotations

from typing import Any

from gpuplan.contracts.plan import PlanPool
from gpuplan.contracts.plan import PlanResult as PlanDoc
from gpuplan.i18n import t


def plan_json(doc: PlanDoc) -> dict[str, Any]:
    """What `plan -o json` prints: the document as JSON, keys it never had left out."""
    return doc.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _m(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _sum_lines(doc: PlanDoc, p: PlanPool, lang: str) -> list[str]:
    cur, c = doc.currency, p.cost_per_month
    hours = p.gpu_hours_per_month
    lines = []
    if p.offer_bare_metal and p.reserved_gpus and p.lease_per_gpu_hour is not None:
        lines.append(t("plan.sum_lease", lang, r=p.reserved_gpus, price=p.lease_per_gpu_hour * 24, currency=cur,
                       days=p.lease_days_per_month or 0.0, total=c.lease or 0.0))
    if c.power:
        lines.append(t("plan.sum_power", lang, total=c.power))
    if c.overtime and hours is not None and hours.bare_metal and p.slowdown_bare_metal:
        sb = p.slowdown_bare_metal
        lines.append(t("plan.sum_overtime", lang, sb=sb, extra=hours.bare_metal * (sb - 1) / sb, currency=cur,
                       price=p.overtime_per_gpu_hour or 0.0, total=c.overtime))
    if c.ops:
        lines.append(t("plan.sum_ops", lang, total=c.ops))
    if p.offer_container and hours is not None and hours.spill > 1e-9:
        lines.append(t("plan.sum_containers", lang, hours=hours.spill, price=p.container_per_gpu_hour, currency=cur,
                       sd=p.container_slowdown, total=c.spill or 0.0))
    if p.offer_container and hours is not None and hours.elastic > 1e-9:
        lines.append(t("plan.sum_elastic", lang, hours=hours.elastic, price=p.container_per_gpu_hour, currency=cur,
                       sd=p.container_slowdown_elastic, total=c.elastic or 0.0))
    if p.spot is not None:
        lines.append(t("plan.sum_spot", lang, offer=p.spot.offer, gpus=p.spot.gpus, hours=p.spot.gpu_hours_per_month,
                       lost=p.spot.lost_gpu_hours_per_month, n=p.spot.preemptions_per_month,
                       total=getattr(c, "spot", None) or 0.0))
    if c.setup:
        lines.append(t("plan.sum_setup", lang, total=c.setup))
    if p.committed_gpus:
        lines.append(t("plan.sum_committed", lang, cards=p.committed_gpus, until=p.committed_until or "",
                       total=c.committed or 0.0))
    lines.append(t("plan.sum_total_gpu", lang, gpu=p.gpu, total=c.hybrid or 0.0, currency=cur))
    return lines


def _one_off_lines(doc: PlanDoc, lang: str) -> list[str]:
    """One-off work the demand file marks (`once`): taken out of the standing demand, said so."""
    return [t("plan.one_off_removed", lang, gpu=g, hours=h) for g, h in (doc.one_off_removed or {}).items()]


def _grand_total(doc: PlanDoc, lang: str) -> list[str]:
    """The plan's total over every GPU's pool (the per-GPU lines name their GPU)."""
    if len(doc.pools) < 2:
        return []
    return [t("plan.sum_total", lang, total=doc.cost_per_month.hybrid or 0.0, currency=doc.currency)]


def _horizon(doc: PlanDoc, lang: str) -> str:
    source = t("plan.source_schedules", lang) if doc.demand_source == "schedules" else doc.demand_source
    text = t("plan.horizon", lang, days=doc.horizon_hours / 24, source=source, dpm=doc.days_per_month)
    if doc.sample_hours and doc.sample_repeats:
        text += " " + t("plan.horizon_repeated", lang, hours=doc.sample_hours, n=doc.sample_repeats)
    if doc.kept_schedules:
        text += " " + t("plan.kept_schedules", lang, workloads=", ".join(doc.kept_schedules))
    return text


def _offers(p: PlanPool) -> str:
    return f"{p.offer_bare_metal or '—'} / {p.offer_container or '—'}"


def plan_table(doc: PlanDoc, lang: str, console: Any, explain: bool = False) -> None:
    from rich.table import Table

    from gpuplan.render.fit import add_columns

    cur = doc.currency
    console.print(f"[bold]{t('plan.title', lang, scenario=doc.scenario or '')}[/]")
    console.print(_horizon(doc, lang), markup=False)
    table = Table(title=t("plan.pools", lang), title_justify="left", title_style="bold cyan")
    cols = ("gpu", "leased", "offers", "peak", "mean", "util", "hybrid")
    rows = []
    for p in doc.pools:
        nodes = ""
        if p.offer_bare_metal and p.lease_unit == "node":
            nodes = t("plan.nodes_one" if p.nodes == 1 else "plan.nodes", lang, n=p.nodes)
        rows.append([p.gpu, f"{p.reserved_gpus}{nodes}", _offers(p), f"{p.demand.peak:.1f}", f"{p.demand.mean:.2f}",
                     f"{p.reserved_utilization or 0.0:.0%}", _m(p.cost_per_month.hybrid)])
    add_columns(table, [t(f"plan.col_{col}", lang) for col in cols], rows,
                [col not in ("gpu", "offers", "leased") for col in cols], console.width)
    console.print(table)
    cmp = Table(title=t("plan.per_month", lang, currency=cur), title_justify="left", title_style="bold cyan")
    c = doc.cost_per_month
    add_columns(cmp, [t(f"plan.cmp_{col}", lang) for col in ("hybrid", "range", "all_bm", "all_ct")],
                [[_m(c.hybrid), f"{_m(c.hybrid_low)}–{_m(c.hybrid_high)}", _m(c.all_bare_metal), _m(c.all_container)]],
                [True] * 4, console.width)
    cmp.rows[0].style = "bold"
    console.print(cmp)
    for p in doc.pools:
        for line in _sum_lines(doc, p, lang):
            console.print("  " + line, markup=False)
    for line in _grand_total(doc, lang) + _one_off_lines(doc, lang):
        console.print("  " + line, markup=False)
    for line in waiting_lines(doc, lang):
        console.print("  " + line, markup=False)
    at = Table(title=t("plan.assignments", lang), title_justify="left", title_style="bold cyan")
    add_columns(at, [t(f"plan.col_{col}", lang) for col in ("workload", "placement", "reason")],
                [[a.workload, t(f"plan.place_{a.placement}", lang), _why(a)] for a in doc.assignments], [False] * 3,
                console.width)
    console.print(at)
    if doc.projects:
        pt = Table(title=t("plan.projects", lang), title_justify="left", title_style="bold cyan")
        add_columns(pt, [t(f"plan.col_{col}", lang) for col in ("workload", "placement", "reason")],
                    [[p.workload, f"{p.start} · {p.choice}", p.reason] for p in doc.projects], [False] * 3,
                    console.width)
        console.print(pt)
    if explain:
        for line in explain_lines(doc, lang):
            console.print(line, markup=False)


def waiting_lines(doc: PlanDoc, lang: str) -> list[str]:
    """`plan --max-wait`: each pool's answer, in words."""
    out: list[str] = []
    for wt in doc.waiting or []:
        budget = ", ".join(f"{k} ≤ {v:g} h" for k, v in wt.max_wait_hours.items())
        after = t("plan.waiting_after", lang, h=wt.burst_after_hours) if wt.burst_after_hours is not None \
            else t("plan.waiting_no_burst", lang)
        out.append(t(f"plan.waiting_head_{wt.model}", lang, budget=budget, after=after, n=len(wt.reserved_gpus),
                     gpu=wt.gpu))
        rec = wt.recommended
        if rec is None:
            reason = wt.no_recommendation.reason if wt.no_recommendation else ""
            out.append("  " + t("plan.waiting_none", lang, reason=reason))
            continue
        w = rec.wait_hours
        out.append("  " + t("plan.waiting_rec", lang, r=rec.reserved_gpus, cost=_m(rec.cost_per_month),
                            currency=doc.currency, mean=w.mean, p95=w.p95, max=w.max))
    return out


def explain_lines(doc: PlanDoc, lang: str) -> list[str]:
    lines = [t("plan.explain_title", lang)]
    for p in doc.pools:
        lines.append(t("plan.explain_formula", lang, gpu=p.gpu))
        mg = p.marginal
        if p.offer_bare_metal and p.offer_container and mg.ratio is not None:
            lines.append("  " + t("plan.explain_marginal", lang, ratio=mg.ratio, lease=p.lease_per_gpu_hour,
                                  ct=p.container_per_gpu_hour, sd=p.container_slowdown, r=p.reserved_gpus,
                                  sb=p.slowdown_bare_metal if p.slowdown_bare_metal is not None else 1.0,
                                  ot=p.overtime_per_gpu_hour or 0.0,
                                  below=mg.share_above_reserved_minus_step, above=mg.share_above_reserved,
                                  step=p.step))
        lines.append("  " + t("plan.explain_range", lang, low=p.reserved_gpus_low, high=p.reserved_gpus_high))
        if p.pinned_peak:
            lines.append("  " + t("plan.explain_pinned", lang, peak=p.pinned_peak))
        if p.offer_bare_metal and p.slowdown_bare_metal is not None:
            hours = p.gpu_hours_per_month.bare_metal if p.gpu_hours_per_month is not None else None
            lines.append("  " + t("plan.explain_bare_metal", lang, offer=p.offer_bare_metal, sb=p.slowdown_bare_metal,
                                  hours=hours or 0.0, sd=p.container_slowdown or 1.0))
        curve = [c for c in doc.curve if c.gpu == p.gpu]
        best = next(i for i, c in enumerate(curve) if c.reserved_gpus == p.reserved_gpus)
        for c in curve[max(0, best - 3):best + 4]:
            mark = " ←" if c.reserved_gpus == p.reserved_gpus else ""
            lines.append(f"    R={c.reserved_gpus:>4}  {_m(c.cost_per_month):>14}{mark}")
    return lines


def plan_markdown(doc: PlanDoc, lang: str) -> str:
    cur = doc.currency
    out = [f"# {t('plan.title', lang, scenario=doc.scenario or '')}", "", _horizon(doc, lang), ""]
    cols = ("gpu", "leased", "offers", "peak", "mean", "util", "hybrid")
    out += ["| " + " | ".join(t(f"plan.col_{c}", lang) for c in cols) + " |", "|" + "---|" * len(cols)]
    for p in doc.pools:
        out.append(f"| {p.gpu} | {p.reserved_gpus} | {_offers(p)} | {p.demand.peak:.1f} | {p.demand.mean:.2f} | "
                   f"{p.reserved_utilization or 0.0:.0%} | {_m(p.cost_per_month.hybrid)} |")
    c = doc.cost_per_month
    out += ["", f"**{t('plan.per_month', lang, currency=cur)}**", "",
            f"| {t('plan.cmp_hybrid', lang)} | {t('plan.cmp_range', lang)} | {t('plan.cmp_all_bm', lang)} | "
            f"{t('plan.cmp_all_ct', lang)} |", "|---|---|---|---|",
            f"| {_m(c.hybrid)} | {_m(c.hybrid_low)}–{_m(c.hybrid_high)} | {_m(c.all_bare_metal)} | "
            f"{_m(c.all_container)} |", ""]
    for p in doc.pools:
        out += [f"- {line}" for line in _sum_lines(doc, p, lang)]
    out += [f"- **{line}**" for line in _grand_total(doc, lang)]
    out += [f"- {line}" for line in _one_off_lines(doc, lang)]
    out += [f"- {line}" for line in waiting_lines(doc, lang)]
    out += ["", f"## {t('plan.assignments', lang)}", ""]
    out += [f"- **{a.workload}**: {t(f'plan.place_{a.placement}', lang)} — {_why(a)}" for a in doc.assignments]
    if doc.projects:
        out += ["", f"## {t('plan.projects', lang)}", ""]
        out += [f"- **{p.workload}** ({p.start}, {p.choice}): {p.reason}" for p in doc.projects]
    out += ["", "```", *explain_lines(doc, lang), "```", ""]
    return "\n".join(out)


def _why(a: Any) -> str:
    """An assignment's reason, and why its GPU where it lists several."""
    return f"{a.reason}; {a.gpu_reason}" if a.gpu_reason else str(a.reason)

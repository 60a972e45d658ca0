"""Rendering a plan from its `gpuplan.plan/1` document: JSON, a Rich table, markdown, and --explain.

The document (`engines.plan_document`) holds every figure; these functions only lay it out.
"""

from __future__ import annotations

import itertools
from typing import Any

from gpuplan.contracts.plan import PlanPool
from gpuplan.contracts.plan import PlanResult as PlanDoc
from gpuplan.i18n import t


def plan_json(doc: PlanDoc) -> dict[str, Any]:
    """What `plan -o json` prints: the document as JSON, keys it never had left out."""
    return doc.model_dump(mode="json", by_alias=True, exclude_unset=True)


def plan_json_text(doc: PlanDoc) -> str:
    """`json.dumps(plan_json(doc), ensure_ascii=False, indent=2)`, the same text, written faster.

    json's indenting encoder is pure Python, and the hourly demand (a year of hours per pool) is
    most of a plan's values. Those lists are written here, each value as json writes a float
    (`float.__repr__`), and spliced into json's encoding of the rest."""
    import json

    data = plan_json(doc)
    marks: list[str] = []
    values: list[list[Any]] = []
    for pool in data.get("pools") or []:
        demand = pool.get("demand") if isinstance(pool, dict) else None
        if isinstance(demand, dict) and isinstance(demand.get("hourly"), list) and demand["hourly"]:
            marks.append(f"\x00gpuplan-hourly-{len(marks)}\x00")
            values.append(demand["hourly"])
            demand["hourly"] = marks[-1]
    text = json.dumps(data, ensure_ascii=False, indent=2)
    quoted = [json.dumps(m) for m in marks]
    at = [text.find(q) for q in quoted]
    indents = {a - text.rfind("\n", 0, a) - 1 - len('"hourly": ') for a in at}
    lists = _float_lists(values, "," + "\n" + " " * (min(indents, default=0) + 2))
    if lists is None or len(indents) > 1 or any(text.count(q) != 1 for q in quoted) or at != sorted(at):
        i = 0
        for pool in data.get("pools") or []:  # as it was: json writes all of it
            if i < len(marks) and pool.get("demand", {}).get("hourly") == marks[i]:
                pool["demand"]["hourly"] = values[i]
                i += 1
        return json.dumps(data, ensure_ascii=False, indent=2)
    pad = " " * min(indents, default=0)
    pieces, pos = [], 0
    for a, q, items in zip(at, quoted, lists, strict=True):
        pieces += [text[pos:a], "[\n", pad, "  ", items, "\n", pad, "]"]
        pos = a + len(q)
    pieces.append(text[pos:])
    return "".join(pieces)


def _float_lists(lists: list[list[Any]], sep: str) -> list[str] | None:
    """`sep.join(map(float.__repr__, values))` for each list; None when a value is not a float or
    is NaN or infinite (json writes those its own way)."""
    if not lists:
        return []
    fast = _thousandths([x for v in lists for x in v], sep)
    if fast is not None:
        text, start = fast
        ends = [int(start[i]) - len(sep) for i in itertools.accumulate(len(v) for v in lists[:-1])]
        bounds = [0, *(e + len(sep) for e in ends)]
        return [text[b:e] for b, e in zip(bounds, [*ends, len(text)], strict=True)]
    try:
        out = [sep.join(map(float.__repr__, v)) for v in lists]
    except TypeError:
        return None
    return None if any("n" in t for t in out) else out  # nan, inf: json writes NaN, Infinity


def _m(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _sum_lines(doc: PlanDoc, p: PlanPool, lang: str) -> list[str]:
    cur, c = doc.currency, p.cost_per_month
    hours = p.gpu_hours_per_month
    lines = []
    if p.offer_bare_metal and p.reserved_gpus and p.lease_per_gpu_hour is not None:
        lines.append(t("plan.sum_lease", lang, r=p.reserved_gpus, price=p.lease_per_gpu_hour * 24, currency=cur,
                       days=p.lease_days_per_month or 0.0, total=c.lease or 0.0))
    if c.ops:
        lines.append(t("plan.sum_ops", lang, total=c.ops))
    if p.offer_container and hours is not None and hours.spill > 1e-9:
        lines.append(t("plan.sum_containers", lang, hours=hours.spill, price=p.container_per_gpu_hour, currency=cur,
                       sd=p.container_slowdown, total=c.spill or 0.0))
    if p.offer_container and hours is not None and hours.elastic > 1e-9:
        lines.append(t("plan.sum_elastic", lang, hours=hours.elastic, price=p.container_per_gpu_hour, currency=cur,
                       sd=p.container_slowdown_elastic, total=c.elastic or 0.0))
    if c.setup:
        lines.append(t("plan.sum_setup", lang, total=c.setup))
    lines.append(t("plan.sum_total_gpu", lang, gpu=p.gpu, total=c.hybrid or 0.0, currency=cur))
    return lines


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
    for line in _grand_total(doc, lang):
        console.print("  " + line, markup=False)
    for line in waiting_lines(doc, lang):
        console.print("  " + line, markup=False)
    at = Table(title=t("plan.assignments", lang), title_justify="left", title_style="bold cyan")
    add_columns(at, [t(f"plan.col_{col}", lang) for col in ("workload", "placement", "reason")],
                [[a.workload, t(f"plan.place_{a.placement}", lang), a.reason] for a in doc.assignments], [False] * 3,
                console.width)
    console.print(at)
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
                                  below=mg.share_above_reserved_minus_step, above=mg.share_above_reserved,
                                  step=p.step))
        lines.append("  " + t("plan.explain_range", lang, low=p.reserved_gpus_low, high=p.reserved_gpus_high))
        if p.pinned_peak:
            lines.append("  " + t("plan.explain_pinned", lang, peak=p.pinned_peak))
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
    out += [f"- {line}" for line in waiting_lines(doc, lang)]
    out += ["", f"## {t('plan.assignments', lang)}", ""]
    out += [f"- **{a.workload}**: {t(f'plan.place_{a.placement}', lang)} — {a.reason}" for a in doc.assignments]
    out += ["", "```", *explain_lines(doc, lang), "```", ""]
    return "\n".join(out)


def _thousandths(values: list[Any], sep: str) -> tuple[str, Any] | None:
    """`sep.join(map(float.__repr__, values))` and where each value starts in it, when every value is
    a float and a whole number of thousandths (the hourly demand is rounded to 3 places), written by
    numpy; None otherwise.

    repr of such a float, below 1e12, is its decimal m/1000 without trailing zeros (one zero after
    the point for a whole number): that decimal has at most 15 significant digits, so it is the
    shortest text that reads back as the float, which is what repr writes. Each value is laid out
    in a row of fixed columns (whole part right-aligned, point, three decimals, separator) and the
    columns a value does not use are dropped."""
    import numpy as np

    if set(map(type, values)) != {float}:
        return None
    v = np.fromiter(values, dtype=np.float64, count=len(values))
    m = np.rint(v * 1000.0)
    if not ((m / 1000.0 == v).all() and (m < 1e15).all() and not np.signbit(v).any()):
        return None
    n = len(v)
    mi = m.astype(np.int64)
    whole, frac = np.divmod(mi, 1000)
    digits = len(str(int(whole.max())))
    cols = digits + 4 + len(sep)
    rows = np.empty((n, cols), dtype=np.uint8)
    keep = np.ones((n, cols), dtype=bool)
    size = np.full(n, 3 + len(sep), dtype=np.int64)
    q = whole
    for k in range(digits):
        q, d = np.divmod(q, 10)
        rows[:, digits - 1 - k] = d
        if k:
            big = whole >= 10**k
            keep[:, digits - 1 - k] = big
            size += big
    f0, f12 = np.divmod(frac, 100)
    f1, f2 = np.divmod(f12, 10)
    rows[:, digits + 1] = f0
    rows[:, digits + 2] = f1
    rows[:, digits + 3] = f2
    rows[:, : digits + 4] += 48
    rows[:, digits] = 46
    k2 = f2 != 0
    k1 = k2 | (f1 != 0)
    keep[:, digits + 3] = k2
    keep[:, digits + 2] = k1
    size += k1
    size += k2
    rows[:, digits + 4:] = np.frombuffer(sep.encode("ascii"), dtype=np.uint8)
    keep[-1, digits + 4:] = False
    start = np.zeros(n, dtype=np.int64)
    np.cumsum(size[:-1], out=start[1:])
    return rows[keep].tobytes().decode("ascii"), start

"""Rendering a comparison: the `gpuplan.compare/1` JSON contract, a Rich table, markdown."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from gpuplan.engines.advise import WorkloadAdvice
from gpuplan.i18n import t
from gpuplan.render.notes import note_text

SCHEMA = "gpuplan.compare/1"


def _r(x: float, nd: int = 2) -> float:
    return round(float(x), nd)


def compare_json(result: Any, lang: str = "en") -> dict[str, Any]:
    """The JSON contract (see README). `result` is an `api.CompareResult`."""
    out: dict[str, Any] = {"schema": SCHEMA, "currency": result.scenario.currency, "workloads": []}
    for adv in result.advice:
        out["workloads"].append(_workload_json(adv, lang))
    return out


def _warn(ws: Any, lang: str) -> list[dict[str, str]]:
    return [{"code": w.code, "message": note_text(w.note, lang)} for w in ws]


def _workload_json(adv: WorkloadAdvice, lang: str) -> dict[str, Any]:
    options = []
    for r in adv.options:
        c = r.cost
        options.append({
            "offer": r.offer.id,
            "mode": r.offer.mode,
            "platform": r.offer.platform,
            "tenancy": r.offer.tenancy,
            "gpu": r.offer.gpu,
            "feasible": r.feasible,
            "infeasible_reason": note_text(r.infeasible_reason, lang) if r.infeasible_reason else None,
            "cost": {"total": _r(c.total_mid), "low": _r(c.total_low), "high": _r(c.total_high),
                     "per_month": _r(c.per_month), "rental": _r(c.rental_mid), "ops": _r(c.ops),
                     "setup": _r(c.setup), "idle": _r(c.idle), "transfer": _r(c.transfer.cost)},
            "time": {"wall_hours": _r(c.wall_hours), "gpu_hours_used": _r(c.gpu_hours_used),
                     "gpu_hours_paid": _r(c.gpu_hours_paid), "slowdown": _r(c.slowdown.total, 4),
                     "terms": {k: _r(v, 4) for k, v in dataclasses.asdict(c.slowdown.terms).items()},
                     "bound": c.slowdown.bound,
                     "gpu_speed": {"factor": _r(c.slowdown.gpu_speed_factor, 4),
                                   "source": c.slowdown.speed_source},
                     "transfer_hours": _r(c.transfer.hours),
                     "recovery_hours": _r(c.interruptions.recovery_hours + c.interruptions.lost_hours),
                     "interruptions": _r(c.interruptions.expected, 4)},
            "warnings": _warn(r.warnings, lang),
        })
    rec = None
    if adv.recommendation is not None:
        rr = adv.recommendation
        rec = {
            "offer": rr.offer,
            "mode": rr.mode,
            "reasons": [note_text(n, lang) for n in rr.reasons],
            "dimensions": {k: {"favors": d.favors, "reason": note_text(d.reason, lang)}
                           for k, d in rr.dimensions.items()},
            "flip": [{"parameter": f.parameter,
                      "value": _r(f.value, 4) if isinstance(f.value, float) else f.value,
                      "message": note_text(f.note, lang)} for f in rr.flip],
        }
    be = adv.break_even_hours
    return {
        "id": adv.workload.id,
        "warnings": _warn(adv.warnings, lang),
        "options": options,
        "recommendation": rec,
        "break_even": {"hours_per_day": None if be is None or math.isnan(be) else _r(be, 3)},
    }


def _money(x: float) -> str:
    return f"{x:,.0f}"


# Table layouts, widest first; `a/b` is one column with b on a second line (the narrow layouts).
_LAYOUTS: tuple[tuple[str, ...], ...] = (
    ("offer", "mode", "total", "range", "per_month", "rental", "ops", "setup", "idle", "wall", "slowdown"),
    ("offer", "mode", "total", "range", "per_month", "idle", "wall", "slowdown"),
    ("offer/mode", "total/range", "per_month", "idle", "wall/slowdown"),
)
_TEXT_COLS = frozenset({"offer", "mode"})


def _options_table(adv: WorkloadAdvice, title: str, lang: str, width: int) -> Any:
    """The options of one workload: the widest layout that fits `width`; numbers are never cut (ids are
    shortened in the middle when even the narrowest layout is too wide: the JSON has them whole)."""
    from rich.table import Table

    from gpuplan.render.fit import add_columns, cell_width, fits, middle, table_width

    rec = adv.recommendation
    cells = []
    for r in adv.options:
        c = r.cost
        star = "★ " if rec and rec.offer == r.offer.id else ("✗ " if not r.feasible else "  ")
        cells.append({
            "offer": star + r.offer.id, "mode": t(f"compare.mode_{r.offer.mode}", lang),
            "total": _money(c.total_mid), "range": f"{_money(c.total_low)}–{_money(c.total_high)}",
            "per_month": _money(c.per_month), "rental": _money(c.rental_mid), "ops": _money(c.ops),
            "setup": _money(c.setup), "idle": _money(c.idle),
            "wall": t("compare.days", lang, d=c.wall_hours / 24), "slowdown": f"{c.slowdown.total:.3f}",
        })

    def build(layout: tuple[str, ...]) -> tuple[list[str], list[list[str]]]:
        heads = ["\n".join(t(f"compare.{k}", lang) for k in col.split("/")) for col in layout]
        rows = [["\n".join(cell[k] for k in col.split("/")) for col in layout] for cell in cells]
        return heads, rows

    layout = _LAYOUTS[-1]
    for candidate in _LAYOUTS:
        heads, rows = build(candidate)
        if table_width(heads, rows) <= width:
            layout = candidate
            break
    heads, rows = build(layout)
    numeric = [col.split("/")[0] not in _TEXT_COLS for col in layout]
    if not fits(heads, rows, numeric, width):  # still too wide: shorten the offer ids in the middle
        over = table_width(heads, rows) - width
        first = max(cell_width(r[0].split("\n")[0]) for r in rows)
        keep = max(8, first - over)
        rows = [["\n".join([middle(r[0].split("\n")[0], keep)] + r[0].split("\n")[1:])] + r[1:] for r in rows]
    table = Table(title=title, title_justify="left", title_style="bold cyan", show_lines=len(layout) < 6)
    add_columns(table, heads, rows, numeric, width)
    for row, r in zip(table.rows, adv.options, strict=True):
        row.style = "bold green" if rec and rec.offer == r.offer.id else ("dim" if not r.feasible else None)
    return table


def compare_table(result: Any, lang: str, console: Any, explain: bool = False) -> None:
    from rich.text import Text

    cur = result.scenario.currency
    console.print(Text(t("compare.title", lang, scenario=result.scenario.path or ""), style="bold"))
    console.print(t("compare.summary", lang, n=len(result.advice), currency=cur, dpm=result.scenario.days_per_month))
    for adv in result.advice:
        rec = adv.recommendation
        kind = t(f"compare.kind_{adv.workload.kind}", lang)
        title = f"{adv.workload.id}  ({kind}, {adv.workload.gpus} × {'/'.join(adv.workload.gpus_allowed)})"
        console.print(_options_table(adv, title, lang, console.width))
        if rec is None:
            console.print(f"  [bold red]{t('compare.verdict', lang)}:[/] {t('compare.no_verdict', lang)}")
        else:
            console.print(f"  [bold]{t('compare.verdict', lang)}:[/] [bold green]{rec.offer}[/] "
                          f"({t(f'compare.mode_{rec.mode}', lang)})")
            for n in rec.reasons:
                console.print(f"    • {note_text(n, lang)}", markup=False)
            console.print(f"  [bold]{t('compare.dimensions', lang)}:[/]")
            for k, d in rec.dimensions.items():
                console.print(f"    {t(f'compare.dim_{k}', lang)}: [bold]{t(f'compare.favors_{d.favors}', lang)}[/]"
                              f" — {note_text(d.reason, lang)}")
        be = adv.break_even_hours
        be_text = t("compare.break_even_value", lang, h=be) if be is not None else t("compare.break_even_none", lang)
        console.print(f"  [bold]{t('compare.break_even', lang)}:[/] {be_text}")
        if rec and rec.flip:
            console.print(f"  [bold]{t('compare.flip', lang)}:[/]")
            for f in rec.flip:
                console.print(f"    • {note_text(f.note, lang)}", markup=False)
        warns = [(None, w) for w in adv.warnings] + [(r.offer.id, w) for r in adv.options for w in r.warnings]
        if warns:
            console.print(f"  [bold yellow]{t('compare.warnings', lang)}:[/]")
            for oid, w in warns:
                prefix = f"{oid}: " if oid else ""
                console.print(f"    [yellow]{w.code}[/] {prefix}{note_text(w.note, lang)}")
        if explain:
            _explain(adv, result, lang, console)
        console.print()
    if explain:
        console.print(t("compare.explain_sources", lang, files=", ".join(result.scenario.catalog_files)),
                      markup=False)


def _explain(adv: WorkloadAdvice, result: Any, lang: str, console: Any) -> None:
    cur = result.scenario.currency
    console.print(f"  [bold]{t('compare.explain_title', lang)}:[/]")
    w = adv.workload
    for r in adv.options:
        s = r.cost.slowdown
        o = r.offer
        for line in _explain_slowdown(w, o, s, lang):
            console.print("    " + line, markup=False)
        for line in _explain_delays(w, o, r.cost, result.scenario.currency, lang):
            console.print("    " + line, markup=False)
        c = r.cost
        if o.mode == "container":
            line = t("compare.explain_cost_ct", lang, offer=o.id, gpus=w.gpus, run=c.run_hours,
                     price=o.price_per_gpu_hour.mid, currency=cur, rental=c.rental_mid, ops=c.ops,
                     setup=c.setup, total=c.total_mid)
        else:
            line = t("compare.explain_cost_bm", lang, offer=o.id, billed=c.billed_gpus, lease=c.lease_hours,
                     wall=c.wall_hours, term=o.min_term_hours, price=o.price_per_gpu_hour.mid, currency=cur,
                     rental=c.rental_mid, ops_h=c.ops_hours, ops=c.ops, setup=c.setup, total=c.total_mid,
                     idle=c.idle)
        console.print("    " + line, markup=False)
        if o.defaults_used:
            console.print("    " + t("compare.explain_defaults", lang, offer=o.id, fields=", ".join(o.defaults_used)),
                          markup=False)


def _explain_slowdown(w: Any, o: Any, s: Any, lang: str) -> list[str]:
    """The slowdown's terms with their inputs (`perf.slowdown`), one line each."""
    tm, cm = s.terms, s.comm
    lines = [t("compare.explain_slowdown", lang, offer=o.id, platform=t(f"compare.mode_{o.platform}", lang),
               tenancy=t(f"compare.tenancy_{o.tenancy}", lang), nic=o.nic, compute=tm.compute,
               intra=tm.intra_node, inter=tm.inter_node, strag=tm.straggler, data=tm.data, total=s.total,
               bound=t(f"compare.bound_{s.bound}", lang))]
    lines.append(t("compare.explain_compute", lang, share=1 - cm.share, oc=o.overhead.compute.mid, compute=tm.compute))
    tcp = t("compare.explain_tcp", lang, tcp=cm.tcp_efficiency) if cm.tcp else ""
    if cm.model == "none":
        lines.append(t("compare.explain_comm_none", lang))
    elif cm.model == "share":
        lines.append(t("compare.explain_comm_share", lang, share=cm.share,
                       binding=t(f"compare.binding_{cm.binding}", lang), bref=cm.bus_ref_gbs,
                       boff=cm.bus_offer_gbs, fi=cm.intra_fraction, fe=cm.inter_fraction, tcp=tcp,
                       nodes=cm.nodes, g=cm.gpus_per_node))
    else:
        st = w.step
        lines.append(t("compare.explain_comm_step", lang, gb=st.gradient_gb, comm=cm.comm_s, bi=cm.b_intra_gbs,
                       bn=cm.b_net_gbs, assumed=t("compare.explain_assumed", lang) if cm.network_assumed else "",
                       overlap=st.overlap, cs=st.compute_s, step=cm.step_s, share=cm.share, fi=cm.intra_fraction,
                       fe=cm.inter_fraction, tcp=tcp, nodes=cm.nodes, g=cm.gpus_per_node))
    j = o.overhead.jitter
    if j.kind == "uniform":
        lines.append(t("compare.explain_jitter_uniform", lang, n=w.gpus, lo=j.low, hi=j.high, strag=tm.straggler))
    else:
        lines.append(t("compare.explain_jitter_tail", lang, n=w.gpus, m=j.low, q=j.high, strag=tm.straggler))
    if s.data_wait > 0:
        lines.append(t("compare.explain_data", lang, d=s.data_wait, keep=1 - s.data_wait, platform=s.platform,
                       total=s.total))
    if s.speed_source != "same-gpu":
        lines.append(t("compare.explain_speed", lang, factor=s.gpu_speed_factor, ref=w.gpus_allowed[0],
                       source=s.speed_source))
    if o.overhead.source:
        lines.append(t("compare.explain_overhead_source", lang, platform=o.platform, tenancy=o.tenancy, nic=o.nic,
                       estimate=t("compare.explain_estimate", lang) if o.overhead.estimate else "",
                       source=o.overhead.source))
    return lines


def _explain_delays(w: Any, o: Any, c: Any, currency: str, lang: str) -> list[str]:
    """Data movement and interruptions (`models.delays`), with their inputs."""
    lines = []
    tr, it = c.transfer, c.interruptions
    if tr.moves > 0:
        lines.append(t("compare.explain_transfer", lang, gb=tr.gb, moves=tr.moves, path=" → ".join(tr.path),
                       gbps=tr.gbps, hours=tr.hours, cost=tr.cost, currency=currency))
    if it.expected > 0:
        if o.mode == "container":
            how = t("compare.recovery_reschedule", lang)
        elif o.spares > 0:
            how = t("compare.recovery_spare", lang, n=o.spares)
        else:
            how = t("compare.recovery_support", lang, response=o.support_response_hours,
                    coverage=o.support_coverage or "?") if o.support_response_hours is not None \
                else t("compare.recovery_support_unknown", lang)
        lines.append(t("compare.explain_interruptions", lang, rate=o.interruptions_per_gpu_day, gpus=w.gpus,
                       n=it.expected, lost=it.lost_hours, ckpt=w.checkpoint_hours, rec=it.recovery_hours,
                       each=o.recovery_hours, how=how))
    return lines


def compare_markdown(result: Any, lang: str) -> str:
    cur = result.scenario.currency
    lines = [f"# {t('compare.title', lang, scenario=result.scenario.path or '')}", "",
             t("compare.summary", lang, n=len(result.advice), currency=cur, dpm=result.scenario.days_per_month), ""]
    cols = ("offer", "mode", "total", "range", "per_month", "idle", "wall", "slowdown", "feasible")
    for adv in result.advice:
        rec = adv.recommendation
        lines += [f"## {adv.workload.id}", "", "| " + " | ".join(t(f"compare.{c}", lang) for c in cols) + " |",
                  "|" + "---|" * len(cols)]
        for r in adv.options:
            c = r.cost
            name = f"**{r.offer.id}**" if rec and rec.offer == r.offer.id else r.offer.id
            lines.append("| " + " | ".join([
                name, t(f"compare.mode_{r.offer.mode}", lang), _money(c.total_mid),
                f"{_money(c.total_low)}–{_money(c.total_high)}", _money(c.per_month), _money(c.idle),
                t("compare.days", lang, d=c.wall_hours / 24), f"{c.slowdown.total:.3f}",
                t("compare.yes" if r.feasible else "compare.no", lang)]) + " |")
        lines.append("")
        if rec:
            lines.append(f"**{t('compare.verdict', lang)}:** {rec.offer} ({t(f'compare.mode_{rec.mode}', lang)})")
            lines.append("")
            lines += [f"- {note_text(n, lang)}" for n in rec.reasons]
            lines += ["", f"**{t('compare.dimensions', lang)}:**", ""]
            lines += [f"- {t(f'compare.dim_{k}', lang)}: **{t(f'compare.favors_{d.favors}', lang)}** — "
                      f"{note_text(d.reason, lang)}" for k, d in rec.dimensions.items()]
        else:
            lines.append(f"**{t('compare.verdict', lang)}:** {t('compare.no_verdict', lang)}")
        be = adv.break_even_hours
        lines += ["", f"**{t('compare.break_even', lang)}:** " + (
            t("compare.break_even_value", lang, h=be) if be is not None else t("compare.break_even_none", lang))]
        if rec and rec.flip:
            lines += ["", f"**{t('compare.flip', lang)}:**", ""] + [f"- {note_text(f.note, lang)}" for f in rec.flip]
        warns = [(None, w) for w in adv.warnings] + [(r.offer.id, w) for r in adv.options for w in r.warnings]
        if warns:
            lines += ["", f"**{t('compare.warnings', lang)}:**", ""]
            lines += [f"- `{w.code}` {oid + ': ' if oid else ''}{note_text(w.note, lang)}" for oid, w in warns]
        lines.append("")
    return "\n".join(lines)

"""Rendering of an audit from its `gpuplan.audit/1` document: rich tables and markdown (the HTML
report reads the same document as JSON).

Rendering never computes: every number comes from the document (`gpuplan.contracts.audit_document` builds
it from the engine's result); this module only rounds and words it.
"""

from __future__ import annotations

from typing import Any

from gpuplan.contracts.audit import SCHEMA, AuditGpu
from gpuplan.contracts.audit import AuditResult as AuditDoc
from gpuplan.contracts.audit_document import CLASSES, rules
from gpuplan.i18n import t

__all__ = ["SCHEMA", "bad_lines", "evidence_text", "lines", "render_markdown", "render_table"]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _money(x: float | None) -> str:
    return "-" if x is None else f"{x:,.2f}"


def evidence_text(g: AuditGpu, lang: str) -> str:
    ev = g.evidence
    if g.class_ == "busy":
        return t("audit.ev_busy", lang, mean=f"{g.mean_util:.2f}")
    if g.class_ == "idle":
        return t("audit.ev_idle", lang, mean=f"{g.mean_util:.3f}")
    if g.class_ == "starved":
        return t(
            "audit.ev_starved",
            lang,
            switches=ev.switches,
            per_hour=f"{ev.switches_per_hour:.1f}",
            median=f"{ev.median_stretch_min or 0.0:.1f}",
            fed=_pct(ev.fed_util or 0.0),
        )
    if g.class_ == "mixed":
        return t("audit.ev_mixed", lang, busy=f"{ev.longest_busy_h:.1f}", idle=f"{ev.longest_idle_h:.1f}")
    text = t("audit.ev_partial", lang)
    if ev.note == "coarse_interval":
        text += t("audit.ev_coarse", lang, interval=f"{ev.interval_s:g}")
    return text


def lines(doc: AuditDoc, lang: str, explain: bool) -> list[str]:
    """The text under the tables (fleet, money, 70% rule, bad data, explanations), as plain sentences."""
    f = doc.fleet
    classes = f.classes.model_dump()
    out = [
        t(
            "audit.fleet_line",
            lang,
            gpus=f.gpus,
            hours=f"{f.gpu_hours_observed:,.1f}",
            mean=_pct(f.mean_util),
            busy_hours=f"{f.gpu_hours_busy:,.1f}",
            idle=_pct(f.idle_share),
            busy=_pct(f.busy_share),
        ),
        t(
            "audit.classes_line",
            lang,
            text=", ".join(f"{t('audit.class_' + c, lang)} {classes[c]}" for c in CLASSES if classes[c]),
        ),
    ]
    if f.gap_hours > 0:
        out.append(t("audit.gaps_line", lang, hours=f"{f.gap_hours:,.2f}"))
    if f.price_per_gpu_hour is None or f.currency is None:
        out.append(t("audit.money_none", lang))
    else:
        cur = f.currency
        out.append(t("audit.money_title", lang, price=f"{f.price_per_gpu_hour:g}", currency=cur))
        out.append(
            t(
                "audit.money_cost",
                lang,
                cost=_money(f.cost),
                idle_cost=_money(f.idle_cost),
                unused=_money(f.unused_cost),
                currency=cur,
            )
        )
        if f.price_low is not None and f.price_high is not None:
            out.append(
                t(
                    "audit.money_range",
                    lang,
                    low=f"{f.price_low:.2f}",
                    high=f"{f.price_high:.2f}",
                    cost_low=_money(f.cost_low),
                    cost_high=_money(f.cost_high),
                    currency=cur,
                )
            )
        if classes.get("starved"):
            out.append(
                t("audit.money_starved", lang, n=classes["starved"], savings=_money(f.starved_savings), currency=cur)
            )
    if doc.gpus:
        key = "audit.rule70_below" if f.rule_70.below else "audit.rule70_above"
        out.append(t(key, lang, mean=_pct(f.mean_util), n=f.rule_70.gpus_below, total=f.gpus))
    out.append(t("audit.bad_total", lang, rows=doc.input.rows, bad=doc.input.bad_rows))
    if explain:
        r = rules()
        out.append(t("audit.explain_title", lang))
        out.append(
            t("audit.explain_weight", lang, gap_factor=f"{r['gap_factor']:g}", min_gap=f"{r['min_gap_s']:g}")
        )
        out.append(t("audit.explain_shares", lang, idle=r["idle_below"], busy=r["busy_from"]))
        out.append(
            t(
                "audit.explain_classes",
                lang,
                busy_mean=r["class_busy_mean"],
                idle_mean=r["class_idle_mean"],
                starved_mean=r["starved_max_mean"],
                near_idle=r["near_idle_below"],
                min_switches=r["starved_min_switches"],
                per_hour=f"{r['starved_switches_per_hour']:g}",
                max_run=f"{r['starved_max_run_min']:g}",
                mixed_h=r["mixed_min_run_h"],
            )
        )
        out.append(t("audit.explain_money", lang, idle=r["idle_below"]))
    return out


def bad_lines(doc: AuditDoc, lang: str) -> list[str]:
    by_kind = doc.input.bad_by_kind.model_dump(exclude_none=True)
    if not by_kind:
        return [t("audit.bad_none", lang)]
    examples = doc.input.bad_examples.model_dump(exclude_none=True)
    return [
        t("audit.bad_line", lang, kind=t(f"audit.kind_{k}", lang), count=n, where=", ".join(examples.get(k, [])))
        for k, n in by_kind.items()
    ]


def _gpu_rows(doc: AuditDoc, lang: str) -> list[list[str]]:
    return [
        [
            g.node,
            g.gpu,
            str(g.samples),
            f"{g.observed_hours:.2f}",
            f"{g.gap_hours:.2f}",
            _pct(g.mean_util),
            _pct(g.idle_share),
            _pct(g.busy_share),
            t(f"audit.class_{g.class_}", lang),
            evidence_text(g, lang),
        ]
        for g in doc.gpus
    ]


def _gpu_head(lang: str) -> list[str]:
    keys = ("node", "gpu", "samples", "hours", "gaps", "mean", "idle", "busy", "class", "evidence")
    return [t(f"audit.col_{k}", lang) for k in keys]


def _priced(doc: AuditDoc) -> bool:
    return doc.fleet.price_per_gpu_hour is not None


def _node_head(doc: AuditDoc, lang: str) -> list[str]:
    keys = ["node", "gpus", "hours", "mean", "idle", "busy"] + (["cost", "idle_cost"] if _priced(doc) else [])
    return [t(f"audit.col_{k}", lang) for k in keys]


def _node_rows(doc: AuditDoc) -> list[list[str]]:
    rows = []
    for n in doc.nodes:
        row = [
            n.node,
            str(n.gpus),
            f"{n.observed_hours:.2f}",
            _pct(n.mean_util),
            _pct(n.idle_share),
            _pct(n.busy_share),
        ]
        if _priced(doc):
            row += [_money(n.cost), _money(n.idle_cost)]
        rows.append(row)
    return rows


def render_table(doc: AuditDoc, lang: str, explain: bool, console: Any) -> None:
    """The GPU and node tables fitted to the console: when the GPU table does not fit, the evidence
    moves below it (one line per GPU), then node and GPU share a column; numbers are never cut."""
    from rich.table import Table

    from gpuplan.render.fit import add_columns, fits

    head, rows = _gpu_head(lang), _gpu_rows(doc, lang)
    numeric = [False, False, True, True, True, True, True, True, False, False]
    evidence_below = False
    layouts = ("all", "no_evidence", "node_gpu")
    for layout in layouts:
        h, r, num = head, rows, numeric
        if layout != "all":
            h, r, num = h[:-1], [x[:-1] for x in r], num[:-1]
        if layout == "node_gpu":
            h = [f"{h[0]}\n{h[1]}"] + h[2:]
            r = [[f"{x[0]}\n{x[1]}"] + x[2:] for x in r]
            num = [False] + num[2:]
        if fits(h, r, num, console.width) or layout == layouts[-1]:
            evidence_below = layout != "all"
            break
    table = Table(title=t("audit.title", lang), show_lines=layout == "node_gpu")
    add_columns(table, h, r, num, console.width)
    console.print(table)
    if evidence_below:
        console.print(f"{head[-1]}:", markup=False)
        for row in rows:
            console.print(f"  {row[0]}/{row[1]}: {row[-1]}", markup=False)
    nodes = Table(title=t("audit.nodes_title", lang))
    node_head = _node_head(doc, lang)
    add_columns(nodes, node_head, _node_rows(doc), [i > 0 for i in range(len(node_head))], console.width)
    console.print(nodes)
    console.print(f"[bold]{t('audit.fleet_title', lang)}[/]")
    for line in lines(doc, lang, explain):
        console.print(line, markup=False)
    console.print(f"[bold]{t('audit.bad_title', lang)}[/]")
    for line in bad_lines(doc, lang):
        console.print("  " + line, markup=False)


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    out = ["| " + " | ".join(esc(h) for h in head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def render_markdown(doc: AuditDoc, lang: str, explain: bool) -> str:
    parts = [
        f"# {t('audit.title', lang)}",
        _md_table(_gpu_head(lang), _gpu_rows(doc, lang)),
        f"## {t('audit.nodes_title', lang)}",
        _md_table(_node_head(doc, lang), _node_rows(doc)),
        f"## {t('audit.fleet_title', lang)}",
        "\n".join(f"- {x}" for x in lines(doc, lang, explain)),
        f"## {t('audit.bad_title', lang)}",
        "\n".join(f"- {x}" for x in bad_lines(doc, lang)),
    ]
    return "\n\n".join(parts) + "\n"

"""Rendering of an `AuditResult`: the JSON contract (gpuplan.audit/1), rich tables, markdown.

Rendering never computes: every number comes from the result; this module only rounds and words it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gpuplan.i18n import t
from gpuplan.telemetry.analyze import CLASSES, RULE_70, AuditResult, GpuStat, rules

SCHEMA = "gpuplan.audit/1"


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def _timeline(res: AuditResult, g: GpuStat) -> dict[str, Any] | None:
    if res.timeline_start_ms is None:
        return None
    start = datetime.fromtimestamp(res.timeline_start_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "start": start,
        "step_s": res.timeline_step_s,
        "util": [None if v is None else round(v, 3) for v in g.timeline],
    }


def to_json(res: AuditResult, demand: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `-o json` contract; keys beyond the issue's are additive (bad_examples, money details,
    `gpus[].timeline`: the heat map's bins, `{"start": ISO UTC, "step_s": 3600, "util": [ratio | null]}`)."""
    price = res.price
    fleet: dict[str, Any] = {
        "gpus": res.fleet.gpus,
        "mean_util": _r(res.fleet.mean_util),
        "gpu_hours_observed": _r(res.fleet.observed_hours),
        "gpu_hours_busy": _r(res.gpu_hours_busy),
        "cost": _r(res.fleet.cost, 2),
        "idle_cost": _r(res.fleet.idle_cost, 2),
        "idle_share": _r(res.fleet.idle_share),
        "busy_share": _r(res.fleet.busy_share),
        "gap_hours": _r(res.fleet.gap_hours),
        "classes": res.fleet.classes,
        "unused_cost": _r(res.unused_cost, 2),
        "starved_savings": _r(res.starved_savings, 2),
        "currency": price.currency if price else None,
        "price_per_gpu_hour": _r(price.per_gpu_hour) if price else None,
        "price_low": _r(price.low) if price and price.low is not None else None,
        "price_high": _r(price.high) if price and price.high is not None else None,
        "rule_70": {"threshold": RULE_70, "below": res.rule_70_below, "gpus_below": res.gpus_below_70},
    }
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "input": {
            "files": res.files,
            "rows": res.rows,
            "bad_rows": res.bad_rows,
            "bad_by_kind": res.bad_by_kind,
            "bad_examples": res.bad_examples,
        },
        "gpus": [
            {
                "node": g.node,
                "gpu": g.gpu,
                "samples": g.samples,
                "observed_hours": _r(g.observed_hours),
                "gap_hours": _r(g.gap_hours),
                "mean_util": _r(g.mean_util),
                "idle_share": _r(g.idle_share),
                "busy_share": _r(g.busy_share),
                "class": g.cls,
                "evidence": g.evidence,
                "timeline": _timeline(res, g),
            }
            for g in res.gpus
        ],
        "nodes": [
            {
                "node": n.name,
                "gpus": n.gpus,
                "observed_hours": _r(n.observed_hours),
                "gap_hours": _r(n.gap_hours),
                "mean_util": _r(n.mean_util),
                "idle_share": _r(n.idle_share),
                "busy_share": _r(n.busy_share),
                "classes": n.classes,
                "cost": _r(n.cost, 2),
                "idle_cost": _r(n.idle_cost, 2),
            }
            for n in res.nodes
        ],
        "fleet": fleet,
    }
    if demand is not None:
        out["demand"] = demand
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _money(x: float | None) -> str:
    return "-" if x is None else f"{x:,.2f}"


def evidence_text(g: GpuStat, lang: str) -> str:
    ev = g.evidence
    if g.cls == "busy":
        return t("audit.ev_busy", lang, mean=f"{g.mean_util:.2f}")
    if g.cls == "idle":
        return t("audit.ev_idle", lang, mean=f"{g.mean_util:.3f}")
    if g.cls == "starved":
        return t(
            "audit.ev_starved",
            lang,
            switches=ev["switches"],
            per_hour=f"{ev['switches_per_hour']:.1f}",
            median=f"{ev['median_stretch_min']:.1f}",
            fed=_pct(g.fed_util),
        )
    if g.cls == "mixed":
        return t(
            "audit.ev_mixed", lang, busy=f"{ev['longest_busy_h']:.1f}", idle=f"{ev['longest_idle_h']:.1f}"
        )
    text = t("audit.ev_partial", lang)
    if ev.get("note") == "coarse_interval":
        text += t("audit.ev_coarse", lang, interval=f"{g.interval_s:g}")
    return text


def lines(res: AuditResult, lang: str, explain: bool) -> list[str]:
    """The text under the tables (fleet, money, 70% rule, bad data, explanations), as plain sentences."""
    f = res.fleet
    out = [
        t(
            "audit.fleet_line",
            lang,
            gpus=f.gpus,
            hours=f"{f.observed_hours:,.1f}",
            mean=_pct(f.mean_util),
            busy_hours=f"{res.gpu_hours_busy:,.1f}",
            idle=_pct(f.idle_share),
            busy=_pct(f.busy_share),
        ),
        t(
            "audit.classes_line",
            lang,
            text=", ".join(f"{t('audit.class_' + c, lang)} {f.classes[c]}" for c in CLASSES if f.classes[c]),
        ),
    ]
    if f.gap_hours > 0:
        out.append(t("audit.gaps_line", lang, hours=f"{f.gap_hours:,.2f}"))
    p = res.price
    if p is None:
        out.append(t("audit.money_none", lang))
    else:
        out.append(t("audit.money_title", lang, price=f"{p.per_gpu_hour:g}", currency=p.currency))
        out.append(
            t(
                "audit.money_cost",
                lang,
                cost=_money(f.cost),
                idle_cost=_money(f.idle_cost),
                unused=_money(res.unused_cost),
                currency=p.currency,
            )
        )
        if p.low is not None and p.high is not None:
            out.append(
                t(
                    "audit.money_range",
                    lang,
                    low=f"{p.low:.2f}",
                    high=f"{p.high:.2f}",
                    cost_low=_money(f.observed_hours * p.low),
                    cost_high=_money(f.observed_hours * p.high),
                    currency=p.currency,
                )
            )
        if f.classes.get("starved"):
            out.append(
                t(
                    "audit.money_starved",
                    lang,
                    n=f.classes["starved"],
                    savings=_money(res.starved_savings),
                    currency=p.currency,
                )
            )
    if res.gpus:
        key = "audit.rule70_below" if res.rule_70_below else "audit.rule70_above"
        out.append(t(key, lang, mean=_pct(f.mean_util), n=res.gpus_below_70, total=f.gpus))
    out.append(t("audit.bad_total", lang, rows=res.rows, bad=res.bad_rows))
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


def bad_lines(res: AuditResult, lang: str) -> list[str]:
    if not res.bad_by_kind:
        return [t("audit.bad_none", lang)]
    return [
        t(
            "audit.bad_line",
            lang,
            kind=t(f"audit.kind_{k}", lang),
            count=n,
            where=", ".join(res.bad_examples.get(k, [])),
        )
        for k, n in res.bad_by_kind.items()
    ]


def _gpu_rows(res: AuditResult, lang: str) -> list[list[str]]:
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
            t(f"audit.class_{g.cls}", lang),
            evidence_text(g, lang),
        ]
        for g in res.gpus
    ]


def _gpu_head(lang: str) -> list[str]:
    keys = ("node", "gpu", "samples", "hours", "gaps", "mean", "idle", "busy", "class", "evidence")
    return [t(f"audit.col_{k}", lang) for k in keys]


def _node_head(res: AuditResult, lang: str) -> list[str]:
    keys = ["node", "gpus", "hours", "mean", "idle", "busy"] + (["cost", "idle_cost"] if res.price else [])
    return [t(f"audit.col_{k}", lang) for k in keys]


def _node_rows(res: AuditResult) -> list[list[str]]:
    rows = []
    for n in res.nodes:
        row = [
            n.name,
            str(n.gpus),
            f"{n.observed_hours:.2f}",
            _pct(n.mean_util),
            _pct(n.idle_share),
            _pct(n.busy_share),
        ]
        if res.price:
            row += [_money(n.cost), _money(n.idle_cost)]
        rows.append(row)
    return rows


def render_table(res: AuditResult, lang: str, explain: bool, console: Any) -> None:
    """The GPU and node tables fitted to the console: when the GPU table does not fit, the evidence
    moves below it (one line per GPU), then node and GPU share a column; numbers are never cut."""
    from rich.table import Table

    from gpuplan.render.fit import add_columns, fits

    head, rows = _gpu_head(lang), _gpu_rows(res, lang)
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
    node_head = _node_head(res, lang)
    add_columns(nodes, node_head, _node_rows(res), [i > 0 for i in range(len(node_head))], console.width)
    console.print(nodes)
    console.print(f"[bold]{t('audit.fleet_title', lang)}[/]")
    for line in lines(res, lang, explain):
        console.print(line, markup=False)
    console.print(f"[bold]{t('audit.bad_title', lang)}[/]")
    for line in bad_lines(res, lang):
        console.print("  " + line, markup=False)


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    out = ["| " + " | ".join(esc(h) for h in head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def render_markdown(res: AuditResult, lang: str, explain: bool) -> str:
    parts = [
        f"# {t('audit.title', lang)}",
        _md_table(_gpu_head(lang), _gpu_rows(res, lang)),
        f"## {t('audit.nodes_title', lang)}",
        _md_table(_node_head(res, lang), _node_rows(res)),
        f"## {t('audit.fleet_title', lang)}",
        "\n".join(f"- {x}" for x in lines(res, lang, explain)),
        f"## {t('audit.bad_title', lang)}",
        "\n".join(f"- {x}" for x in bad_lines(res, lang)),
    ]
    return "\n\n".join(parts) + "\n"

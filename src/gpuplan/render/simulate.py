"""Rendering replay results (computed elsewhere): rich table and markdown, in en or zh."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuplan.i18n import t as _t


def translator(lang: str) -> Callable[..., str]:
    """`simulate.KEY` messages in `lang`."""

    def tr(key: str, **values: Any) -> str:
        return _t(f"simulate.{key}", lang, **values)

    return tr


def _rows(
    results: list[dict[str, Any]], priced: bool, compact: bool = False
) -> tuple[list[str], list[list[str]]]:
    keys = ["col_reserved", "col_burst_jobs", "col_gpuh_reserved", "col_gpuh_burst", "col_util", "col_wait"]
    spot = any(r.get("preemptions") is not None for r in results)
    if spot:  # the spot tier (`--spot`): its GPU-hours, and the reclaims with the GPU-hours they lost
        keys[4:4] = ["col_gpuh_spot", "col_reclaims"]
    if priced:
        keys += ["col_cost", "col_cost_month"]
    if compact:  # a terminal of 80 columns: p95 wait and the monthly cost only
        keys = [
            {"col_wait": "col_wait_p95", "col_cost_month": "col_month_short"}.get(k, k)
            for k in keys
            if k != "col_cost"
        ]
    rows = []
    for r in results:
        w = r["wait_hours"]
        row = [
            f"{r['reserved_gpus']}",
            f"{r['burst_jobs']:,}",
            f"{r['gpu_hours']['reserved']:,.0f}",
            f"{r['gpu_hours']['burst']:,.0f}",
            *([f"{r['gpu_hours'].get('spot') or 0.0:,.0f}",
               f"{r.get('preemptions') or 0:,} / {r.get('lost_gpu_hours') or 0.0:,.1f}"] if spot else []),
            f"{r['reserved_utilization']:.1%}",
            f"{w['p95']:,.2f}" if compact else f"{w['mean']:,.2f} / {w['p95']:,.2f} / {w['max']:,.2f}",
        ]
        if priced:
            c = r["cost"] or {}
            month = f"{c.get('per_month', 0.0):,.0f}"
            if compact:
                row.append(month)
            else:
                row += [
                    f"{c.get('total', 0.0):,.0f}",
                    f"{month} ({c.get('per_month_low', 0.0):,.0f}-{c.get('per_month_high', 0.0):,.0f})",
                ]
        rows.append(row)
    return keys, rows


def _lines(meta: dict[str, Any], results: list[dict[str, Any]], lang: str) -> list[str]:
    t = translator(lang)
    lines = [
        t(
            "trace",
            trace=meta["trace"],
            format=meta["format"],
            jobs=f"{results[0]['jobs']:,}" if results else "0",
            records=f"{meta['records']:,}",
        )
    ]
    if "gpu_hours" in meta:
        lines.append(t("gpuh_total", total=f"{meta['gpu_hours']:,.0f}"))
    skipped = results[0]["skipped"] if results else {}
    if skipped:
        detail = ", ".join(f"{t('reason_' + k) if _has(lang, k) else k} {v:,}" for k, v in skipped.items())
        lines.append(t("skipped", detail=detail))
    else:
        lines.append(t("skipped_none"))
    packing = meta["packing"]
    if meta.get("packing_mode") in ("gpu", "node"):
        packing = t(f"packing_{meta['packing_mode']}", n=meta.get("gpus_per_node"))
    lines.append(t("settings", wait=meta["wait"], queueing=meta["queueing"], packing=packing))
    prices = meta.get("prices")
    if prices:
        lines.append(
            t(
                "pricing",
                bare_metal=prices["offer_bare_metal"] or "-",
                lease=f"{prices['lease_per_gpu_hour']:.4g}",
                ops=f"{prices['ops_per_gpu_hour']:.4g}",
                container=prices["offer_container"] or "-",
                container_price=f"{prices['container_per_gpu_hour']:.4g}",
                slowdown=prices["container_slowdown"],
                currency=prices["currency"],
            )
        )
        if prices.get("bare_metal_slowdown") is not None and prices.get("offer_bare_metal"):
            lines.append(t("overtime_rule", s_b=f"{prices['bare_metal_slowdown']:.6g}",
                           rate=f"{prices.get('overtime_per_gpu_hour', 0.0):.4g}"))
        lines.append(t("cost_rule", days=f"{prices['days_per_month']:g}"))
    return lines


def spot_lines(doc: dict[str, Any] | list[dict[str, Any]], lang: str) -> list[str]:
    """The spot tier's settings in words (`--spot`), or nothing."""
    sp = doc.get("spot") if isinstance(doc, dict) else None
    if not sp:
        return []
    from gpuplan.inputs.units import format_duration

    t = translator(lang)
    ckpt = sp.get("checkpoint_hours")
    fallback = (t("fallback_requeue", runs=sp["max_spot_runs"]) if sp["fallback"] == "requeue"
                else t("fallback_on_demand"))
    return [t("spot_line", gpus=sp["gpus"], offer=sp["offer"], price=f"{sp['price_per_gpu_hour']:.4g}",
              rate=f"{sp['rate_per_node_hour']:.4g}", seed=sp["seed"],
              checkpoint=t("checkpoint_none") if ckpt is None else format_duration(ckpt),
              restart=format_duration(sp["restart_hours"]) if sp["restart_hours"] else "0", fallback=fallback)]


def _has(lang: str, reason: str) -> bool:
    from gpuplan.i18n import catalog

    return f"simulate.reason_{reason}" in catalog(lang)


def _doc_runs(doc: dict[str, Any] | list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The runs and the `gpuplan.simulate/1` object (a bare list of runs reads as one without a budget)."""
    if isinstance(doc, list):
        return doc, {"runs": doc, "max_wait_hours": {}, "recommended": None, "no_recommendation": None}
    return list(doc["runs"]), doc


def _budget(max_wait: dict[str, float]) -> str:
    from gpuplan.inputs.units import format_duration

    return ", ".join(f"{k} <= {format_duration(v)}" for k, v in max_wait.items())


def recommendation_lines(doc: dict[str, Any], lang: str) -> list[str]:
    """The recommended R and why (or why none), and the absurd-wait warning, in `lang`."""
    t = translator(lang)
    runs, d = _doc_runs(doc)
    currency = next((r["cost"]["currency"] for r in runs if r.get("cost")), "")
    out: list[str] = []
    rec = d.get("recommended")
    budget = _budget(d.get("max_wait_hours") or {})
    if rec is not None:
        why = t("why_max_wait", budget=budget) if rec["basis"] == "max_wait" else t("why_cheapest")
        waiting = rec.get("waiting_cost_per_month")
        w = rec["wait_hours"]
        out.append(t(
            "recommended",
            r=rec["reserved_gpus"],
            cost=f"{rec['cost_per_month']:,.0f}",
            currency=currency,
            waiting="" if waiting is None else t("waiting_part", cost=f"{waiting:,.0f}"),
            mean=f"{w['mean']:,.2f}",
            p95=f"{w['p95']:,.2f}",
            max=f"{w['max']:,.2f}",
            why=why,
        ))
    else:
        none = d.get("no_recommendation")
        if none is not None and none["code"] == "none_meets":
            out.append(t("none_meets", budget=budget))
        elif none is not None:
            smallest = none.get("smallest_meeting")
            out.append(t("not_priced") + (t("smallest_meeting", budget=budget, r=smallest)
                                           if smallest is not None and budget else ""))
    cheap = d.get("cheapest")
    if cheap and cheap.get("absurd_wait"):
        out.append(t(
            "absurd_wait_budget" if budget else "absurd_wait",
            r=cheap["reserved_gpus"],
            cost=f"{cheap['cost_per_month']:,.0f}",
            currency=currency,
            p95=f"{cheap['wait_hours']['p95']:,.0f}",
            days=f"{cheap['wait_hours']['p95'] / 24:,.0f}",
        ))
    return out


def render_table(
    meta: dict[str, Any], doc: dict[str, Any] | list[dict[str, Any]], lang: str, width: int = 100
) -> list[Any]:
    """The heading lines, the table (the recommended R marked `*`) and the recommendation.

    Below 140 columns: p95 wait and the monthly cost only; below 72 the GPU-hour columns go too."""
    from rich.table import Table
    from rich.text import Text

    from gpuplan.render.fit import add_columns

    t = translator(lang)
    results, d = _doc_runs(doc)
    priced = any(r["cost"] is not None for r in results)
    currency = next((r["cost"]["currency"] for r in results if r["cost"]), "")
    compact = width < 140
    keys, rows = _rows(results, priced, compact=compact)
    rec = d.get("recommended")
    mark = str(rec["reserved_gpus"]) if rec else None
    rows = [[row[0] + ("*" if row[0] == mark else " ")] + row[1:] for row in rows] if mark else rows
    if width < 72:
        drop = {"col_gpuh_reserved", "col_gpuh_burst", "col_gpuh_spot"}
        idx = [i for i, k in enumerate(keys) if k not in drop]
        keys = [keys[i] for i in idx]
        rows = [[row[i] for i in idx] for row in rows]
    table = Table(title=t("title"), title_justify="left")
    headers = [t(k, currency=currency) if "{currency}" in _t(f"simulate.{k}", lang) else t(k) for k in keys]
    add_columns(table, headers, rows, [True] * len(keys), width)
    items: list[Any] = [Text(line) for line in _lines(meta, results, lang) + spot_lines(d, lang)] + [table]
    recs = recommendation_lines(d, lang)
    items += [Text(("* " if i == 0 and rec else "") + line) for i, line in enumerate(recs)]
    return items


def render_markdown(meta: dict[str, Any], doc: dict[str, Any] | list[dict[str, Any]], lang: str) -> str:
    t = translator(lang)
    results, d = _doc_runs(doc)
    priced = any(r["cost"] is not None for r in results)
    currency = next((r["cost"]["currency"] for r in results if r["cost"]), "")
    keys, rows = _rows(results, priced)
    rec = d.get("recommended")
    mark = str(rec["reserved_gpus"]) if rec else None
    rows = [[f"**{row[0]}**" if row[0] == mark else row[0]] + row[1:] for row in rows]
    out = [f"## {t('title')}", ""]
    out += [f"- {line}" for line in _lines(meta, results, lang) + spot_lines(d, lang)]
    out.append("")
    out.append("| " + " | ".join(t(k, currency=currency) if "cost" in k else t(k) for k in keys) + " |")
    out.append("|" + "---:|" * len(keys))
    out += ["| " + " | ".join(row) + " |" for row in rows]
    recs = recommendation_lines(d, lang)
    if recs:
        out.append("")
        out += [f"**{line}**" if i == 0 and rec else line for i, line in enumerate(recs)]
    return "\n".join(out) + "\n"

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
            f"{r['reserved_utilization']:.1%}",
            f"{w['p95']:.2f}" if compact else f"{w['mean']:.2f} / {w['p95']:.2f} / {w['max']:.2f}",
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
    lines.append(t("settings", wait=meta["wait"], queueing=meta["queueing"], packing=meta["packing"]))
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
        lines.append(t("cost_rule", days=f"{prices['days_per_month']:g}"))
    return lines


def _has(lang: str, reason: str) -> bool:
    from gpuplan.i18n import catalog

    return f"simulate.reason_{reason}" in catalog(lang)


def render_table(meta: dict[str, Any], results: list[dict[str, Any]], lang: str) -> list[Any]:
    from rich.table import Table
    from rich.text import Text

    t = translator(lang)
    priced = any(r["cost"] is not None for r in results)
    currency = next((r["cost"]["currency"] for r in results if r["cost"]), "")
    keys, rows = _rows(results, priced, compact=True)
    table = Table(title=t("title"), title_justify="left", pad_edge=False)
    for k in keys:
        table.add_column(
            t(k, currency=currency) if "{currency}" in _t(f"simulate.{k}", lang) else t(k), justify="right"
        )
    for row in rows:
        table.add_row(*row)
    return [Text(line) for line in _lines(meta, results, lang)] + [table]


def render_markdown(meta: dict[str, Any], results: list[dict[str, Any]], lang: str) -> str:
    t = translator(lang)
    priced = any(r["cost"] is not None for r in results)
    currency = next((r["cost"]["currency"] for r in results if r["cost"]), "")
    keys, rows = _rows(results, priced)
    out = [f"## {t('title')}", ""]
    out += [f"- {line}" for line in _lines(meta, results, lang)]
    out.append("")
    out.append("| " + " | ".join(t(k, currency=currency) if "cost" in k else t(k) for k in keys) + " |")
    out.append("|" + "---:|" * len(keys))
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out) + "\n"

"""`gpuplan vendors`: the checklist's `gpuplan.vendors/1` document as a table and markdown.

The document (`contracts.vendors_document.vendors_json`) words the engine's evidence; these read it
only. Nothing is computed here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuplan.i18n import t

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import Console

_STATUS_STYLE = {"pass": "green", "warn": "yellow", "fail": "red", "unknown": "dim"}


def _provider_name(provider: str | None, lang: str) -> str:
    return provider if provider is not None else t("vendors.no_provider", lang)


def _rows(doc: Mapping[str, Any], lang: str) -> list[tuple[list[str], str]]:
    rows = []
    for o in doc["offers"]:
        for i, c in enumerate(o["checks"]):
            first = o["offer"] if i == 0 else ""
            rows.append(([first, t(f"vendors.check.{c['id']}", lang), t(f"vendors.status.{c['status']}", lang),
                          c["evidence"]], c["status"]))
    return rows


def vendors_table(doc: Mapping[str, Any], lang: str, console: Console) -> None:
    from rich.table import Table
    from rich.text import Text

    from gpuplan.render.fit import add_columns

    width = console.width
    table = Table(title=t("vendors.title_text", lang), title_justify="left")
    rows = _rows(doc, lang)
    add_columns(table, [t(f"vendors.{k}", lang) for k in ("col_offer", "col_check", "col_status", "col_evidence")],
                [r for r, _ in rows], [False, False, False, False], width)
    for row, (_, status) in zip(table.rows, rows, strict=True):
        row.style = _STATUS_STYLE[status]
    n = len(doc["offers"][0]["checks"]) if doc["offers"] else 0
    for i in range(n, len(rows), n):  # a line between offers
        table.rows[i - 1].end_section = True
    console.print(table)
    console.print(Text(t("vendors.providers_colon", lang), style="bold"))
    grid = Table.grid()
    grid.add_column(width=4, no_wrap=True)
    grid.add_column(overflow="fold")
    for p in doc["providers"]:  # a wrapped summary stays indented under its bullet
        grid.add_row("  • ", Text(_provider_name(p["provider"], lang) + t("vendors.name_sep", lang) + p["summary"]))
    console.print(grid)


def vendors_markdown(doc: Mapping[str, Any], lang: str) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    name = doc["scenario"] or "<scenario>"
    parts = [f"# {t('vendors.title', lang, scenario=name)}", ""]
    for o in doc["offers"]:
        head = o["offer"] if o["provider"] is None else f"{o['offer']} ({o['provider']})"
        parts += [f"## {esc(head)}", "",
                  f"| {t('vendors.col_check', lang)} | {t('vendors.col_status', lang)} | "
                  f"{t('vendors.col_evidence', lang)} |", "|---|---|---|"]
        for c in o["checks"]:
            check, status = t(f"vendors.check.{c['id']}", lang), t(f"vendors.status.{c['status']}", lang)
            parts.append(f"| {check} | **{status}** | {esc(c['evidence'])} |")
        parts.append("")
    parts += [f"## {t('vendors.providers', lang)}", ""]
    sep = t("vendors.name_sep", lang)
    parts += [f"- **{esc(_provider_name(p['provider'], lang))}**{sep}{esc(p['summary'])}" for p in doc["providers"]]
    return "\n".join(parts) + "\n"

"""Rendering a comparison from its `gpuplan.compare/1` contract: JSON, a Rich table, markdown.

Every function here reads only the contract (`contracts.compare_document` builds it; `api.CompareResult
.document()` returns it) and formats; none computes a figure.
"""

from __future__ import annotations

from typing import Any

from gpuplan.contracts.compare import CompareResult as CompareDoc
from gpuplan.contracts.compare import CompareWorkload
from gpuplan.i18n import t

SCHEMA = "gpuplan.compare/1"


def compare_json(doc: CompareDoc) -> dict[str, Any]:
    """What `compare -o json` prints (`explain` lines only when the document has them)."""
    return doc.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _money(x: float) -> str:
    return f"{x:,.0f}"


# Table layouts, widest first; `a/b` is one column with b on a second line (the narrow layouts).
_LAYOUTS: tuple[tuple[str, ...], ...] = (
    ("offer", "mode", "total", "range", "per_month", "rental", "ops", "setup", "idle", "wall", "slowdown"),
    ("offer", "mode", "total", "range", "per_month", "idle", "wall", "slowdown"),
    ("offer/mode", "total/range", "per_month", "idle", "wall/slowdown"),
)
_TEXT_COLS = frozenset({"offer", "mode"})


def _options_table(wl: CompareWorkload, title: str, lang: str, width: int) -> Any:
    """The options of one workload: the widest layout that fits `width`; numbers are never cut (ids are
    shortened in the middle when even the narrowest layout is too wide: the JSON has them whole)."""
    from rich.table import Table

    from gpuplan.render.fit import add_columns, cell_width, fits, middle, table_width

    rec = wl.recommendation
    cells = []
    for r in wl.options:
        c, tm = r.cost, r.time
        star = "★ " if rec and rec.offer == r.offer else ("✗ " if not r.feasible else "  ")
        cells.append({
            "offer": star + r.offer, "mode": _mode(r, lang),
            "total": _money(c.total), "range": f"{_money(c.low)}–{_money(c.high)}",
            "per_month": _money(c.per_month), "rental": _money(c.rental), "ops": _money(c.ops),
            "setup": _money(c.setup), "idle": _money(c.idle),
            "wall": t("compare.days", lang, d=tm.wall_hours / 24), "slowdown": f"{tm.slowdown:.3f}",
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
    for row, r in zip(table.rows, wl.options, strict=True):
        row.style = "bold green" if rec and rec.offer == r.offer else ("dim" if not r.feasible else None)
    return table


def _mode(option: Any, lang: str) -> str:
    # a VM says so; otherwise the billing mode (bare metal or container)
    return t("compare.mode_vm", lang) if option.platform == "vm" else t(f"compare.mode_{option.mode}", lang)


def compare_table(doc: CompareDoc, lang: str, console: Any, explain: bool = False,
                  scenario: str | None = None) -> None:
    from rich.text import Text

    console.print(Text(t("compare.title", lang, scenario=scenario or ""), style="bold"))
    console.print(t("compare.summary_one" if len(doc.workloads) == 1 else "compare.summary", lang, n=len(doc.workloads),
               currency=doc.currency, dpm=doc.days_per_month))
    for wl in doc.workloads:
        rec = wl.recommendation
        kind = t(f"compare.kind_{wl.kind}", lang)
        title = f"{wl.id}  ({kind}, {wl.gpus} × {'/'.join(wl.gpu)})"
        console.print(_options_table(wl, title, lang, console.width))
        if rec is None:
            console.print(f"  [bold red]{t('compare.verdict', lang)}:[/] {t('compare.no_verdict', lang)}")
        else:
            console.print(f"  [bold]{t('compare.verdict', lang)}:[/] [bold green]{rec.offer}[/] "
                          f"({t(f'compare.mode_{rec.mode}', lang)})")
            for reason in rec.reasons:
                console.print(f"    • {reason}", markup=False)
            console.print(f"  [bold]{t('compare.dimensions', lang)}:[/]")
            for k, d in rec.dimensions:
                console.print(f"    {t(f'compare.dim_{k}', lang)}: [bold]{t(f'compare.favors_{d.favors}', lang)}[/]"
                              f" — {d.reason}")
        be = wl.break_even.hours_per_day
        be_text = t("compare.break_even_value", lang, h=be) if be is not None else t("compare.break_even_none", lang)
        console.print(f"  [bold]{t('compare.break_even', lang)}:[/] {be_text}")
        if rec and rec.flip:
            console.print(f"  [bold]{t('compare.flip', lang)}:[/]")
            for f in rec.flip:
                console.print(f"    • {f.message}", markup=False)
        warns = [(None, w) for w in wl.warnings] + [(r.offer, w) for r in wl.options for w in r.warnings]
        if warns:
            console.print(f"  [bold yellow]{t('compare.warnings', lang)}:[/]")
            for oid, w in warns:
                prefix = f"{oid}: " if oid else ""
                console.print(f"    [yellow]{w.code}[/] {prefix}{w.message}")
        if explain:
            console.print(f"  [bold]{t('compare.explain_title', lang)}:[/]")
            for r in wl.options:
                for line in r.explain or []:
                    console.print("    " + line, markup=False)
        console.print()
    if explain:
        console.print(t("compare.explain_sources", lang, files=", ".join(doc.catalog_files)), markup=False)


def compare_markdown(doc: CompareDoc, lang: str, scenario: str | None = None) -> str:
    lines = [f"# {t('compare.title', lang, scenario=scenario or '')}", "",
             t("compare.summary_one" if len(doc.workloads) == 1 else "compare.summary", lang, n=len(doc.workloads),
               currency=doc.currency, dpm=doc.days_per_month), ""]
    cols = ("offer", "mode", "total", "range", "per_month", "idle", "wall", "slowdown", "feasible")
    for wl in doc.workloads:
        rec = wl.recommendation
        lines += [f"## {wl.id}", "", "| " + " | ".join(t(f"compare.{c}", lang) for c in cols) + " |",
                  "|" + "---|" * len(cols)]
        for r in wl.options:
            c = r.cost
            name = f"**{r.offer}**" if rec and rec.offer == r.offer else r.offer
            lines.append("| " + " | ".join([
                name, _mode(r, lang), _money(c.total), f"{_money(c.low)}–{_money(c.high)}", _money(c.per_month),
                _money(c.idle), t("compare.days", lang, d=r.time.wall_hours / 24), f"{r.time.slowdown:.3f}",
                t("compare.yes" if r.feasible else "compare.no", lang)]) + " |")
        lines.append("")
        if rec:
            lines.append(f"**{t('compare.verdict', lang)}:** {rec.offer} ({t(f'compare.mode_{rec.mode}', lang)})")
            lines.append("")
            lines += [f"- {reason}" for reason in rec.reasons]
            lines += ["", f"**{t('compare.dimensions', lang)}:**", ""]
            lines += [f"- {t(f'compare.dim_{k}', lang)}: **{t(f'compare.favors_{d.favors}', lang)}** — {d.reason}"
                      for k, d in rec.dimensions]
        else:
            lines.append(f"**{t('compare.verdict', lang)}:** {t('compare.no_verdict', lang)}")
        be = wl.break_even.hours_per_day
        lines += ["", f"**{t('compare.break_even', lang)}:** " + (
            t("compare.break_even_value", lang, h=be) if be is not None else t("compare.break_even_none", lang))]
        if rec and rec.flip:
            lines += ["", f"**{t('compare.flip', lang)}:**", ""] + [f"- {f.message}" for f in rec.flip]
        warns = [(None, w) for w in wl.warnings] + [(r.offer, w) for r in wl.options for w in r.warnings]
        if warns:
            lines += ["", f"**{t('compare.warnings', lang)}:**", ""]
            lines += [f"- `{w.code}` {oid + ': ' if oid else ''}{w.message}" for oid, w in warns]
        lines.append("")
    return "\n".join(lines)

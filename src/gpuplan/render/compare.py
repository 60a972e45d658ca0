"""Rendering a comparison from its `gpuplan.compare/1` contract: JSON, a Rich table, markdown.

Every function here reads only the contract (`contracts.compare_document` builds it; `api.CompareResult
.document()` returns it) and formats; none computes a figure.
"""

from __future__ import annotations

from typing import Any

from gpuplan.contracts.compare import CompareResult as CompareDoc
from gpuplan.contracts.compare import CompareWorkload
from gpuplan.i18n import t
from gpuplan.render.textbox import Painter, box_table, cell_len, painter, wrap

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


def _options_table(wl: CompareWorkload, title: str, lang: str, width: int, paint: Painter) -> list[str]:
    """The options of one workload: the widest layout that fits `width`; numbers are never cut (ids are
    shortened in the middle when even the narrowest layout is too wide: the JSON has them whole)."""
    from gpuplan.render.fit import cell_width, fit_widths, fits, middle, table_width

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

    # each key's widest cell and header line, measured once; a column "a/b" is as wide as a's and b's
    keys = _LAYOUTS[0]
    wide = {k: max((cell_width(cell[k]) for cell in cells), default=0) for k in keys}
    head = {k: cell_width(t(f"compare.{k}", lang)) for k in keys}

    def natural(col: str) -> int:
        return max(max(wide[k], head[k]) for k in col.split("/"))

    numeric_of = {layout: [col.split("/")[0] not in _TEXT_COLS for col in layout] for layout in _LAYOUTS}
    for layout in _LAYOUTS if cells else ():  # the widest layout whose natural widths fit: nothing to wrap
        widths = [natural(col) for col in layout]
        if sum(widths) + 3 * len(widths) + 1 <= width:
            heads, rows = build(layout)
            return box_table(title, heads, rows, numeric_of[layout], widths, show_lines=len(layout) < 6,
                             row_styles=_row_styles(wl), paint=paint)
    layout = _LAYOUTS[-1]
    heads, rows = build(layout)
    numeric = numeric_of[layout]
    if not fits(heads, rows, numeric, width):  # still too wide: shorten the offer ids in the middle
        over = table_width(heads, rows) - width
        first = max(cell_width(r[0].split("\n")[0]) for r in rows)
        keep = max(8, first - over)
        rows = [["\n".join([middle(r[0].split("\n")[0], keep)] + r[0].split("\n")[1:])] + r[1:] for r in rows]
    widths, _ = fit_widths(heads, rows, numeric, width)
    return box_table(title, heads, rows, numeric, widths, show_lines=len(layout) < 6, row_styles=_row_styles(wl),
                     paint=paint)


def _row_styles(wl: CompareWorkload) -> list[str | None]:
    rec = wl.recommendation
    return ["bold green" if rec and rec.offer == r.offer else ("dim" if not r.feasible else None) for r in wl.options]


def _mode(option: Any, lang: str) -> str:
    # a VM says so; otherwise the billing mode (bare metal or container)
    return t("compare.mode_vm", lang) if option.platform == "vm" else t(f"compare.mode_{option.mode}", lang)


def _rec_mode(wl: Any, lang: str) -> str:
    """The recommended option's label, as its table row shows it (a VM says VM)."""
    rec = wl.recommendation
    row = next((r for r in wl.options if r.offer == rec.offer), None)
    return _mode(row, lang) if row is not None else t(f"compare.mode_{rec.mode}", lang)


DETAILS_AT_MOST = 200
"""Workloads up to which the table shows each one's options and reasons without `--details`; past it,
one summary table (a row a workload) and a line saying how to see the details. An assumption about
reading: 200 workloads of details are already some 8,000 lines of terminal."""


def compare_table(doc: CompareDoc, lang: str, console: Any, explain: bool = False,
                  scenario: str | None = None, details: bool = False) -> None:
    """The comparison as text tables on `console`: each workload's options, verdict, reasons,
    break-even, what would flip it and warnings (`explain`: the formula lines too). Past
    `DETAILS_AT_MOST` workloads a summary table comes first, and the details only with `details`.
    Each workload's text is built once and written in one piece (`render.textbox`)."""
    paint = painter(console)
    width = console.width
    write = console.file.write
    n = len(doc.workloads)
    head = [paint(line, "bold") for line in wrap(t("compare.title", lang, scenario=scenario or ""), width)]
    head += wrap(t("compare.summary_one" if n == 1 else "compare.summary", lang, n=n, currency=doc.currency,
                   dpm=doc.days_per_month), width)
    show = details or n <= DETAILS_AT_MOST
    if n > DETAILS_AT_MOST:
        head += _summary_table(doc, lang, width, paint)
        note = "compare.details_below" if show else "compare.details_hint"
        head += wrap(t(note, lang, n=n, limit=DETAILS_AT_MOST), width)
        head.append("")
    write("\n".join(head) + "\n")
    if show:
        for wl in doc.workloads:
            write("\n".join(_workload_lines(wl, lang, width, paint, explain)) + "\n")
    if explain:
        write("\n".join(wrap(t("compare.explain_sources", lang, files=", ".join(doc.catalog_files)), width)) + "\n")
    console.file.flush()


def _summary_table(doc: CompareDoc, lang: str, width: int, paint: Painter) -> list[str]:
    """One row a workload: its GPUs, the verdict, its cost and the break-even."""
    from gpuplan.render.fit import fit_widths

    heads = [t(f"compare.{k}", lang) for k in ("workload", "gpus", "verdict", "mode", "total", "per_month",
                                                 "break_even")]
    numeric = [False, False, False, False, True, True, True]
    rows, styles = [], []
    for wl in doc.workloads:
        rec = wl.recommendation
        chosen = next((o for o in wl.options if rec and o.offer == rec.offer), None)
        be = wl.break_even.hours_per_day
        rows.append([
            wl.id, f"{wl.gpus} × {'/'.join(wl.gpu)}",
            rec.offer if rec else t("compare.no_verdict_short", lang),
            _rec_mode(wl, lang) if rec else "",
            _money(chosen.cost.total) if chosen else "", _money(chosen.cost.per_month) if chosen else "",
            f"{be:.1f}" if be is not None else "–",
        ])
        styles.append(None if rec else "dim")
    widths, _ = fit_widths(heads, rows, numeric, width)
    title = t("compare.summary_title", lang)
    return box_table(title, heads, rows, numeric, widths, row_styles=styles, paint=paint)


def _workload_lines(wl: CompareWorkload, lang: str, width: int, paint: Painter, explain: bool) -> list[str]:
    """One workload's options table and the lines under it."""
    lines: list[str] = []

    def say(*parts: tuple[str, str | None]) -> None:  # (text, style) pieces of one line, wrapped at `width`
        text = "".join(p for p, _ in parts)
        if paint.console is None or all(style is None for _, style in parts):
            lines.extend(wrap(text, width))
            return
        # styles only where a piece starts a line's text and the line is not wrapped (the usual case)
        if cell_len(text) <= width:
            lines.append("".join(paint(p, style) for p, style in parts))
        else:
            lines.extend(wrap(text, width))

    rec = wl.recommendation
    kind = t(f"compare.kind_{wl.kind}", lang)
    title = f"{wl.id}  ({kind}, {wl.gpus} × {'/'.join(wl.gpu)})"
    lines += _options_table(wl, title, lang, width, paint)
    if rec is None:
        say(("  ", None), (f"{t('compare.verdict', lang)}:", "bold red"), (f" {t('compare.no_verdict', lang)}", None))
    else:
        say(("  ", None), (f"{t('compare.verdict', lang)}:", "bold"), (" ", None), (rec.offer, "bold green"),
            (f" ({_rec_mode(wl, lang)})", None))
        for reason in rec.reasons:
            say((f"    • {reason}", None))
        say(("  ", None), (f"{t('compare.dimensions', lang)}:", "bold"))
        for k, d in rec.dimensions:
            say((f"    {t(f'compare.dim_{k}', lang)}: ", None), (t(f"compare.favors_{d.favors}", lang), "bold"),
                (f" — {d.reason}", None))
    be = wl.break_even.hours_per_day
    be_text = t("compare.break_even_value", lang, h=be) if be is not None else t("compare.break_even_none", lang)
    say(("  ", None), (f"{t('compare.break_even', lang)}:", "bold"), (f" {be_text}", None))
    if rec and rec.flip:
        say(("  ", None), (f"{t('compare.flip', lang)}:", "bold"))
        for f in rec.flip:
            say((f"    • {f.message}", None))
    warns = [(None, w) for w in wl.warnings] + [(r.offer, w) for r in wl.options for w in r.warnings]
    if warns:
        say(("  ", None), (f"{t('compare.warnings', lang)}:", "bold yellow"))
        for oid, w in warns:
            prefix = f"{oid}: " if oid else ""
            say(("    ", None), (w.code, "yellow"), (f" {prefix}{w.message}", None))
    if explain:
        say(("  ", None), (f"{t('compare.explain_title', lang)}:", "bold"))
        for r in wl.options:
            for line in r.explain or []:
                say(("    " + line, None))
    lines.append("")
    return lines


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
            lines.append(f"**{t('compare.verdict', lang)}:** {rec.offer} ({_rec_mode(wl, lang)})")
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

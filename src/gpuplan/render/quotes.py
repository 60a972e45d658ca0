"""Tables of `gpuplan quotes list` and `quotes trend`: every value whole at any width (wrapped, never
cut), like every other table (`render.fit`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

LIST_HEADERS = ("date", "provider", "gpu", "mode", "term", "price", "per", "per GPU-hour", "note")
TREND_HEADERS = ("gpu", "mode", "quotes", "from", "to", "drift / year", "90% range", "term exponent")
TREND_NUMERIC = (False, False, True, False, False, True, True, False)


def _price(q: Mapping[str, Any]) -> str:
    if q.get("price_low") is not None and q.get("price_high") is not None:
        return f"{q['price_low']:,.2f}-{q['price_high']:,.2f} {q['currency']}"
    return f"{q['price']:,.2f} {q['currency']}"


def quotes_table(quotes: Sequence[Mapping[str, Any]], width: int) -> Any:
    """A rich Table of quotes (their `to_json()` dicts) that fits `width` columns: one value a column when
    it fits with every word whole, else pairs stacked in a cell (date over term, GPU over mode, price over
    its unit); values wrap, never cut."""
    from rich.table import Table

    from gpuplan.render.fit import add_columns, fits

    values = [{"date": q["date"], "provider": q["provider"], "gpu": q["gpu"], "mode": q["mode"],
               "term": f"{q['term_months']}mo" if q["term_months"] else "", "price": _price(q), "per": q["per"],
               "per GPU-hour": f"{q['price_per_gpu_hour']:.4f}", "note": q["note"]} for q in quotes]
    numeric = {"date", "term", "price", "per GPU-hour"}
    layouts: list[list[tuple[str, ...]]] = [[(h,) for h in LIST_HEADERS],
               [("date", "term"), ("provider",), ("gpu", "mode"), ("price", "per"), ("per GPU-hour",), ("note",)]]
    for layout in layouts:
        headers = ["\n".join(group) for group in layout]
        rows = [["\n".join(v[k] for k in group) for group in layout] for v in values]
        num = [group[0] in numeric for group in layout]
        if fits(headers, rows, num, width):
            break
    table = Table(show_lines=len(layout) < len(LIST_HEADERS))
    add_columns(table, headers, rows, num, width)
    return table


def trend_table(fits: Sequence[Mapping[str, Any]], width: int) -> Any:
    """A rich Table of trend fits (their `to_json()` dicts), fitted to `width` columns."""
    from rich.table import Table

    from gpuplan.render.fit import add_columns

    rows = [[f["gpu"], f["mode"], str(f["quotes"]), f["first"], f["last"], f"{f['drift_per_year']:+.1%}",
             f"{f['drift_low']:+.1%}..{f['drift_high']:+.1%}",
             f"{f['term_discount']:+.3f} " + ("fitted" if f["term_discount_source"] == "fitted" else "default")]
            for f in fits]
    table = Table()
    add_columns(table, TREND_HEADERS, rows, TREND_NUMERIC, width)
    return table

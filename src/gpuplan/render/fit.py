"""Fitting tables to a terminal: numbers are never cut, long ids are shortened in the middle.

Rich shrinks every column of a table wider than the console, numbers included (`31,0…`). These
helpers give each number column a minimum width of its widest cell (so it cannot shrink), let
headers wrap on words, and shorten ids in the middle (`ct-a100-…-spot`) so the full id can still be
found in the legend or the JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ELLIPSIS = "…"


def cell_width(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(line) for line in str(text).split("\n")), default=0)


def middle(text: str, width: int) -> str:
    """`text` shortened to `width` cells by cutting its middle: `very-long-offer-id` -> `very-…er-id`."""
    if cell_width(text) <= width or width < 3:
        return text
    keep = width - 1
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def add_columns(table: Any, headers: Sequence[str], rows: Sequence[Sequence[str]],
                numeric: Sequence[bool], *, wrap_text: bool = True) -> None:
    """Add the columns to a rich `Table`: number columns right-aligned, unbreakable (min width = the
    widest cell), text columns may wrap on words but never below their longest word."""
    for i, (header, num) in enumerate(zip(headers, numeric, strict=True)):
        cells = [str(r[i]) for r in rows]
        widest = max((cell_width(c) for c in cells), default=0)
        longest_word = max((cell_width(w) for c in cells for w in c.split()), default=0)
        header_word = max((cell_width(w) for w in str(header).split()), default=0)
        if num:
            table.add_column(header, justify="right", no_wrap=True, min_width=max(widest, header_word))
        else:
            table.add_column(header, justify="left", no_wrap=not wrap_text, overflow="fold",
                             min_width=max(min(widest, longest_word), header_word))
    for r in rows:
        table.add_row(*[str(c) for c in r])


def table_width(headers: Sequence[str], rows: Sequence[Sequence[str]], padding: int = 3) -> int:
    """The width a one-line-per-row table with these cells takes (rich's box: 3 cells per column + 1)."""
    total = 1
    for i, h in enumerate(headers):
        total += max([cell_width(h)] + [cell_width(str(r[i])) for r in rows]) + padding
    return total

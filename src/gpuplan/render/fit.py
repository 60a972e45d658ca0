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
    """The terminal cells of `text`'s widest line (rich's measure; plain length for ASCII, the usual case)."""
    from gpuplan.render.textbox import cell_len

    text = str(text)
    return max(map(cell_len, text.split("\n"))) if "\n" in text else cell_len(text)


def middle(text: str, width: int) -> str:
    """`text` shortened to `width` cells by cutting its middle: `very-long-offer-id` -> `very-…er-id`."""
    if cell_width(text) <= width or width < 3:
        return text
    keep = width - 1
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def _words(text: str) -> list[str]:
    return [w for line in str(text).split("\n") for w in line.split()]


def fit_widths(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool],
               width: int) -> tuple[list[int], bool]:
    """Column widths (cells, without padding) for a table `width` columns wide, and whether they fit.

    Start from each column's natural width, then shrink, in this order: text columns down to their
    longest word (widest first), words longer than 12 cells folded (a long id on two lines), headers
    down to their cells (a header word then folds), text columns down to 6 cells. A number column
    never gets narrower than its widest number."""
    n = len(headers)
    budget = width - (3 * n + 1)  # rich's box: a border and two padding cells per column, one border more
    cells = [[str(r[i]) for r in rows] for i in range(n)]
    natural = [max([cell_width(h) for h in str(headers[i]).split("\n")] + [cell_width(c) for c in cells[i]])
               for i in range(n)]
    widest = [max((cell_width(c) for c in cells[i]), default=0) for i in range(n)]
    word = [max((cell_width(w) for c in cells[i] for w in _words(c)), default=0) for i in range(n)]
    head_word = [max((cell_width(w) for w in _words(headers[i])), default=1) for i in range(n)]
    floors = [
        [max(widest[i], head_word[i]) if numeric[i] else max(word[i], head_word[i]) for i in range(n)],
        [max(widest[i], head_word[i]) if numeric[i] else max(min(word[i], 12), head_word[i]) for i in range(n)],
        [max(widest[i], 1) if numeric[i] else max(min(word[i], 12), 1) for i in range(n)],
        [max(widest[i], 1) if numeric[i] else min(max(word[i], 1), 6) for i in range(n)],
    ]
    widths = list(natural)
    for floor in floors:
        floor = [min(f, w) for f, w in zip(floor, widths, strict=True)]
        while sum(widths) > budget:
            room = [(widths[i] - floor[i], i) for i in range(n) if widths[i] > floor[i]]
            if not room:
                break
            _, i = max(room)
            widths[i] -= 1
        if sum(widths) <= budget:
            return widths, True
    return widths, False


def add_columns(table: Any, headers: Sequence[str], rows: Sequence[Sequence[str]],
                numeric: Sequence[bool], width: int = 100) -> bool:
    """Add the columns and rows to a rich `Table` at widths that fit `width` (see `fit_widths`):
    numbers right-aligned and never cut, text left-aligned and wrapped on words. Returns whether the
    table fits (when not, the caller picks a narrower layout)."""
    widths, fits = fit_widths(headers, rows, numeric, width)
    for header, num, w in zip(headers, numeric, widths, strict=True):
        table.add_column(header, justify="right" if num else "left", overflow="fold", width=w,
                         no_wrap=False)
    for r in rows:
        table.add_row(*[str(c) for c in r])
    return fits


def table_width(headers: Sequence[str], rows: Sequence[Sequence[str]], padding: int = 3) -> int:
    """The width a one-line-per-row table with these cells takes (rich's box: 3 cells per column + 1)."""
    total = 1
    for i, h in enumerate(headers):
        total += max([cell_width(x) for x in str(h).split("\n")] + [cell_width(str(r[i])) for r in rows]) + padding
    return total


def fits(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool], width: int) -> bool:
    """Whether a layout fits `width` with its numbers whole and its words (headers too) unbroken."""
    n = len(headers)
    budget = width - (3 * n + 1)
    need = 0
    for i in range(n):
        cells = [str(r[i]) for r in rows]
        head = max([cell_width(w) for w in _words(headers[i])] + [1])
        if numeric[i]:
            need += max([cell_width(c) for c in cells] + [head])
        else:
            need += max([cell_width(w) for c in cells for w in _words(c)] + [head])
    return need <= budget

"""Box tables and wrapped lines as plain text, built in one pass: what rich prints, at the cost of
the text.

rich renders a table by measuring, wrapping and padding every cell through a stack of renderables,
and every `Console.print` of a line parses markup and wraps again: about 8 ms a workload in a
compare table, 39 s at 5,000 workloads (issue 23). Here a table whose column widths are already
fixed (`render.fit.fit_widths`) is written directly: each cell wrapped on words as rich wraps it
(`wrap`), padded, joined with the box of rich's default `HEAVY_HEAD`; a line of text is wrapped at
the console's width. The text is rich's, character for character (tests/unit/test_textbox.py holds
it to rich on every example's compare tables); styles (bold, colours) are written as rich writes
them when the console has colour, else not at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

# rich.box.HEAVY_HEAD: top, head row, head separator, row, row separator, bottom
_TOP, _HEAD, _HEAD_SEP = "┏━┳┓", "┃ ┃┃", "┡━╇┩"
_ROW, _ROW_SEP, _BOTTOM = "│ ││", "├─┼┤", "└─┴┘"


# one cell each, as rich measures them: the dashes, bullets and marks the tables use
_NARROW = str.maketrans(dict.fromkeys("–—•★✗×…·→←≤≥±", "x"))


def cell_len(text: str) -> int:
    """Terminal cells `text` takes: rich's measure, without asking rich for plain ASCII and the few
    one-cell marks the tables use."""
    if text.isascii() or text.translate(_NARROW).isascii():
        return len(text)
    from rich.cells import cell_len as rich_cell_len

    return rich_cell_len(text)


def _chop(text: str, width: int) -> list[str]:
    from rich.cells import chop_cells

    return list(chop_cells(text, width))


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells, broken where rich breaks them (`rich._wrap.divide_line`
    with fold): before a word that does not fit, inside a word wider than a line; each newline of
    `text` starts a line. Trailing spaces are kept within `width`, as rich keeps them."""
    out: list[str] = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            out.append(line)
            continue
        breaks: list[int] = []
        offset = 0
        for start, word in _words(line):
            length = cell_len(word.rstrip())
            if width - offset >= length:
                offset += cell_len(word)
            elif length > width:  # a word wider than a line: folded
                pieces = _chop(word, width)
                for i, piece in enumerate(pieces):
                    if start:
                        breaks.append(start)
                    if i == len(pieces) - 1:
                        offset = cell_len(piece)
                    else:
                        start += len(piece)
            elif offset and start:
                breaks.append(start)
                offset = cell_len(word)
        for a, b in zip([0, *breaks], [*breaks, len(line)], strict=True):
            piece = line[a:b]
            if len(piece) > width:  # rich's rstrip_end: trailing spaces past the width go (counted in characters)
                spaces = len(piece) - len(piece.rstrip())
                piece = piece[: len(piece) - min(spaces, len(piece) - width)]
            if cell_len(piece) > width:  # and truncate: to the width in cells
                from rich.cells import set_cell_size

                piece = set_cell_size(piece, width)
            out.append(piece)
    return out


_WORD = re.compile(r"\s*\S+\s*")


def _words(line: str) -> list[tuple[int, str]]:
    """rich's words: leading spaces, a word, its trailing spaces; with the offset where each starts."""
    return [(m.start(), m.group(0)) for m in _WORD.finditer(line)]


def _fit(line: str, width: int, right: bool) -> str:
    n = cell_len(line)
    if right:
        line = line.rstrip()
        return " " * (width - cell_len(line)) + line
    return line + " " * (width - n) if n < width else line


@dataclass(frozen=True)
class Painter:
    """Styles as the console would write them (ANSI sequences), or none for a plain console."""

    console: Any = None

    def __call__(self, text: str, style: str | None) -> str:
        if not style or not text or self.console is None:
            return text
        return _style(style, self.console).render(text, color_system=_color_system(self.console))


def painter(console: Console) -> Painter:
    """Styles for `console`: none when it writes no colour (a file, a pipe, TERM=dumb)."""
    return Painter(console if console.color_system is not None else None)


def _color_system(console: Any) -> Any:
    from rich.color import ColorSystem

    return {"standard": ColorSystem.STANDARD, "256": ColorSystem.EIGHT_BIT, "truecolor": ColorSystem.TRUECOLOR,
            "windows": ColorSystem.WINDOWS}.get(console.color_system)


_STYLES: dict[tuple[str, bool], Any] = {}


def _style(name: str, console: Any) -> Any:
    key = (name, bool(console.no_color))
    got = _STYLES.get(key)
    if got is None:
        from rich.style import Style

        got = Style.parse(name)
        if console.no_color:
            got = got.without_color
        _STYLES[key] = got
    return got


def box_table(title: str | None, headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool],
              widths: Sequence[int], *, show_lines: bool = False, row_styles: Sequence[str | None] = (),
              paint: Painter | None = None, title_style: str = "bold cyan", header_style: str = "bold") -> list[str]:
    """The lines of a table with these column `widths` (cells, without padding): headers and cells
    wrapped on words, numbers right-aligned, text left-aligned, one space of padding each side, the
    title above it on the left (wrapped and padded to the table's width), as rich's `Table` with
    `title_justify="left"` and fixed column widths prints it."""
    paint = paint or Painter()
    total = sum(widths) + 3 * len(widths) + 1
    out: list[str] = []
    if title:
        out += [paint(_fit(line, total, False), title_style) for line in wrap(title, total)]
    out.append(_rule(_TOP, widths))
    out += _row(headers, numeric, widths, _HEAD, paint, header_style, bottom=True)
    out.append(_rule(_HEAD_SEP, widths))
    for i, row in enumerate(rows):
        if i and show_lines:
            out.append(_rule(_ROW_SEP, widths))
        out += _row(row, numeric, widths, _ROW, paint, row_styles[i] if i < len(row_styles) else None)
    out.append(_rule(_BOTTOM, widths))
    return out


def _rule(chars: str, widths: Sequence[int]) -> str:
    left, fill, mid, right = chars[0], chars[1], chars[2], chars[3]
    return left + mid.join(fill * (w + 2) for w in widths) + right


def _row(cells: Sequence[str], numeric: Sequence[bool], widths: Sequence[int], chars: str, paint: Painter,
         style: str | None, bottom: bool = False) -> list[str]:
    """A row's lines; cells of fewer lines than the row are filled below (at the top: `bottom`, as rich
    aligns headers)."""
    edge, mid, end = chars[0], chars[2], chars[3]
    columns = [[_fit(line, w, right) for line in wrap(str(cell), w)]
               for cell, right, w in zip(cells, numeric, widths, strict=True)]
    height = max(len(c) for c in columns)
    if bottom:
        columns = [[" " * w] * (height - len(c)) + c for c, w in zip(columns, widths, strict=True)]
    lines = []
    for k in range(height):
        parts = [paint(" " + (c[k] if k < len(c) else " " * w) + " ", style)
                 for c, w in zip(columns, widths, strict=True)]
        lines.append(edge + mid.join(parts) + end)
    return lines

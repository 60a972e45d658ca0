"""`render.textbox` against rich itself (the oracle: what the tables printed before): the same
wrapped lines and the same box tables, character for character."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

from gpuplan.render.fit import fit_widths
from gpuplan.render.textbox import Painter, box_table, cell_len, painter, wrap

ROOT = Path(__file__).resolve().parents[2]


def rich_print(text: str, width: int) -> list[str]:
    buf = io.StringIO()
    Console(file=buf, width=width, highlight=False, soft_wrap=False, color_system=None, emoji=False).print(
        text, markup=False)
    return buf.getvalue().split("\n")[:-1]


_word = st.text(st.sampled_from("abcdefXYZ0123456789,.-–×★中文"), min_size=1, max_size=30)
_text = st.lists(st.tuples(_word, st.sampled_from([" ", "  ", "\n", " \n"])), min_size=1, max_size=25).map(
    lambda parts: "".join(w + s for w, s in parts).rstrip("\n"))


@settings(max_examples=300, deadline=None)
@given(_text, st.integers(4, 90))
def test_lines_wrap_where_rich_wraps_them(text: str, width: int) -> None:
    assert wrap(text, width) == rich_print(text, width)


@pytest.mark.parametrize("text", ["–—•★✗×…·→←≤≥±", "中文 abc", "e\u0301", "plain"])
def test_cells_are_richs(text: str) -> None:
    from rich.cells import cell_len as rich_cell_len

    assert cell_len(text) == rich_cell_len(text)


def rich_table(title: str, heads: list[str], rows: list[list[str]], numeric: list[bool], widths: list[int],
               show_lines: bool) -> list[str]:
    table = Table(title=title, title_justify="left", title_style="bold cyan", show_lines=show_lines)
    for head, num, w in zip(heads, numeric, widths, strict=True):
        table.add_column(head, justify="right" if num else "left", overflow="fold", width=w, no_wrap=False)
    for r in rows:
        table.add_row(*r)
    buf = io.StringIO()
    Console(file=buf, width=200, highlight=False, soft_wrap=False, color_system=None).print(table)
    return buf.getvalue().split("\n")[:-1]


_cell = st.lists(_word, min_size=0, max_size=4).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.lists(_cell, min_size=n, max_size=n),
    st.lists(st.lists(_cell, min_size=n, max_size=n), min_size=0, max_size=4),
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.integers(30, 120), st.booleans(), _word)))
def test_tables_are_richs(case: tuple[list[str], list[list[str]], list[bool], int, bool, str]) -> None:
    heads, rows, numeric, width, lines, title = case
    widths, ok = fit_widths(heads, rows, numeric, width)
    widths = [max(w, 1) for w in widths]
    assert box_table(title, heads, rows, numeric, widths, show_lines=lines) == rich_table(
        title, heads, rows, numeric, widths, lines)


def test_a_plain_console_gets_no_styles_and_a_terminal_gets_richs() -> None:
    assert painter(Console(file=io.StringIO(), color_system=None)).console is None
    assert Painter()("x", "bold") == "x"
    term = Console(file=io.StringIO(), force_terminal=True, color_system="standard")
    assert painter(term)("x", "bold green") == "\x1b[1;32mx\x1b[0m"

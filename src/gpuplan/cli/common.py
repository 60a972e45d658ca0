"""Options and output plumbing shared by the commands (no maths here)."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


class Lang(str, Enum):
    en = "en"
    zh = "zh"


OutputOpt = Annotated[
    OutputFormat, typer.Option("--output", "-o", help="table (default), json or markdown.")
]
LangOpt = Annotated[Lang, typer.Option("--lang", help="Language of the output: en or zh.")]
ExplainOpt = Annotated[bool, typer.Option("--explain", help="Show the formulas and inputs behind each number.")]
HtmlOpt = Annotated[
    Path | None, typer.Option("--html", help="Also write a self-contained HTML report to this file.")
]
MaxWaitOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--max-wait",
        help="Waiting budget the recommended R meets: p95=2h (also mean=, p50=, max=; several allowed).",
    ),
]
CatalogOpt = Annotated[
    Path | None,
    typer.Option(
        "--catalog",
        envvar="GPUPLAN_CATALOG",
        help="Extra catalog file (GPUs and offers) added to the bundled one.",
    ),
]


def write_json(data: Any) -> None:
    import json

    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


PIPED_WIDTH = 100
"""Columns when stdout is not a terminal and COLUMNS is not set (a file or a pipe has no width)."""


def console() -> Console:
    """stdout's console: the terminal's width, else COLUMNS, else 100 columns when piped."""
    import os

    from rich.console import Console

    width = None
    if not os.environ.get("COLUMNS", "").strip().isdigit() and not sys.stdout.isatty():
        width = PIPED_WIDTH
    return Console(highlight=False, soft_wrap=False, width=width)

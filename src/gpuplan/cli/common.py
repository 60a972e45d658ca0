"""Options and output plumbing shared by the commands (no maths here)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuplan.cli.term import PIPED_WIDTH as PIPED_WIDTH  # where the commands found them
from gpuplan.cli.term import console as console


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
    """`data` as indented JSON on stdout (the one writer: `render.json_out`)."""
    from gpuplan.render.json_out import write_json as write

    write(data)

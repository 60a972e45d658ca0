"""`gpuplan compare` and `gpuplan init`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, ExplainOpt, HtmlOpt, LangOpt, OutputFormat, OutputOpt, console, write_json


@app.command()
def compare(
    scenario: Annotated[Path, typer.Argument(help="Scenario YAML (see `gpuplan init`).")],
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = "en",  # type: ignore[assignment]
    explain: ExplainOpt = False,
    html: HtmlOpt = None,
    catalog: CatalogOpt = None,
    measured: Annotated[
        Path | None, typer.Option("--measured", help="`gpuplan probe -o json` output: use its measured overheads.")
    ] = None,
    measured_offer: Annotated[
        str | None, typer.Option("--measured-offer", help="The offer the measured overheads apply to.")
    ] = None,
) -> None:
    """Each workload on each offer: cost, time, the four dimensions, the verdict and what would flip it."""
    from gpuplan import api
    from gpuplan.render.compare import compare_json, compare_markdown, compare_table

    lang_code = getattr(lang, "value", lang)
    result = api.compare(scenario, catalog=catalog, measured=measured, measured_offer=measured_offer)
    if html is not None:
        from gpuplan.render.html import write_report

        write_report("compare", result, html, lang_code)
    if output == OutputFormat.json:
        write_json(compare_json(result, lang_code))
    elif output == OutputFormat.markdown:
        typer.echo(compare_markdown(result, lang_code))
    else:
        compare_table(result, lang_code, console(), explain=explain)


STARTER = """\
# gpuplan scenario, version 1. Every amount is in `currency`.
# Durations: 90m, 12h, 30d, 2w. Prices: amount (or [low, high]) per gpu-hour|gpu-day|gpu-month|node-...
version: 1
currency: CNY
team:
  engineer_hour_cost: 150      # money per hour of ops engineer time (leave out: ops counted as 0, with a warning)
  researcher_hour_cost: 0      # money per hour of waiting for results (0 = ignore time)
offers:
  - id: bm-910b
    gpu: ascend-910b           # `gpuplan catalog gpus` lists GPU ids
    mode: bare-metal
    price: {amount: [180, 260], per: gpu-day}
    min_term: 30d              # shortest rental paid for
    # setup, ops and overhead default by mode (see `gpuplan catalog offers` and the README)
  - id: ct-910b
    gpu: ascend-910b
    mode: container
    price: {amount: [8, 12], per: gpu-hour}
  # - use: aws-p5-h100         # or start from a catalog offer and override fields
workloads:
  - id: experiments
    kind: experiment           # training | fine-tuning | experiment | inference
    gpu: ascend-910b
    gpus: 4
    hours_per_day: 6
    days_per_week: 7
    duration: 30d
    utilization: 0.8           # share of running time the GPUs do work (`gpuplan audit` measures it)
    # communication: 0.05      # non-overlapped communication share of a step; default by kind
    # requires: []             # compliance, custom-driver, multi-node, isolation, elastic
"""


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Where to write the starter scenario.")] = Path("scenario.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented starter scenario."""
    from gpuplan.errors import UsageError

    if path.exists() and not force:
        raise UsageError(f"{path} already exists", hint="use --force to overwrite it, or give another path.")
    path.write_text(STARTER, encoding="utf-8")
    typer.echo(f"wrote {path}; next: gpuplan compare {path}")

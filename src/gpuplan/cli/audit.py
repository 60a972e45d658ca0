"""`gpuplan audit`: real GPU utilisation, idle money and data-starved jobs from telemetry."""

from pathlib import Path
from typing import Annotated

import typer

from gpuplan.api import DemandMode
from gpuplan.cli.app import app
from gpuplan.cli.common import (
    CatalogOpt,
    ExplainOpt,
    HtmlOpt,
    Lang,
    LangOpt,
    OutputFormat,
    OutputOpt,
    console,
    write_json,
)


@app.command()
def audit(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="nvidia-smi CSV logs and/or Prometheus query_range JSON files.", show_default=False
        ),
    ] = None,
    prometheus: Annotated[
        str | None, typer.Option("--prometheus", help="A live Prometheus URL with dcgm-exporter metrics.")
    ] = None,
    since: Annotated[
        str, typer.Option("--since", help="Start: 7d before --until, an ISO time or unix s.")
    ] = "7d",
    until: Annotated[
        str, typer.Option("--until", help="End: now, a duration before now, ISO time or unix s.")
    ] = "now",
    step: Annotated[str, typer.Option("--step", help="Server-side averaging step, e.g. 60s or 5m.")] = "60s",
    selector: Annotated[
        str, typer.Option("--selector", help="Label matchers, e.g. '{Hostname=~\"n.*\"}'.")
    ] = "",
    timeout: Annotated[str, typer.Option("--timeout", help="Per-request timeout for --prometheus.")] = "30s",
    price: Annotated[
        str | None, typer.Option("--price", help="Price of a GPU, e.g. 8/gpu-hour or 2000/node-month.")
    ] = None,
    offer: Annotated[str | None, typer.Option("--offer", help="Take the price from this offer id.")] = None,
    scenario: Annotated[
        Path | None, typer.Option("--scenario", help="Scenario file that defines --offer.")
    ] = None,
    catalog: CatalogOpt = None,
    currency: Annotated[str, typer.Option("--currency", help="Currency of --price.")] = "USD",
    gpus_per_node: Annotated[
        int | None,
        typer.Option("--gpus-per-node", help="For node prices; default: most GPUs seen on a node."),
    ] = None,
    demand_out: Annotated[
        Path | None, typer.Option("--demand-out", help="Write the hourly demand curve (time,gpu,gpus) here.")
    ] = None,
    demand_mode: Annotated[
        DemandMode, typer.Option("--demand-mode", help="util: GPUs x utilisation; busy: GPUs at >= 5%.")
    ] = "util",
    gpu_type: Annotated[
        str | None,
        typer.Option("--gpu-type", help="GPU type for the demand curve when the data has no model."),
    ] = None,
    explain: ExplainOpt = False,
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = Lang.en,
    html: HtmlOpt = None,
) -> None:
    """What your GPUs really did: utilisation, idle money, data-starved jobs, and the demand curve."""
    from gpuplan import api

    report = api.audit(
        list(files or []),
        prometheus=prometheus,
        since=since,
        until=until,
        step=step,
        selector=selector,
        timeout=timeout,
        price=price,
        offer=offer,
        scenario=scenario,
        catalog=catalog,
        currency=currency,
        gpus_per_node=gpus_per_node,
        demand_mode=demand_mode if demand_out is not None else None,
        gpu_type=gpu_type,
    )
    demand_info = None
    if demand_out is not None and report.demand is not None:
        demand_out.write_text(report.demand.csv, encoding="utf-8")
        demand_info = report.demand_info(demand_out)

    lg = lang.value
    if html is not None or output == OutputFormat.json:
        data = report.to_json(demand_out)  # the gpuplan.audit/1 contract, as JSON
        if html is not None:
            from gpuplan.render.html import write_report

            write_report("audit", data, html, lg)
        if output == OutputFormat.json:
            write_json(data)
            return
    # only what the table or markdown runs: the renderer and the message catalog
    from gpuplan.render.audit import render_markdown, render_table

    doc = report.document(demand_out)  # the contract: what every renderer reads
    if output == OutputFormat.markdown:
        import sys

        sys.stdout.write(render_markdown(doc, lg, explain))
    else:
        render_table(doc, lg, explain, console())
    if demand_info is not None:
        from gpuplan.i18n import t

        print(
            t(
                "audit.demand_written",
                lg,
                mode=demand_info["mode"],
                path=demand_info["file"],
                rows=demand_info["rows"],
            )
        )

"""`gpuplan plan`."""

from pathlib import Path
from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, ExplainOpt, HtmlOpt, LangOpt, OutputFormat, OutputOpt, console, write_json
from gpuplan.constants import DEFAULT_QUEUEING, Queueing


@app.command()
def plan(
    scenario: Annotated[Path, typer.Argument(help="Scenario YAML: offers and workloads.")],
    demand: Annotated[
        Path | None, typer.Option("--demand", help="Hourly demand CSV time,gpu,gpus (from `audit`).")
    ] = None,
    trace: Annotated[Path | None, typer.Option("--trace", help="A job trace (formats as for `simulate`).")] = None,
    trace_format: Annotated[str, typer.Option("--trace-format", help="Trace format, default: by header.")] = "auto",
    queueing: Annotated[Queueing, typer.Option("--queueing", help="Queueing the exported config uses.")] = (
        DEFAULT_QUEUEING),
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = "en",  # type: ignore[assignment]
    explain: ExplainOpt = False,
    html: HtmlOpt = None,
    catalog: CatalogOpt = None,
    max_wait: Annotated[list[str] | None, typer.Option(
        "--max-wait", help="A waiting budget (p95=2h; also mean=, p50=, max=): work waits up to the largest "
                           "bound for leased cards before it bursts, and the cheapest pool size meeting the "
                           "budget is named (a trace's jobs are replayed; hourly demand queues as a fluid).")] = None,
) -> None:
    """Size the leased bare-metal pool for the whole portfolio; what spills to containers; cost per month."""
    from gpuplan import api
    from gpuplan.render.plan import plan_json, plan_markdown, plan_table

    lang_code: api.Lang = "zh" if getattr(lang, "value", lang) == "zh" else "en"
    doc = api.plan_document(scenario, lang=lang_code, catalog=catalog, demand=demand, trace=trace,
                            trace_format=trace_format, queueing=queueing, max_wait=max_wait)
    if html is not None:
        from gpuplan.render.html import write_report

        write_report("plan", plan_json(doc), html, lang_code)
    if output == OutputFormat.json:
        write_json(plan_json(doc))
    elif output == OutputFormat.markdown:
        typer.echo(plan_markdown(doc, lang_code))
    else:
        plan_table(doc, lang_code, console(), explain=explain)

"""`gpuplan simulate`: replay a job trace through a reserved pool that spills to containers."""

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import (
    CatalogOpt,
    HtmlOpt,
    Lang,
    LangOpt,
    MaxWaitOpt,
    OutputFormat,
    OutputOpt,
    console,
    write_json,
)
from gpuplan.cli.term import simulate_progress
from gpuplan.constants import DEFAULT_QUEUEING, Packing, Queueing


class SpotFallback(StrEnum):
    on_demand = "on-demand"
    requeue = "requeue"


class TraceFormat(StrEnum):
    auto = "auto"
    generic = "generic"
    alibaba_2023 = "alibaba-2023"
    alibaba_pai_2020 = "alibaba-pai-2020"
    philly = "philly"
    helios = "helios"
    tiresias = "tiresias"


@app.command()
def simulate(
    trace: Annotated[
        Path, typer.Argument(help="Job trace: generic CSV, Alibaba openb/PAI, Philly, Helios, Tiresias.")
    ],
    reserved: Annotated[
        str,
        typer.Option(
            "--reserved",
            "-r",
            # the empty markup tag keeps rich from reading ":B:" as an emoji code (it printed a 🅱)
            help="Reserved GPUs R: 16, a list 0,8,16 or a range A:[b][/b]B:STEP (at most 1,000 sizes).",
        ),
    ],
    scenario: Annotated[
        Path | None,
        typer.Option("--scenario", "-s", help="Scenario whose offers price the pool and the bursts."),
    ] = None,
    wait: Annotated[
        str,
        typer.Option("--wait", "-w", help="How long a queued job waits before bursting: 0, 30m, 2h, inf."),
    ] = "0",
    queueing: Annotated[
        Queueing,
        typer.Option("--queueing", help="strict-fifo or best-effort-fifo (Kueue's strategies)."),
    ] = DEFAULT_QUEUEING,
    packing: Annotated[
        Packing,
        typer.Option("--packing", help="gpu (pooled GPUs) or node (first-fit onto whole nodes)."),
    ] = "gpu",
    gpus_per_node: Annotated[
        int | None,
        typer.Option(
            "--gpus-per-node", help="GPUs per node for --packing node (default: the offer's, else 8)."
        ),
    ] = None,
    trace_format: Annotated[
        TraceFormat, typer.Option("--trace-format", help="Trace format; auto reads the header.")
    ] = TraceFormat.auto,
    gpu: Annotated[
        str | None,
        typer.Option("--gpu", help="GPU whose offers price the pool (when the scenario has several)."),
    ] = None,
    max_wait: MaxWaitOpt = None,
    spot: Annotated[
        int,
        typer.Option("--spot", help="Spot GPUs S between the reserved pool and on demand (the scenario's spot "
                     "offer; 0: none)."),
    ] = 0,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the spot reclaims (the same seed, the same output).")
    ] = 0,
    checkpoint: Annotated[
        str | None,
        typer.Option("--checkpoint", help="Checkpoint interval of spot jobs: 30m, 1h or none (default: the "
                     "scenario's workloads')."),
    ] = None,
    spot_fallback: Annotated[
        SpotFallback,
        typer.Option("--spot-fallback", help="A reclaimed job: on-demand (runs there) or requeue (spot again)."),
    ] = SpotFallback.on_demand,
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = Lang.en,
    html: HtmlOpt = None,
    catalog: CatalogOpt = None,
) -> None:
    """Replay a job trace through R reserved GPUs that spill to an elastic container pool."""
    import sys

    from gpuplan import api

    result = api.simulate(
        trace,
        reserved,
        scenario=scenario,
        wait=wait,
        queueing=queueing,
        packing=packing,
        gpus_per_node=gpus_per_node,
        trace_format=trace_format.value,
        gpu=gpu,
        catalog=catalog,
        progress=simulate_progress(lang.value),
        max_wait=max_wait,
        spot=spot,
        seed=seed,
        checkpoint=checkpoint,
        spot_fallback=spot_fallback.value,
    )
    if html is not None:
        from gpuplan.render.html import write_report

        write_report("simulate", result.to_json(), html, lang.value)
    if output is OutputFormat.json:
        write_json(result.to_json())
        return
    from gpuplan.render.simulate import render_markdown, render_table

    if output is OutputFormat.markdown:
        sys.stdout.write(render_markdown(result.meta(), result.to_json(), lang.value))
    else:
        out = console()
        for item in render_table(result.meta(), result.to_json(), lang.value, width=out.width):
            out.print(item)

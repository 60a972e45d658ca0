"""`gpuplan simulate`: replay a job trace through a reserved pool that spills to containers."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, HtmlOpt, Lang, LangOpt, OutputFormat, OutputOpt, console, write_json


class Queueing(StrEnum):
    strict = "strict-fifo"
    best_effort = "best-effort-fifo"


class Packing(StrEnum):
    gpu = "gpu"
    node = "node"


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
        str, typer.Option("--reserved", "-r", help="Reserved GPUs R: 16, a list 0,8,16 or a range A:B:STEP.")
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
        Queueing, typer.Option("--queueing", help="strict-fifo or best-effort-fifo (Kueue's strategies).")
    ] = Queueing.strict,
    packing: Annotated[
        Packing, typer.Option("--packing", help="gpu (pooled GPUs) or node (first-fit onto whole nodes).")
    ] = Packing.gpu,
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
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = Lang.en,
    html: HtmlOpt = None,
    catalog: CatalogOpt = None,
) -> None:
    """Replay a job trace through R reserved GPUs that spill to an elastic container pool."""
    import sys

    from gpuplan.errors import UsageError
    from gpuplan.sim.replay import Jobs, parse_reserved
    from gpuplan.sim.replay import simulate as run_simulation
    from gpuplan.sim.traces import read_trace
    from gpuplan.units import UnitError, format_duration, parse_duration

    try:
        wait_hours = parse_duration(wait, allow_inf=True)
    except UnitError as exc:
        raise UsageError(
            str(exc), field="--wait", hint="for example --wait 0, --wait 30m, --wait 2h or --wait inf."
        ) from None
    levels = parse_reserved(reserved)
    prices = _prices(scenario, gpu, catalog) if scenario is not None else None
    gpn = gpus_per_node or (prices.gpus_per_node if prices is not None else 8)

    tr = read_trace(trace, trace_format.value)
    jobs = Jobs.from_trace(tr)

    progress_cb, stop = _progress(len(levels), len(jobs), lang.value, levels)
    try:
        results = run_simulation(
            jobs,
            levels,
            wait_hours,
            queueing=queueing.value,
            packing=packing.value,
            gpus_per_node=gpn,
            prices=prices,
            progress=progress_cb,
        )
    finally:
        stop()

    if html is not None:
        from gpuplan.render.html import write_report

        write_report("simulate", results[0] if len(results) == 1 else results, html, lang.value)
    if output is OutputFormat.json:
        write_json(results[0] if len(results) == 1 else results)
        return
    meta: dict[str, Any] = {
        "trace": str(trace),
        "format": tr.format,
        "records": tr.records,
        "gpu_hours": tr.gpu_hours,
        "wait": format_duration(wait_hours) if wait_hours else "0",
        "queueing": queueing.value,
        "packing": packing.value if packing is Packing.gpu else f"node ({gpn} GPUs)",
        "prices": None if prices is None else vars(prices),
    }
    from gpuplan.sim.render import render_markdown, render_table

    if output is OutputFormat.markdown:
        sys.stdout.write(render_markdown(meta, results, lang.value))
    else:
        out = console()
        for item in render_table(meta, results, lang.value):
            out.print(item)


def _prices(scenario: Path, gpu: str | None, catalog: Path | None):  # type: ignore[no-untyped-def]
    import math

    from gpuplan.catalog import load_catalog
    from gpuplan.errors import ScenarioError
    from gpuplan.pricing import pool_prices
    from gpuplan.scenario import load_scenario
    from gpuplan.sim.cost import from_pool_prices

    cat = load_catalog(catalog)
    scen = load_scenario(scenario, cat)
    pp = pool_prices(scen, gpu, catalog=cat)
    for name, mode in (("lease_per_gpu_hour", "bare-metal"), ("container_per_gpu_hour", "container")):
        value = getattr(pp, name)
        if value is None or math.isnan(value):
            raise ScenarioError(
                f"no {mode} offer for GPU {pp.gpu!r}",
                file=scenario,
                field="offers",
                hint="a hybrid pool needs a bare-metal offer (the lease) and a container offer (the bursts).",
            )
    return from_pool_prices(pp, days_per_month=scen.days_per_month)


def _progress(steps: int, jobs: int, lang: str, levels: list[int]):  # type: ignore[no-untyped-def]
    """A rich progress bar on stderr for long runs; nothing when stderr is not a terminal."""
    import sys

    if not sys.stderr.isatty() or steps * jobs < 200_000:
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from gpuplan.i18n import t

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(t("simulate.progress", lang, reserved=levels[0]), total=steps)
    bar.start()

    def update(done: int, total: int) -> None:
        label = levels[min(done, total - 1)]
        bar.update(task, completed=done, description=t("simulate.progress", lang, reserved=label))

    return update, bar.stop

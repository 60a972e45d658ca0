"""`gpuplan audit`: real GPU utilisation, idle money and data-starved jobs from telemetry."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

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


class DemandMode(StrEnum):
    util = "util"
    busy = "busy"


def _parse_time(text: str, now: float, field: str) -> float:
    """`7d` (that long before now), an ISO 8601 time (UTC if no zone), or unix seconds."""
    from datetime import UTC, datetime

    from gpuplan.errors import UsageError
    from gpuplan.units import UnitError, parse_duration

    value = text.strip()
    if value.lower() == "now":
        return now
    try:
        return now - parse_duration(value) * 3600.0
    except UnitError:
        pass
    try:
        return float(value)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"expected a duration before now (7d), an ISO time or unix seconds, got {text!r}",
            field=field,
            hint="for example --since 7d --until now, or --since 2024-03-01T00:00:00Z",
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


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
    ] = DemandMode.util,
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
    import time

    from gpuplan.errors import UsageError
    from gpuplan.telemetry import Collector, Price, analyze, demand_csv, demand_curve, read_into
    from gpuplan.telemetry.report import render_markdown, render_table, to_json
    from gpuplan.units import UnitError, parse_duration, parse_rate_price, per_gpu_hour

    if not files and not prometheus:
        raise UsageError(
            "nothing to audit: give telemetry files or --prometheus URL",
            hint="gpuplan audit gpu-log.csv --price 8/gpu-hour, "
            "or --prometheus http://prometheus:9090 --since 7d",
        )
    if price and offer:
        raise UsageError("give --price or --offer, not both", field="--price")
    col = Collector()
    if files:
        read_into(list(files), col)
    if prometheus:
        from gpuplan.telemetry.promlive import LiveQuery, fetch

        try:
            step_s = parse_duration(step) * 3600.0
            timeout_s = parse_duration(timeout) * 3600.0
        except UnitError as exc:
            raise UsageError(str(exc), field="--step/--timeout", hint="for example --step 60s") from None
        now = time.time()
        end = _parse_time(until, now, "--until")
        start = _parse_time(since, end, "--since")
        fetch(LiveQuery(prometheus, start, end, step_s=step_s, selector=selector, timeout_s=timeout_s), col)
    samples = col.finish()

    the_price: Price | None = None
    if price:
        try:
            amount, per = parse_rate_price(price)
        except UnitError as exc:
            raise UsageError(str(exc), field="--price", hint="for example --price 8/gpu-hour") from None
        per_node = gpus_per_node
        if per_node is None:
            counts: dict[str, int] = {}
            for node, _ in samples.registry.keys:
                counts[node] = counts.get(node, 0) + 1
            per_node = max(counts.values(), default=1)
        value = per_gpu_hour(amount, per, gpus_per_node=per_node, days_per_month=30.0)
        the_price = Price(value, currency, source=f"--price {price}")
    elif offer:
        from gpuplan.pricing import offer_price  # written by the lead (issue 2)

        op = offer_price(offer, scenario_path=scenario, catalog_path=catalog)
        the_price = Price(op.per_gpu_hour, op.currency, low=op.low, high=op.high, source=f"offer {offer}")

    result = analyze(samples, the_price)
    demand_info = None
    if demand_out is not None:
        cat = None
        try:
            from gpuplan.catalog import load_catalog

            cat = load_catalog(catalog)
        except Exception:  # the demand curve still works with raw model names
            cat = None

        def gpu_type_of(model: str | None) -> str:
            if model and cat is not None:
                spec = cat.match_gpu(model)
                if spec is not None:
                    return spec.id
            return model or gpu_type or "gpu"

        rows = demand_curve(samples, demand_mode.value, gpu_type_of, default_gpu=gpu_type or "gpu")
        demand_out.write_text(demand_csv(rows), encoding="utf-8")
        demand_info = {"file": str(demand_out), "mode": demand_mode.value, "rows": len(rows)}

    lg = lang.value
    if html is not None:
        from gpuplan.render.html import write_report

        write_report("audit", to_json(result, demand_info), html, lg)
    if output == OutputFormat.json:
        write_json(to_json(result, demand_info))
        return
    if output == OutputFormat.markdown:
        import sys

        sys.stdout.write(render_markdown(result, lg, explain))
    else:
        render_table(result, lg, explain, console())
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

"""`gpuplan catalog gpus|offers`."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, OutputFormat, OutputOpt, console, write_json


class What(str, Enum):
    gpus = "gpus"
    offers = "offers"
    defaults = "defaults"


@app.command("catalog")
def catalog_cmd(
    what: Annotated[What, typer.Argument(help="gpus, offers or defaults.")],
    gpu: Annotated[str | None, typer.Option("--gpu", help="Only offers of this GPU id.")] = None,
    output: OutputOpt = OutputFormat.table,
    catalog: CatalogOpt = None,
) -> None:
    """List the bundled catalog (and your --catalog additions), each entry with its source and date."""
    from gpuplan.errors import UsageError
    from gpuplan.inputs.catalog import load_catalog

    cat = load_catalog(catalog)
    if gpu is not None and gpu not in cat.gpus:
        raise UsageError(f"unknown GPU `{gpu}`", field="--gpu", hint=f"known: {', '.join(sorted(cat.gpus))}")
    if what == What.defaults:
        write_json(cat.defaults) if output == OutputFormat.json else console().print_json(data=cat.defaults)
        return
    if what == What.gpus:
        rows = [g.model_dump() for g in cat.gpus.values() if gpu is None or g.id == gpu]
        cols = ["id", "name", "memory_gb", "hbm_tbs", "bf16_tflops", "gpu_gpu_gbs", "interconnect", "source", "as_of"]
    else:
        rows = [{k: v for k, v in o.items() if not k.startswith("_")} for o in cat.offers.values()
                if gpu is None or o.get("gpu") == gpu]
        for r in rows:
            p = r.get("price", {})
            r["price"] = f"{p.get('amount')} {r.get('currency', '')}/{p.get('per')}"
        cols = ["id", "provider", "gpu", "mode", "price", "min_term", "source", "as_of"]
    if output == OutputFormat.json:
        write_json(rows)
        return
    if output == OutputFormat.markdown:
        typer.echo("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
        for r in rows:
            typer.echo("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
        return
    from rich.table import Table

    table = Table(show_lines=False)
    for c in cols:
        table.add_column(c, overflow="fold")
    for r in rows:
        table.add_row(*(str(r.get(c, "")) for c in cols))
    console().print(table)

"""`gpuplan probe`: what this node is, its GPUs, links and network; `--bench` measures them."""

from pathlib import Path
from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, Lang, LangOpt, OutputFormat, OutputOpt, console, write_json


@app.command()
def probe(
    bench: Annotated[
        bool, typer.Option("--bench", help="Also run micro-benchmarks (needs torch: gpuplan[bench]).")
    ] = False,
    root: Annotated[
        Path, typer.Option("--root", hidden=True, help="Read /proc and /sys under this tree (tests).")
    ] = Path("/"),
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = Lang.en,
    catalog: CatalogOpt = None,
) -> None:
    """Inspect this node: container, VM or bare metal (with evidence), GPUs, NVLink, network, RDMA."""
    from gpuplan import api
    from gpuplan.render.probe import render_markdown, render_table

    doc = api.probe(root=root, bench=bench, catalog=catalog, lang=lang.value)
    if output is OutputFormat.json:
        write_json(doc)
    elif output is OutputFormat.markdown:
        typer.echo(render_markdown(doc, lang.value), nl=False)
    else:
        out = console()
        for item in render_table(doc, lang.value, width=out.width):
            out.print(item)

"""`gpuplan serve`: the web page and JSON API (see docs/web.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind. Loopback by default; anything else "
                                                     "exposes the server to your network.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port (0: any free one).")] = 8000,
    max_body_mb: Annotated[float, typer.Option("--max-body-mb", min=0.001, help="Largest request body.")] = 20.0,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds a compare/report request may take.")]
    = 20.0,
    heavy_timeout: Annotated[float, typer.Option(
        "--heavy-timeout", min=1.0, help="Seconds a plan/simulate/audit request may take.")] = 120.0,
    catalog: CatalogOpt = None,
) -> None:
    """Serve the page (edit a scenario, see the verdict and charts) and the JSON API (`/docs`)."""
    import uvicorn

    from gpuplan.web import create_app

    web = create_app(catalog=catalog, max_body_mb=max_body_mb, timeout_s=timeout, heavy_timeout_s=heavy_timeout)
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: binding to {host}: anyone who can reach this address can use the server.", err=True)
    typer.echo(f"gpuplan serve: http://{'[' + host + ']' if ':' in host else host}:{port}/  (API docs: /docs)")
    uvicorn.run(web, host=host, port=port, log_level="warning", access_log=False)

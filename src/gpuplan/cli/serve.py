"""`gpuplan serve`: the web page and JSON API (see docs/web.md)."""

from __future__ import annotations

from typing import Annotated, Any

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
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, help="Server processes sharing the port "
                                         "(each with its own answer cache); 1 is enough for one person.")] = 1,
    inline_max_kb: Annotated[float, typer.Option(
        "--inline-max-kb", min=0.0, help="Compare scenarios up to this size are answered directly in the event "
                                         "loop (no thread hand-off); larger ones run in a thread with --timeout.")]
    = 4.0,
    db: Annotated[str | None, typer.Option(
        "--db", help="The quotes database (sqlite:///... or postgresql://...; default GPUPLAN_DB, else SQLite "
                     "in your data folder).")] = None,
) -> None:
    """Serve the page (edit a scenario, see the verdict and charts) and the JSON API (`/docs`)."""
    from gpuplan.web import server
    from gpuplan.web.app import create_app

    config: dict[str, Any] = {"catalog": str(catalog) if catalog else None, "max_body_mb": max_body_mb,
                              "timeout_s": timeout, "heavy_timeout_s": heavy_timeout, "inline_max_kb": inline_max_kb,
                              "db": db}
    web = create_app(**config)  # checks the settings and the catalog before anything listens
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: binding to {host}: anyone who can reach this address can use the server.", err=True)
    typer.echo(f"gpuplan serve: http://{'[' + host + ']' if ':' in host else host}:{port}/  (API docs: /docs)")
    server.run(config, host=host, port=port, workers=workers, app=web)

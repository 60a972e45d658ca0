"""`gpuplan serve`: the web page and JSON API (see docs/web.md)."""

import ipaddress
from typing import Annotated, Any

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt
from gpuplan.errors import UsageError

MIN_TOKEN_CHARS = 16
AUTO_WORKERS_MAX = 4


def auto_workers() -> int:
    """`--workers 0`: one server process per core this process may run on, at most `AUTO_WORKERS_MAX`. A
    compare costs ~1.5 ms of CPU; 50 connections on one process queue ~80 ms, on two ~40 ms (docs/web.md)."""
    import os

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, AUTO_WORKERS_MAX))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind. Loopback by default; anything else "
                                                     "needs --token (or --insecure-no-auth).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port (0: any free one).")] = 8000,
    max_body_mb: Annotated[float, typer.Option("--max-body-mb", min=0.001, help="Largest request body.")] = 20.0,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds a compare/report request may take.")]
    = 20.0,
    heavy_timeout: Annotated[float, typer.Option(
        "--heavy-timeout", min=1.0, help="Seconds a plan/simulate/audit request may take.")] = 120.0,
    catalog: CatalogOpt = None,
    workers: Annotated[int, typer.Option("--workers", min=0, max=64, help="Server processes sharing the port "
                                         "(each with its own answer cache); 0: one per CPU core, at most "
                                         f"{AUTO_WORKERS_MAX}.")] = 0,
    inline_max_kb: Annotated[float, typer.Option(
        "--inline-max-kb", min=0.0, help="Compare scenarios up to this size are answered directly in the event "
                                         "loop (no thread hand-off); larger ones run in a thread with --timeout.")]
    = 4.0,
    db: Annotated[str | None, typer.Option(
        "--db", help="The quotes database (sqlite:///... or postgresql://...; default GPUPLAN_DB, else SQLite "
                     "in your data folder).")] = None,
    token: Annotated[str | None, typer.Option(
        "--token", envvar="GPUPLAN_TOKEN", show_default=False,
        help=f"Every request must carry it (Authorization: Bearer TOKEN, or the cookie the printed one-time "
             f"login link sets); at least {MIN_TOKEN_CHARS} characters.")] = None,
    insecure_no_auth: Annotated[bool, typer.Option(
        "--insecure-no-auth", help="Bind beyond loopback without a token: anyone who reaches the address can "
                                   "use the server and write to its quote database.")] = False,
    allowed_host: Annotated[list[str] | None, typer.Option(
        "--allowed-host", help="A name the server answers to besides the loopback names (its DNS name behind a "
                               "reverse proxy); repeat for more.")] = None,
    max_connections: Annotated[int, typer.Option(
        "--max-connections", min=1, max=100_000, help="Open connections per process; past it, 503.")] = 256,
) -> None:
    """Serve the page (edit a scenario, see the verdict and charts) and the JSON API (`/docs`)."""
    import secrets
    import tempfile

    from gpuplan.web import server
    from gpuplan.web.app import create_app

    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise UsageError(f"the token is {len(token)} characters; at least {MIN_TOKEN_CHARS} are needed",
                         field="--token", hint="e.g. --token $(openssl rand -base64 24)")
    if not _loopback(host) and not token and not insecure_no_auth:
        raise UsageError(f"binding to {host} exposes the server beyond this machine, and no token was given",
                         field="--host", hint="give --token (or GPUPLAN_TOKEN), or --insecure-no-auth to expose it "
                                              "without one; behind a reverse proxy see docs/web.md.")
    hosts = list(allowed_host or [])
    if not _loopback(host) and host not in ("0.0.0.0", "::"):  # noqa: S104 - a comparison, not a bind
        hosts.append(host)
    login: dict[str, Any] = {}
    if token:
        login = {"login_code": secrets.token_urlsafe(24),
                 "login_mark": tempfile.mkdtemp(prefix="gpuplan-login-") + "/used"}
    config: dict[str, Any] = {"catalog": str(catalog) if catalog else None, "max_body_mb": max_body_mb,
                              "timeout_s": timeout, "heavy_timeout_s": heavy_timeout, "inline_max_kb": inline_max_kb,
                              "db": db, "token": token or None, "allowed_hosts": hosts, **login}
    web = create_app(**config)  # checks the settings and the catalog before anything listens
    shown = hosts[0] if hosts else ("127.0.0.1" if host in ("0.0.0.0", "::") else host)  # noqa: S104
    base = f"http://{'[' + shown + ']' if ':' in shown else shown}:{port}"
    if insecure_no_auth and not token:
        typer.echo(f"warning: --insecure-no-auth: anyone who can reach {host} can use this server and write "
                   "to its quote database.", err=True)
    typer.echo(f"gpuplan serve: {base}/  (API docs: /docs)")
    if token:
        typer.echo(f"login link (works once): {base}/login?code={login['login_code']}")
    server.run(config, host=host, port=port, workers=workers or auto_workers(), app=web,
               max_connections=max_connections)

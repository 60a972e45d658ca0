"""`gpuplan quotes add|import|list|trend`: a team's quote history in SQLite or PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import OutputFormat, OutputOpt, console, write_json

quotes_app = typer.Typer(help="A quote history (SQLite by default, or PostgreSQL): add, import, list, trend.",
                         no_args_is_help=True)
app.add_typer(quotes_app, name="quotes")

DbOpt = Annotated[str | None, typer.Option(
    "--db", envvar="GPUPLAN_DB", show_default=False,
    help="Database URL: sqlite:///file or postgresql://user@host/db (default: quotes.sqlite in your data folder).")]


@quotes_app.command("add")
def add(
    provider: Annotated[str, typer.Option("--provider", help="Who quoted.")],
    gpu: Annotated[str, typer.Option("--gpu", help="GPU id, e.g. ascend-910b.")],
    mode: Annotated[str, typer.Option("--mode", help="bare-metal or container.")],
    price: Annotated[float, typer.Option("--price", help="The amount per --per.")],
    per: Annotated[str, typer.Option("--per", help="gpu-hour, gpu-day, gpu-month, node-hour, node-day, node-month.")],
    currency: Annotated[str, typer.Option("--currency", help="ISO code, e.g. CNY.")],
    date: Annotated[str, typer.Option("--date", help="Day of the quote, YYYY-MM-DD.")],
    term: Annotated[str | None, typer.Option("--term", help="Lease term, e.g. 12mo.")] = None,
    note: Annotated[str, typer.Option("--note", help="Free text.")] = "",
    db: DbOpt = None,
) -> None:
    """Store one quote."""
    from gpuplan import api
    from gpuplan.quotes.csvio import make_quote

    q = make_quote(provider=provider, gpu=gpu, mode=mode, term=term, price=price, per=per, currency=currency,
                   when=date, note=note, where="--")
    n = api.quotes_add([q], db=db)
    typer.echo(f"added {n} quote")


@quotes_app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help=(
        "CSV: provider,gpu,mode,term,price,per,currency,date,note; or a catalog .yaml (`catalog pull` output)."))],
    db: DbOpt = None,
) -> None:
    """Store every quote of a CSV or catalog file (all are checked first; a bad one stores nothing)."""
    from gpuplan import api

    n = api.quotes_add(api.quotes_read_csv(file), db=db)
    typer.echo(f"imported {n} quotes from {file}")


@quotes_app.command("list")
def list_(
    gpu: Annotated[str | None, typer.Option("--gpu", help="Only this GPU.")] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="Only bare-metal or container.")] = None,
    db: DbOpt = None,
    output: OutputOpt = OutputFormat.table,
) -> None:
    """The stored quotes, oldest first."""
    from gpuplan import api

    qs = api.quotes_list(db=db, gpu=gpu, mode=mode)
    if output == OutputFormat.json:
        write_json([q.to_json() for q in qs])
        return
    from rich.table import Table

    tb = Table()
    for c in ("date", "provider", "gpu", "mode", "term", "price", "per", "per GPU-hour", "note"):
        tb.add_column(c, justify="right" if c in ("price", "per GPU-hour") else "left")
    for q in qs:
        tb.add_row(q.quoted_on.isoformat(), q.provider, q.gpu, q.mode, f"{q.term_months}mo" if q.term_months else "",
                   f"{q.price:,.2f} {q.currency}", q.per, f"{q.price_per_gpu_hour:.4f}", q.note)
    console().print(tb)


@quotes_app.command("trend")
def trend(
    gpu: Annotated[str | None, typer.Option("--gpu", help="Only this GPU.")] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="Only bare-metal or container.")] = None,
    csv: Annotated[Path | None, typer.Option("--csv", help="Fit a quotes CSV instead of the database.")] = None,
    db: DbOpt = None,
    output: OutputOpt = OutputFormat.table,
) -> None:
    """The price drift a year per (GPU, mode), fitted log-linearly, with a 90% range (`commit` uses it)."""
    from gpuplan import api

    fits = api.quotes_trend(db=db, quotes=csv, gpu=gpu, mode=mode)
    if output == OutputFormat.json:
        write_json(fits)
        return
    from rich.table import Table

    tb = Table()
    for c in ("gpu", "mode", "quotes", "from", "to", "drift / year", "90% range"):
        tb.add_column(c, justify="right" if c in ("quotes", "drift / year", "90% range") else "left")
    for f in fits:
        tb.add_row(f["gpu"], f["mode"], str(f["quotes"]), f["first"], f["last"], f"{f['drift_per_year']:+.1%}",
                   f"{f['drift_low']:+.1%} .. {f['drift_high']:+.1%}")
    console().print(tb)
    if not fits:
        typer.echo("no (GPU, mode) has 3 quotes on 2 different days yet: nothing to fit.")

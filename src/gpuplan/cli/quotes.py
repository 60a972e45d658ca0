"""`gpuplan quotes add|import|list|trend`: a team's quote history in SQLite or PostgreSQL."""

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
    gpu: Annotated[str, typer.Option("--gpu", help="GPU name or id, e.g. 910B or ascend-910b.")],
    mode: Annotated[str, typer.Option("--mode", help="bare-metal, container or vm.")],
    price: Annotated[str, typer.Option("--price", help="The amount per --per, or a quoted range such as 180-260.")],
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
    mode: Annotated[str | None, typer.Option("--mode", help="Only bare-metal, container or vm.")] = None,
    db: DbOpt = None,
    output: OutputOpt = OutputFormat.table,
) -> None:
    """The stored quotes, oldest first."""
    from gpuplan import api

    qs = api.quotes_list(db=db, gpu=gpu, mode=mode)
    if output == OutputFormat.json:
        write_json([q.to_json() for q in qs])
        return
    from gpuplan.render.quotes import quotes_table

    out = console()
    out.print(quotes_table([q.to_json() for q in qs], out.width))


@quotes_app.command("trend")
def trend(
    gpu: Annotated[str | None, typer.Option("--gpu", help="Only this GPU.")] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="Only bare-metal, container or vm.")] = None,
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
    from gpuplan.render.quotes import trend_table

    out = console()
    out.print(trend_table(fits, out.width))
    if not fits:
        typer.echo("no (GPU, mode) has 3 quotes on 2 different days yet: nothing to fit.")


db_app = typer.Typer(help="The quote store's schema (Alembic): current, upgrade, downgrade, history.",
                     no_args_is_help=True)
quotes_app.add_typer(db_app, name="db")


@db_app.command("current")
def db_current(db: DbOpt = None) -> None:
    """The schema revision the database is at (none: not created yet)."""
    from gpuplan import api

    typer.echo(api.quotes_db_current(db=db) or "none (no schema yet: `gpuplan quotes db upgrade` creates it)")


@db_app.command("upgrade")
def db_upgrade(rev: Annotated[str, typer.Argument(help="Target revision.")] = "head", db: DbOpt = None) -> None:
    """Migrate the schema up to REV (default: the latest)."""
    from gpuplan import api

    typer.echo(f"at revision {api.quotes_db_move(rev, up=True, db=db)}")


@db_app.command("downgrade")
def db_downgrade(rev: Annotated[str, typer.Argument(help="Target revision, e.g. 0001 or base.")],
                 db: DbOpt = None) -> None:
    """Migrate the schema down to REV (`base` drops the table and its quotes)."""
    from gpuplan import api

    typer.echo(f"at revision {api.quotes_db_move(rev, up=False, db=db) or 'base'}")


@db_app.command("history")
def db_history() -> None:
    """Every schema revision, newest first."""
    from gpuplan import api

    for rev, doc in api.quotes_db_history():
        typer.echo(f"{rev}  {doc}")

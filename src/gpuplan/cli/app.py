"""The Typer application object every command module registers on.

Command modules import only typer and this module at import time; engines are imported inside
the command functions so that `gpuplan --help` stays fast.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="gpuplan",
    help="Decide where GPU work runs: containers, bare metal, or a hybrid pool.",
    epilog="Exit codes: 0 ok, 1 internal error, 2 bad input or usage. `gpuplan --debug COMMAND ...` shows tracebacks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _show_version(value: bool) -> None:
    if value:
        from gpuplan import __version__

        typer.echo(f"gpuplan {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print gpuplan's version and exit."
    ),
) -> None:
    """Decide where GPU work runs: containers, bare metal, or a hybrid pool."""

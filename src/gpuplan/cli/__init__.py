"""The `gpuplan` command line: a thin layer over `gpuplan.api`.

Errors caused by input (`GpuplanError`) print one line with a hint and exit 2; anything else is an
internal error, exit 1, with the traceback only under `--debug`.

What a user waits for is the whole process, so `main` imports only what the command being run needs:
the command's own module (not all twelve); heavy libraries load where they are used (`gpuplan.lazy`).
Every command line goes through this one typer app. The command modules evaluate their annotations
when imported (no `from __future__ import annotations`): typer reads each command's signature, and
string annotations would be compiled again by `eval` on every run (about 2 ms for `simulate`).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

# Each module registers its commands on the typer app when imported. Order is the order in `--help`.
COMMAND_MODULES = (
    "compare",
    "plan",
    "commit",
    "report",
    "quotes",
    "simulate",
    "audit",
    "probe",
    "vendors",
    "export",
    "serve",
    "catalog",
    "schema",
)


def load_app(args: list[str] | None = None) -> typer.Typer:
    """The typer app with the command `args` name registered (its module imported), or every command
    when they name none (`--help`, a misspelt command: click then lists or suggests them all)."""
    from gpuplan.cli.app import app

    name = next((a for a in args or () if not a.startswith("-")), None)
    if name in COMMAND_MODULES:
        importlib.import_module(f"gpuplan.cli.{name}")
        return app
    for module in COMMAND_MODULES:
        importlib.import_module(f"gpuplan.cli.{module}")
    # a command run earlier in this process registered first: restore the order of COMMAND_MODULES
    app.registered_commands.sort(key=_position)
    return app


def _position(command: typer.models.CommandInfo) -> int:
    module = str(getattr(command.callback, "__module__", "")).rsplit(".", 1)[-1]
    return COMMAND_MODULES.index(module) if module in COMMAND_MODULES else len(COMMAND_MODULES)


def _print_error(text: str) -> None:
    from rich.console import Console

    Console(stderr=True, highlight=False).print(f"[bold red]error:[/] {text}", markup=True, soft_wrap=True)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    if debug:
        args.remove("--debug")
    from gpuplan.errors import GpuplanError
    from gpuplan.lazy import one_blas_thread

    one_blas_thread()
    try:
        load_app(args)(args=args, prog_name="gpuplan", standalone_mode=True)
    except SystemExit as exc:  # click exits through SystemExit in standalone mode
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return code
    except GpuplanError as exc:
        if debug:
            raise
        from rich.markup import escape

        _print_error(escape(str(exc)))
        return exc.exit_code
    except KeyboardInterrupt:
        _print_error("interrupted")
        return 130
    except Exception as exc:  # an internal error: say so plainly
        if debug:
            raise
        _print_error(
            f"internal error: {type(exc).__name__}: {exc}. "
            "Run again with --debug for the traceback, and please report it."
        )
        return 1
    return 0


def entry() -> None:
    """The `gpuplan` command: `main`, then exit without the interpreter's last garbage collections.

    At exit CPython collects cycles again and again while it clears the modules, each pass walking
    every object the imports made (typer's and pydantic's schemas, typing's caches, numpy): 0.025-0.05
    CPU s of a 0.2-0.4 s command (benchmarks/bench_startup.py, paired runs). `gc.freeze()` moves those
    objects out of the collector's sight; the rest of the exit is as before (atexit handlers, threads
    joined, files flushed, objects freed by reference counting), only objects in reference cycles are
    left to the operating system. Not in `main`, which tests call in a process that goes on."""
    code = main()
    import gc

    gc.freeze()
    sys.exit(code)

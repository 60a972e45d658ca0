"""The `gpuplan` command line: a thin layer over `gpuplan.api`.

Errors caused by input (`GpuplanError`) print one line with a hint and exit 2; anything else is an
internal error, exit 1, with the traceback only under `--debug`.
"""

from __future__ import annotations

import importlib
import sys

from gpuplan.cli.app import app

# Each module registers its commands on `app` when imported. Order is the order in `--help`.
COMMAND_MODULES = (
    "compare",
    "plan",
    "commit",
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

for _name in COMMAND_MODULES:
    importlib.import_module(f"gpuplan.cli.{_name}")


def _print_error(text: str) -> None:
    from rich.console import Console

    Console(stderr=True, highlight=False).print(f"[bold red]error:[/] {text}", markup=True, soft_wrap=True)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    if debug:
        args.remove("--debug")
    from gpuplan.errors import GpuplanError

    try:
        app(args=args, prog_name="gpuplan", standalone_mode=True)
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
    sys.exit(main())

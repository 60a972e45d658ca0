"""`gpuplan compare SCENARIO -o json` without typer.

typer (with click and rich) is a sizeable share of a small comparison's whole process. A `compare`
command line this parser fully understands (the options below, each once, `--opt value`,
`--opt=value` or `-o value`, and `--explain`) with `-o json` runs `api.compare` directly and prints
what the full command prints; anything else -- help, another option or output, a misspelt value,
GPUPLAN_CATALOG set (the full command reads it), bad input of any kind -- returns None and the full
command runs, which gives the same document or the one error message the user would see anyway.
`cli.main` offers `compare` lines here first (`cli.fast.run`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gpuplan.cli.fast import Options, parse_line

_OPTIONS: Options = {
    "--output": ("output", ("json",)),
    "-o": ("output", ("json",)),
    "--lang": ("lang", ("en", "zh")),
    "--catalog": ("catalog", None),
}


def parse(args: list[str]) -> dict[str, str] | None:
    """The options of a plain `compare ... -o json` line (after `compare`), or None when the full
    parser must read it."""
    got = parse_line(args, _OPTIONS, positional="scenario", required=("scenario", "output"),
                     flags={"--explain": "explain"})
    return None if got is None else {k: str(v) for k, v in got.items()}


def run_compare(args: list[str]) -> int | None:
    """Run `compare ARGS` without typer and return its exit code, or None to run the full command."""
    opts = parse(args)
    if opts is None or "GPUPLAN_CATALOG" in os.environ:  # typer reads it as --catalog: the full command
        return None
    import gc

    from gpuplan import api
    from gpuplan.errors import GpuplanError
    from gpuplan.render.json_text import write_indented

    catalog = opts.get("catalog")
    gc.disable()  # as the full command: millions of objects, no cycles
    try:
        try:
            result = api.compare(Path(opts["scenario"]), catalog=Path(catalog) if catalog else None)
        except (GpuplanError, OSError, ValueError):
            return None  # the full command says what is wrong, in its words
        head, workloads = result.document_stream("zh" if opts.get("lang") == "zh" else "en",
                                                 explain="explain" in opts)
        write_indented(head, "workloads", workloads, sys.stdout.write)
        sys.stdout.write("\n")
    finally:
        gc.enable()
    return 0

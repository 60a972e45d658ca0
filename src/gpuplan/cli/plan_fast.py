"""`gpuplan plan SCENARIO ... -o json` without typer.

typer (with click, and the pydantic adapters it builds for each of `plan`'s options) costs about
0.08 s of a plan's whole process. A `plan` command line this parser fully understands (the options
below, each once but `--max-wait`, `--opt value`, `--opt=value` or `-o value`) with `-o json` runs
`api.plan_document` directly and prints what the full command prints; anything else -- help,
another option or output, a misspelt value, bad input of any kind -- returns None and the full
command runs, which gives the same document or the one error message the user would see anyway.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpuplan.cli.fast import Options, parse_line
from gpuplan.constants import QUEUEINGS

_OPTIONS: Options = {
    "--demand": ("demand", None),
    "--trace": ("trace", None),
    "--trace-format": ("trace_format", None),
    "--queueing": ("queueing", QUEUEINGS),
    "--output": ("output", ("json",)),
    "-o": ("output", ("json",)),
    "--lang": ("lang", ("en", "zh")),
    "--catalog": ("catalog", None),
    "--max-wait": ("max_wait", None),
}


def parse(args: list[str]) -> dict[str, str | list[str]] | None:
    """The options of a plain `plan ... -o json` line (after `plan`), or None when the full parser
    must read it."""
    return parse_line(args, _OPTIONS, positional="scenario", required=("scenario", "output"),
                      repeatable=frozenset({"max_wait"}))


def run_plan(args: list[str]) -> int | None:
    """Run `plan ARGS` without typer and return its exit code, or None to run the full command."""
    import os

    opts = parse(args)
    if opts is None or "GPUPLAN_CATALOG" in os.environ:  # typer reads it as --catalog: the full command
        return None

    if "numpy" not in sys.modules:  # as `cli.plan.one_blas_thread` (which would import typer)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from gpuplan import api
    from gpuplan.constants import DEFAULT_QUEUEING
    from gpuplan.errors import GpuplanError
    from gpuplan.render.json_text import dumps_indented
    from gpuplan.render.plan import plan_json

    def path(field: str) -> Path | None:
        value = opts.get(field)
        return Path(value) if isinstance(value, str) else None

    queueing = next((q for q in QUEUEINGS if q == opts.get("queueing")), DEFAULT_QUEUEING)
    max_wait = opts.get("max_wait")
    try:
        doc = api.plan_document(
            Path(str(opts["scenario"])), lang="zh" if opts.get("lang") == "zh" else "en", catalog=path("catalog"),
            demand=path("demand"), trace=path("trace"), trace_format=str(opts.get("trace_format", "auto")),
            queueing=queueing, max_wait=max_wait if isinstance(max_wait, list) else None)
        text = dumps_indented(plan_json(doc))  # what write_json writes
    except (GpuplanError, OSError, ValueError):
        return None  # the full command says what is wrong, in its words
    sys.stdout.write(text + "\n")
    return 0

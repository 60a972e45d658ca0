"""Plain command lines without typer: `simulate` (without pydantic or numpy either), and `plan`
and `compare` with `-o json` (cli/plan_fast.py, cli/compare_fast.py).

typer, click and the adapters they build cost about a tenth of a second before any work starts, and
a small command's work is often less. `main` offers those three commands' lines here first. A line
`parse_line` fully understands (each command's options, each once, `--opt value`, `--opt=value` or
`-x value`) runs without typer and prints exactly what the full command prints; anything else --
help, another option, a misspelt value, `GPUPLAN_CATALOG` set for plan or compare, bad input of any
kind -- returns None and the full command runs, which gives the same output or the one error
message the user would see anyway.

A plain `simulate` (no scenario) runs the lean replay (`gpuplan.sim.lean`) and prints the same
table, markdown or JSON through the same renderers. It calls that engine directly rather than
through `gpuplan.api`: importing the api's dataclasses would cost more than the replay it serves.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from gpuplan.constants import DEFAULT_QUEUEING, PACKINGS, QUEUEINGS

Options = dict[str, tuple[str, tuple[str, ...] | None]]
"""option -> (field, the values it may take; None: any)"""


def parse_line(
    args: list[str],
    options: Options,
    *,
    positional: str,
    required: tuple[str, ...],
    flags: dict[str, str] | None = None,
    repeatable: frozenset[str] = frozenset(),
) -> dict[str, str | list[str]] | None:
    """A command's arguments (after its name) when they are plain: one `positional`, `options` as
    `--opt value`, `--opt=value` or `-x value` with an allowed value, each once but the `repeatable`
    fields, `flags` without a value, every field of `required` present. Else None: help, `--`, glued
    short options, an option or value this path does not take, anything typer would read otherwise."""
    flags = flags or {}
    out: dict[str, str | list[str]] = {}
    i = 0
    while i < len(args):
        tok = args[i]
        if tok in flags:
            if flags[tok] in out:
                return None
            out[flags[tok]] = "1"
            i += 1
            continue
        if tok.startswith("--") and "=" in tok:
            name, value = tok.split("=", 1)
            i += 1
        elif tok in options:
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                return None
            name, value = tok, args[i + 1]
            i += 2
        elif tok.startswith("-"):
            return None
        else:
            if positional in out:
                return None
            out[positional] = tok
            i += 1
            continue
        if name not in options or not value:
            return None
        field, allowed = options[name]
        if allowed is not None and value not in allowed:
            return None
        if field in repeatable:
            prev = out.setdefault(field, [])
            assert isinstance(prev, list)
            prev.append(value)
        elif field in out:
            return None
        else:
            out[field] = value
    return out if all(f in out for f in required) else None


def run(command: str, args: list[str]) -> int | None:
    """Run `command ARGS` the lean way when it has one and the line is plain; None: run the full command."""
    import os

    if command == "simulate":
        return run_simulate(args)
    if "GPUPLAN_CATALOG" in os.environ:  # typer reads it as --catalog: the full command
        return None
    if command == "plan":
        from gpuplan.cli.plan_fast import run_plan

        return run_plan(args)
    if command == "compare":
        from gpuplan.cli.compare_fast import run_compare

        return run_compare(args)
    return None


_SIMULATE: Options = {
    "--reserved": ("reserved", None),
    "-r": ("reserved", None),
    "--wait": ("wait", None),
    "-w": ("wait", None),
    "--queueing": ("queueing", QUEUEINGS),
    "--packing": ("packing", PACKINGS),
    "--gpus-per-node": ("gpus_per_node", None),
    "--trace-format": ("trace_format", ("auto", "generic", "alibaba-2023", "tiresias")),
    "--max-wait": ("max_wait", None),
    "--output": ("output", ("table", "json", "markdown")),
    "-o": ("output", ("table", "json", "markdown")),
    "--lang": ("lang", ("en", "zh")),
}


def parse(args: list[str]) -> dict[str, str | list[str]] | None:
    """The options of a plain `simulate` line, or None when the full parser must read it."""
    return parse_line(args, _SIMULATE, positional="trace", required=("trace", "reserved"),
                      repeatable=frozenset({"max_wait"}))


def run_simulate(args: list[str]) -> int | None:
    """Run `simulate ARGS` the lean way and return its exit code, or None to run the full command."""
    opts = parse(args)
    if opts is None:
        return None
    from gpuplan.errors import GpuplanError

    try:
        got = _replay(opts)
    except (GpuplanError, OSError, ValueError):
        return None  # the full command says what is wrong, in its words
    if got is None:
        return None
    doc, trace = got
    output, lang = opts.get("output", "table"), str(opts.get("lang", "en"))
    if output == "json":
        import json

        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return 0
    from gpuplan.render.simulate import heading, render_markdown, render_table

    meta = heading(trace=str(Path(str(opts["trace"]))), fmt=trace["format"], records=trace["records"],
                   gpu_hours=trace["gpu_hours"], wait_hours=float(trace["wait_hours"]),
                   queueing=str(opts.get("queueing", DEFAULT_QUEUEING)), packing=str(opts.get("packing", "gpu")),
                   gpus_per_node=int(trace["gpus_per_node"]), prices=None)
    if output == "markdown":
        sys.stdout.write(render_markdown(meta, doc, lang))
        return 0
    from gpuplan.cli.term import console

    out = console()
    for item in render_table(meta, doc, lang, width=out.width):
        out.print(item)
    return 0


def _replay(opts: dict[str, str | list[str]]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    from gpuplan.cli.term import simulate_progress
    from gpuplan.sim.lean import simulate_text

    def one(field: str, default: str) -> str:
        value = opts.get(field, default)
        assert isinstance(value, str)
        return value

    max_wait = opts.get("max_wait")
    gpn = int(str(opts["gpus_per_node"])) if "gpus_per_node" in opts else 8
    return simulate_text(
        one("trace", ""),
        one("reserved", ""),
        one("wait", "0"),
        queueing=one("queueing", DEFAULT_QUEUEING),
        packing=one("packing", "gpu"),
        gpus_per_node=gpn,
        trace_format=one("trace_format", "auto"),
        max_wait=list(max_wait) if isinstance(max_wait, list) else None,
        progress=simulate_progress(one("lang", "en")),
    )

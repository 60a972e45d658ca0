"""Plain command lines without typer: `plan` and `compare` with `-o json` (cli/plan_fast.py,
cli/compare_fast.py).

typer, click and the adapters they build cost about a tenth of a second before any work starts, and
a small command's work is often less. `main` offers those three commands' lines here first. A line
`parse_line` fully understands (each command's options, each once, `--opt value`, `--opt=value` or
`-x value`) runs without typer and prints exactly what the full command prints; anything else --
help, another option, a misspelt value, `GPUPLAN_CATALOG` set for plan or compare, bad input of any
kind -- returns None and the full command runs, which gives the same output or the one error
message the user would see anyway.

`simulate` always runs the full command (its one path: `gpuplan.api.simulate`).
"""

from __future__ import annotations

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

    if "GPUPLAN_CATALOG" in os.environ:  # typer reads it as --catalog: the full command
        return None
    if command == "plan":
        from gpuplan.cli.plan_fast import run_plan

        return run_plan(args)
    if command == "compare":
        from gpuplan.cli.compare_fast import run_compare

        return run_compare(args)
    return None

"""`gpuplan simulate TRACE -r R ...` without typer, pydantic or numpy.

The full command line (typer, then `api.simulate`) costs about 0.3 s of imports before the first
job is read; a replay of a few thousand jobs then takes milliseconds. `main` offers each
`simulate` command line here first. A line this parser fully understands (the options below, each
once, `--opt value`, `--opt=value` or `-x value`) without a scenario runs the lean replay
(`gpuplan.sim.lean`) and prints the same table, markdown or JSON as the full command (the table
and markdown through the same renderers); anything else -- help, another option, a scenario, a
misspelt value, bad input of any kind -- returns None and the full command runs, which gives the
same output or the one error message the user would see anyway.

It calls its engine directly rather than through `gpuplan.api`: importing the api's dataclasses
would cost more than the replay it serves.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from gpuplan.constants import DEFAULT_QUEUEING, PACKINGS, QUEUEINGS

# option -> (field, values it may take; None: any)
_OPTIONS: dict[str, tuple[str, tuple[str, ...] | None]] = {
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
_REPEATABLE = {"max_wait"}


def parse(args: list[str]) -> dict[str, str | list[str]] | None:
    """The options of a plain `simulate` line, or None when the full parser must read it."""
    out: dict[str, str | list[str]] = {}
    i = 0
    while i < len(args):
        tok = args[i]
        if tok.startswith("--") and "=" in tok:
            name, value = tok.split("=", 1)
            i += 1
        elif tok in _OPTIONS:
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                return None
            name, value = tok, args[i + 1]
            i += 2
        elif tok.startswith("-"):
            return None  # --help, -r8, an option this path does not take
        else:
            if "trace" in out:
                return None
            out["trace"] = tok
            i += 1
            continue
        if name not in _OPTIONS:
            return None
        field, allowed = _OPTIONS[name]
        if allowed is not None and value not in allowed:
            return None
        if field in _REPEATABLE:
            prev = out.setdefault(field, [])
            assert isinstance(prev, list)
            prev.append(value)
        elif field in out:
            return None
        else:
            out[field] = value
    if "trace" not in out or "reserved" not in out:
        return None
    return out


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
    from gpuplan.inputs.units import format_duration
    from gpuplan.sim.render import render_markdown, render_table

    wait_hours = float(trace["wait_hours"])
    packing, gpn = str(opts.get("packing", "gpu")), int(trace["gpus_per_node"])
    meta = {  # what api.SimulateResult.meta() says, unpriced
        "trace": str(Path(str(opts["trace"]))),
        "format": trace["format"],
        "records": trace["records"],
        "gpu_hours": trace["gpu_hours"],
        "wait": format_duration(wait_hours) if wait_hours else "0",
        "queueing": str(opts.get("queueing", DEFAULT_QUEUEING)),
        "packing": packing if packing == "gpu" else f"node ({gpn} GPUs)",
        "packing_mode": packing,
        "gpus_per_node": gpn,
        "prices": None,
    }
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

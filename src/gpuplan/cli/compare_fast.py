"""`gpuplan compare SCENARIO -o json` without typer.

typer (with click and rich) is a sizeable share of a small comparison's whole process. A `compare`
command line this parser fully understands (the options below, each once, `--opt value`,
`--opt=value` or `-o value`, and `--explain`) with `-o json` runs `api.compare` directly and prints
what the full command prints; anything else -- help, another option or output, a misspelt value,
GPUPLAN_CATALOG set (the full command reads it), bad input of any kind -- returns None and the full
command runs, which gives the same document or the one error message the user would see anyway.
`cli.main` offers `compare` lines here first once its owner adds the hook (as for `plan_fast`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# option -> (field, values it may take; None: any)
_OPTIONS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "--output": ("output", ("json",)),
    "-o": ("output", ("json",)),
    "--lang": ("lang", ("en", "zh")),
    "--catalog": ("catalog", None),
}
_FLAGS = {"--explain": "explain"}


def parse(args: list[str]) -> dict[str, str] | None:
    """The options of a plain `compare ... -o json` line (after `compare`), or None when the full
    parser must read it."""
    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        tok = args[i]
        if tok in _FLAGS:
            if _FLAGS[tok] in out:
                return None
            out[_FLAGS[tok]] = "1"
            i += 1
            continue
        if tok.startswith("--") and "=" in tok:
            name, value = tok.split("=", 1)
            i += 1
        elif tok in _OPTIONS:
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                return None
            name, value = tok, args[i + 1]
            i += 2
        elif tok.startswith("-"):
            return None  # --help, --html, --measured, -ojson, `--`, an option this path does not take
        else:
            if "scenario" in out:
                return None
            out["scenario"] = tok
            i += 1
            continue
        if name not in _OPTIONS or not value:
            return None
        field, allowed = _OPTIONS[name]
        if (allowed is not None and value not in allowed) or field in out:
            return None
        out[field] = value
    if "scenario" not in out or out.get("output") != "json":
        return None
    return out


def run_compare(args: list[str]) -> int | None:
    """Run `compare ARGS` without typer and return its exit code, or None to run the full command."""
    opts = parse(args)
    if opts is None or "GPUPLAN_CATALOG" in os.environ:
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

"""Child-process entry for the web app's heavy requests: `python -m gpuplan.web.runner ARGS...`.

Runs one `gpuplan` command; its JSON goes to stdout. A `GpuplanError` (or a bad option) is written to
stderr as one line `GPUPLAN_ERROR {json}` with the same fields the CLI shows, exit 2.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    import click

    from gpuplan.cli import app
    from gpuplan.errors import GpuplanError

    try:
        app(args=argv, prog_name="gpuplan", standalone_mode=False)
    except GpuplanError as exc:
        sys.stderr.write("GPUPLAN_ERROR " + json.dumps(exc.to_dict(), ensure_ascii=False) + "\n")
        return 2
    except click.exceptions.ClickException as exc:
        body = {"error": "usage", "message": exc.format_message(), "file": None, "line": None,
                "field": getattr(getattr(exc, "param", None), "name", None), "hint": None}
        sys.stderr.write("GPUPLAN_ERROR " + json.dumps(body, ensure_ascii=False) + "\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

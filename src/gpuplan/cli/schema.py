"""`gpuplan schema NAME`: the JSON Schema of a command's `-o json` output."""

from typing import Annotated

import typer

from gpuplan.cli.app import app


@app.command("schema")
def schema_cmd(
    name: Annotated[str, typer.Argument(help="compare, plan, simulate, audit, probe, commit or vendors.",
                                        show_default=False)],
) -> None:
    """Print the JSON Schema (draft 2020-12) of a command's `-o json` output, e.g. gpuplan.plan/1."""
    # Only pydantic is imported here: the contracts do not pull in the engines (numba, polars).
    from gpuplan.cli.common import write_json
    from gpuplan.contracts import CONTRACTS, json_schema
    from gpuplan.errors import UsageError

    if name not in CONTRACTS:
        raise UsageError(
            f"unknown schema {name!r}; expected one of {', '.join(CONTRACTS)}",
            field="NAME",
            hint="for example `gpuplan schema plan > plan.schema.json`; see docs/contracts.md.",
        )
    write_json(json_schema(name))

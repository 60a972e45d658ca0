"""`gpuplan compare` and `gpuplan init`."""

from pathlib import Path
from typing import Annotated

import typer

from gpuplan.api import STARTER
from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, ExplainOpt, HtmlOpt, LangOpt, OutputFormat, OutputOpt, console


@app.command()
def compare(
    scenario: Annotated[Path, typer.Argument(help="Scenario YAML (see `gpuplan init`).")],
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = "en",  # type: ignore[assignment]
    explain: ExplainOpt = False,
    html: HtmlOpt = None,
    catalog: CatalogOpt = None,
    measured: Annotated[
        Path | None, typer.Option("--measured", help="`gpuplan probe -o json` output: use its measured overheads.")
    ] = None,
    measured_offer: Annotated[
        str | None, typer.Option("--measured-offer", help="The offer the measured overheads apply to.")
    ] = None,
    details: Annotated[bool, typer.Option(
        "--details", help="Table: each workload's options and reasons even past 200 workloads (a summary comes first)."
    )] = False,
) -> None:
    """Each workload on each offer: cost, time, the four dimensions, the verdict and what would flip it."""
    import gc

    # A comparison builds millions of small objects and no reference cycles: the cyclic collector
    # would only walk them again and again (a sixth of the time on big scenarios). Off for the command.
    gc.disable()
    try:
        _compare(scenario, output, lang, explain, html, catalog, measured, measured_offer, details)
    finally:
        gc.enable()


def _compare(scenario: Path, output: OutputFormat, lang: object, explain: bool, html: Path | None,
             catalog: Path | None, measured: Path | None, measured_offer: str | None, details: bool = False) -> None:
    from gpuplan import api

    lang_code = str(getattr(lang, "value", lang))
    result = api.compare(scenario, catalog=catalog, measured=measured, measured_offer=measured_offer,
                         hours_curves=html is not None)
    if html is not None:
        from gpuplan.render.html import write_report

        write_report("compare", result, html, lang_code)
    if output == OutputFormat.json:  # the document's data as compare_json gives it, not validated again,
        # written a workload at a time (write_json's text, never the whole document in memory)
        from gpuplan.render.json_out import write_stream

        head, workloads = result.document_stream(lang_code, explain=explain)
        write_stream(head, "workloads", workloads)
        return
    from gpuplan.render.compare import compare_markdown, compare_table

    doc = result.document(lang_code, explain=explain)
    if output == OutputFormat.markdown:
        typer.echo(compare_markdown(doc, lang_code, scenario=str(scenario)))
    else:
        compare_table(doc, lang_code, console(), explain=explain, scenario=str(scenario), details=details)


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Where to write the starter scenario.")] = Path("scenario.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented starter scenario."""
    from gpuplan.errors import UsageError

    if path.exists() and not force:
        raise UsageError(f"{path} already exists", hint="use --force to overwrite it, or give another path.")
    path.write_text(STARTER, encoding="utf-8")
    typer.echo(f"wrote {path}; next: gpuplan compare {path}")

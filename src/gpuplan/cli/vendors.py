"""`gpuplan vendors`: the seed article's vendor checklist per offer and provider."""

from pathlib import Path
from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, LangOpt, OutputFormat, OutputOpt, console, write_json


@app.command()
def vendors(
    scenario: Annotated[Path, typer.Argument(help="Scenario YAML (see `gpuplan init`).")],
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = "en",  # type: ignore[assignment]
    catalog: CatalogOpt = None,
    measured: Annotated[
        Path | None,
        typer.Option("--measured", help="`gpuplan probe -o json` output: its fastest link is the offer's network."),
    ] = None,
    measured_offer: Annotated[
        str | None, typer.Option("--measured-offer", help="The offer whose node the probe ran on.")
    ] = None,
) -> None:
    """The article's checklist per offer: node network >= 25 Gb/s, NVLink/RoCE, data locality, support."""
    from gpuplan import api
    from gpuplan.contracts.vendors_document import vendors_json
    from gpuplan.render.vendors import vendors_markdown, vendors_table

    lang_code = getattr(lang, "value", lang)
    result = api.vendors(scenario, catalog=catalog, measured=measured, measured_offer=measured_offer)
    doc = vendors_json(result, lang_code)
    if output == OutputFormat.json:
        write_json(doc)
    elif output == OutputFormat.markdown:
        typer.echo(vendors_markdown(doc, lang_code), nl=False)
    else:
        vendors_table(doc, lang_code, console())

"""`gpuplan commit`."""

from pathlib import Path
from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, ExplainOpt, HtmlOpt, LangOpt, OutputFormat, OutputOpt, console, write_json


@app.command()
def commit(
    scenario: Annotated[Path, typer.Argument(help="Scenario YAML: offers (with `terms:`), workloads, `market:`.")],
    paths: Annotated[int, typer.Option("--paths", help="Monte Carlo paths of prices and demand.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the paths: the same seed gives the same answer.")] = 0,
    quotes: Annotated[Path | None, typer.Option(
        "--quotes", help="A quotes CSV whose trend fills the drifts `market:` leaves out.")] = None,
    db: Annotated[str | None, typer.Option(
        "--db", help="A quotes database URL (else GPUPLAN_DB) whose trend fills the drifts `market:` leaves out.",
        show_default=False)] = None,
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = "en",  # type: ignore[assignment]
    explain: ExplainOpt = False,
    html: HtmlOpt = None,
    catalog: CatalogOpt = None,
) -> None:
    """Which lease terms to sign: a ladder of terms per GPU type against price drift and demand growth."""
    from gpuplan import api
    from gpuplan.render.commit import commit_markdown, commit_table

    lang_code: api.Lang = "zh" if getattr(lang, "value", lang) == "zh" else "en"
    rep = api.commit(scenario, paths=paths, seed=seed, lang=lang_code, catalog=catalog, quotes=quotes, db=db)
    if html is not None:
        from gpuplan.render.html import write_report

        write_report("commit", rep.view, html, lang_code)
    if output == OutputFormat.json:
        write_json(rep.to_json())
    elif output == OutputFormat.markdown:
        typer.echo(commit_markdown(rep.view, lang_code))
    else:
        commit_table(rep.view, lang_code, console(), explain=explain)

"""`gpuplan report`: the decision pack."""

from pathlib import Path
from typing import Annotated

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, HtmlOpt, LangOpt, OutputFormat, OutputOpt


@app.command()
def report(
    scenario: Annotated[Path, typer.Argument(help="Scenario YAML.")],
    audit: Annotated[list[Path] | None, typer.Option(
        "--audit", help="Telemetry files (nvidia-smi CSV, Prometheus JSON, dcgm scrapes): adds the audit section. "
        "Repeat the option for several files.")] = None,
    quotes: Annotated[Path | None, typer.Option(
        "--quotes", help="A quotes CSV whose trend fills the drifts `market:` leaves out (commit).")] = None,
    db: Annotated[str | None, typer.Option(
        "--db", help="A quotes database URL (else GPUPLAN_DB) for the same.", show_default=False)] = None,
    paths: Annotated[int, typer.Option("--paths", help="Monte Carlo paths of the commit section.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the paths.")] = 0,
    html: HtmlOpt = None,
    output: OutputOpt = OutputFormat.table,
    lang: LangOpt = "en",  # type: ignore[assignment]
    catalog: CatalogOpt = None,
) -> None:
    """The decision pack: what to lease, rent and sign, and the money over 12 months, with the compare, plan,
    commit, vendors and (with --audit) audit sections, in one self-contained HTML file or markdown."""
    from gpuplan import api
    from gpuplan.render.pack import pack_markdown, summary_lines, write_pack_html

    lang_code: api.Lang = "zh" if getattr(lang, "value", lang) == "zh" else "en"
    pack = api.report(scenario, audit_files=list(audit or []), quotes=quotes, db=db, lang=lang_code, paths=paths,
                      seed=seed, catalog=catalog)
    if html is not None:
        write_pack_html(pack, html, lang_code)
    if output == OutputFormat.json:
        from gpuplan.cli.common import write_json

        write_json(pack.to_json())
    elif output == OutputFormat.markdown:
        typer.echo(pack_markdown(pack, lang_code))
    else:  # the answer; the document is in the --html file
        typer.echo("\n".join(summary_lines(pack, lang_code)))

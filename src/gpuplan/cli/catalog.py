"""`gpuplan catalog gpus|offers|defaults|pull`."""

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, OutputFormat, OutputOpt, console, write_json


class What(str, Enum):
    gpus = "gpus"
    offers = "offers"
    defaults = "defaults"
    pull = "pull"


@app.command("catalog")
def catalog_cmd(
    what: Annotated[What, typer.Argument(help="gpus, offers, defaults, or pull (import cloud offers via gpuhunt).")],
    gpu: Annotated[
        list[str] | None,
        typer.Option("--gpu", help="A GPU as you write it (H100, 910B, RTX 4090, ...): only it; several allowed."),
    ] = None,
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", help="pull: only this gpuhunt provider (aws, gcp, azure, runpod, ...)."),
    ] = None,
    spot: Annotated[
        bool | None,
        typer.Option("--spot/--on-demand", help="pull: only spot, or only on-demand offers (default: both)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="pull: write the offers file here (default: standard output).")
    ] = None,
    output: OutputOpt = OutputFormat.table,
    catalog: CatalogOpt = None,
) -> None:
    """List the bundled catalog (and your --catalog additions), each entry with its source and date;
    `pull` imports current public cloud offers into a catalog file that --catalog reads."""
    from gpuplan.errors import UsageError
    from gpuplan.inputs.catalog import GpuNameError, load_catalog
    from gpuplan.inputs.gpu_names import k8s_product, skypilot_name, smi_name

    cat = load_catalog(catalog)
    wanted: dict[str, dict[str, Any]] = {}
    for name in gpu or []:
        try:
            hit = cat.resolve_gpu(name)
        except GpuNameError as exc:
            raise UsageError(exc.message, field="--gpu", hint=exc.hint) from None
        wanted[hit.id] = {"name": name, "alias": hit.alias, "assumed": hit.assumed}
    if what == What.pull:
        from gpuplan.inputs.catalog.pull import pull_offers

        text, count = pull_offers(cat, gpus=tuple(wanted), providers=tuple(provider or ()), spot=spot)
        if out is None:
            typer.echo(text, nl=False)
        else:
            try:
                out.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write {out}: {exc.strerror}", field="--out") from None
            typer.echo(f"wrote {count} offers to {out}", err=True)
        return
    if what == What.defaults:
        write_json(cat.defaults) if output == OutputFormat.json else console().print_json(data=cat.defaults)
        return
    if what == What.gpus:
        rows = []
        for g in cat.gpus.values():
            if wanted and g.id not in wanted:
                continue
            row = g.model_dump()
            row["names"] = {"smi": smi_name(g.id), "skypilot": skypilot_name(g.id), "k8s": k8s_product(g.id)}
            if g.id in wanted:
                row["resolved_from"] = wanted[g.id]
            rows.append(row)
        cols = ["id", "name", "memory_gb", "hbm_tbs", "bf16_tflops", "gpu_gpu_gbs", "interconnect", "source", "as_of"]
    else:
        rows = []
        for o in cat.offers.values():
            if wanted and _offer_gpu(cat, o) not in wanted:
                continue
            r = {k: v for k, v in o.items() if not k.startswith("_")}
            p = r.get("price", {})
            r["price"] = f"{p.get('amount')} {r.get('currency', '')}/{p.get('per')}"
            rows.append(r)
        cols = ["id", "provider", "gpu", "mode", "price", "min_term", "source", "as_of"]
    if output == OutputFormat.json:
        write_json(rows)
        return
    notes = [f"`{w['name']}` read as {gid}: {w['assumed']}" for gid, w in wanted.items() if w["assumed"]]
    if output == OutputFormat.markdown:
        typer.echo("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
        for r in rows:
            typer.echo("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
        for n in notes:
            typer.echo(f"\nNote: {n}")
        return
    _print_table(rows, cols, notes)


def _print_table(rows: list[dict[str, Any]], cols: list[str], notes: list[str]) -> None:
    """The table fitted to the terminal: the long `source` texts move to a numbered legend below it,
    and a narrow terminal gets fewer columns (`id` over `name`, ...) rather than words cut in pieces."""
    from rich.table import Table

    from gpuplan.render.fit import add_columns, fits

    out = console()
    legend: dict[str, int] = {}
    for r in rows:
        legend.setdefault(str(r.get("source", "")), len(legend) + 1)
    text = {c: [("" if r.get(c) is None else str(r.get(c))) for r in rows] for c in cols if c != "source"}
    text["source"] = [f"[{legend[str(r.get('source', ''))]}]" for r in rows]
    shown = [c for c in cols if c != "source"] + ["source"]
    layouts: list[list[tuple[str, ...]]] = [[(c,) for c in shown]]
    # narrow: pairs of columns share one, the second key on a second line
    pairs = {"id": "name", "as_of": "interconnect"} if "name" in shown else {"id": "provider", "gpu": "mode"}
    narrow: list[tuple[str, ...]] = []
    for c in shown:
        if c in pairs.values():
            continue
        narrow.append((c, pairs[c]) if c in pairs and pairs[c] in shown else (c,))
    layouts.append(narrow)
    for layout in layouts:
        headers = ["\n".join(_LABELS.get(k, k) for k in group) for group in layout]
        cells = [["\n".join(text[k][i] for k in group) for group in layout] for i in range(len(rows))]
        numeric = [group[0] in _NUMERIC for group in layout]
        if fits(headers, cells, numeric, out.width):
            break
    table = Table(show_lines=len(layout) < len(shown))
    add_columns(table, headers, cells, numeric, out.width)
    out.print(table)
    for source, n in legend.items():
        out.print(f"[{n}] {source}", markup=False, highlight=False, soft_wrap=True)  # URLs stay whole
    for note in notes:
        out.print(f"Note: {note}", markup=False)


_NUMERIC = frozenset({"memory_gb", "hbm_tbs", "bf16_tflops", "gpu_gpu_gbs", "source"})
_LABELS = {"memory_gb": "memory GB", "hbm_tbs": "HBM TB/s", "bf16_tflops": "BF16 TFLOPS",
           "gpu_gpu_gbs": "GPU-GPU GB/s", "min_term": "min term", "as_of": "as of", "source": "src"}


def _offer_gpu(cat: Any, offer: dict[str, Any]) -> str | None:
    """The catalog id of an offer's `gpu` as written (None when it names no known GPU)."""
    try:
        return str(cat.resolve_gpu(str(offer.get("gpu", ""))).id)
    except ValueError:
        return None

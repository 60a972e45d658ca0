"""`gpuplan export`: the plan as scheduler configuration (Kueue, Slurm, Volcano, SkyPilot)."""

import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from gpuplan.api import ExportTarget
from gpuplan.cli.app import app
from gpuplan.cli.common import CatalogOpt, LangOpt

KueueApi = Literal["v1beta2", "v1beta1"]
# -o with one of these suffixes is a file name typed by mistake: refused (export writes directories)
FILE_SUFFIXES = (".yaml", ".yml", ".json", ".conf", ".txt", ".sh")


def _pairs(values: list[str], flag: str, *, bare_key: str | None = None) -> dict[str, str]:
    """`GPU=VALUE` items (or a bare `VALUE` for every GPU when bare_key is given) -> mapping."""
    from gpuplan.errors import UsageError

    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep:
            if bare_key is None:
                raise UsageError(
                    f"{flag}: expected GPU=NAME, got {item!r}", field=flag, hint=f"e.g. {flag} h100-sxm=H100"
                )
            key, value = bare_key, item
        if not key or not value:
            raise UsageError(f"{flag}: expected GPU=NAME, got {item!r}", field=flag)
        out[key] = value
    return out


@app.command()
def export(
    target: Annotated[ExportTarget, typer.Argument(help="kueue, slurm, volcano or skypilot.")],
    source: Annotated[
        Path, typer.Argument(help="PLAN.json (`gpuplan plan SCENARIO -o json`) or SCENARIO.yaml.")
    ],
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the files into this DIRECTORY (created if needed) "
            "instead of one stream on standard output.",
        ),
    ] = None,
    api: Annotated[KueueApi, typer.Option("--api", help="Kueue API version (v1beta1 for Kueue < 0.15).")] = "v1beta2",
    namespace: Annotated[
        list[str] | None, typer.Option("--namespace", "-n", help="Kueue LocalQueue namespace (repeatable).")
    ] = None,
    cpu_per_gpu: Annotated[
        str, typer.Option("--cpu-per-gpu", help="CPU per GPU in quotas and node lines (a quantity).")
    ] = "16",
    memory_per_gpu: Annotated[
        str, typer.Option("--memory-per-gpu", help="Memory per GPU in quotas and node lines (a quantity).")
    ] = "128Gi",
    gpu_resource: Annotated[
        list[str] | None,
        typer.Option(
            "--gpu-resource",
            help="Kubernetes GPU resource name: NAME, or GPU=NAME per pool "
            "(default by vendor: nvidia.com/gpu, huawei.com/Ascend910).",
        ),
    ] = None,
    autoscale: Annotated[
        bool,
        typer.Option("--autoscale", help="Kueue: ProvisioningRequest admission check on the elastic flavor."),
    ] = False,
    provisioning_class: Annotated[
        str, typer.Option("--provisioning-class", help="ProvisioningRequest class used with --autoscale.")
    ] = "check-capacity.autoscaling.x-k8s.io",
    name: Annotated[str, typer.Option("--name", help="Prefix of the object, queue and partition names.")] = (
        "gpuplan"
    ),
    leased_context: Annotated[
        str, typer.Option("--leased-context", help="SkyPilot: Kubernetes context of the leased cluster.")
    ] = "gpuplan-leased",
    elastic_context: Annotated[
        str, typer.Option("--elastic-context", help="SkyPilot: Kubernetes context of the elastic cluster.")
    ] = "gpuplan-elastic",
    accelerator: Annotated[
        list[str] | None,
        typer.Option("--accelerator", help="SkyPilot accelerator name, GPU=NAME (repeatable)."),
    ] = None,
    slurm_accounting: Annotated[
        bool,
        typer.Option("--slurm-accounting", help="Slurm: write AccountingStorageTRES=gres/gpu active (needs "
                     "slurmdbd; without it slurmctld refuses the line, so it is written commented)."),
    ] = False,
    generated_at: Annotated[
        str | None,
        typer.Option(
            "--generated-at",
            help="Time written in the headers (default: SOURCE_DATE_EPOCH, "
            "else the plan's generated_at, else now).",
        ),
    ] = None,
    catalog: CatalogOpt = None,
    lang: LangOpt = "en",  # type: ignore[assignment]
) -> None:
    """Write the plan as scheduler configuration: leased bare-metal first, elastic containers next."""
    from gpuplan import api as gpuplan_api
    from gpuplan.errors import UsageError
    from gpuplan.i18n import t

    lang_code = getattr(lang, "value", lang)
    result = gpuplan_api.export(
        target,
        source,
        api=api,
        name=name,
        namespaces=namespace or (),
        cpu_per_gpu=cpu_per_gpu,
        memory_per_gpu=memory_per_gpu,
        gpu_resources=_pairs(gpu_resource or [], "--gpu-resource", bare_key="*"),
        autoscale=autoscale,
        provisioning_class=provisioning_class,
        leased_context=leased_context,
        elastic_context=elastic_context,
        accelerators=_pairs(accelerator or [], "--accelerator"),
        slurm_accounting=slurm_accounting,
        generated_at=generated_at,
        catalog=catalog,
    )
    if output_dir is None:
        sys.stdout.write(result.stdout)
        return
    if output_dir.exists() and not output_dir.is_dir():
        raise UsageError(
            f"-o {output_dir}: exists and is not a directory",
            field="--output",
            hint="With export, -o names a directory to write the files into.",
        )
    if not output_dir.exists() and output_dir.suffix.lower() in FILE_SUFFIXES:
        raise UsageError(
            f"-o {output_dir}: looks like a file name, but export writes a directory of files",
            field="--output",
            hint=f"Give a directory (-o {output_dir.with_suffix('')}/), or write one stream without -o: "
            f"gpuplan export {target} {source} > {output_dir}",
        )
    output_dir.mkdir(parents=True, exist_ok=True)
    for f in result.files:
        path = output_dir / f.name
        path.write_text(f.text, encoding="utf-8")
        if f.text.startswith("#!"):  # the Slurm power-saving and prolog scripts slurmctld/slurmd run
            path.chmod(path.stat().st_mode | 0o111)
    typer.echo(
        t("export.wrote", lang_code, count=len(result.files), target=target, dir=str(output_dir))
    )
    for f in result.files:
        typer.echo(f"  {output_dir / f.name}")

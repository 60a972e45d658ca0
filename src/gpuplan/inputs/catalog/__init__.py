"""The bundled catalog: GPU specifications, reference offers and per-mode defaults, as data.

Files live in `catalog/data/*.yaml`, each entry with `source` and `as_of`. Users add their own
entries with `--catalog FILE` (or `GPUPLAN_CATALOG`): same format, their ids win.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from gpuplan.errors import CatalogError
from gpuplan.inputs.gpu_names import GpuNameError, NameIndex, Resolved
from gpuplan.lazy import yaml, yaml_load

# GPU-GPU link of a node: NVLink, Huawei HCCS, AMD Infinity Fabric (xGMI), Gaudi's on-chip RoCE ports
Interconnect = Literal["nvlink", "hccs", "infinity-fabric", "roce", "pcie", "none"]


class GpuSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    vendor: Literal["nvidia", "huawei", "amd", "intel", "other"]
    memory_gb: float = Field(gt=0)
    hbm_tbs: float = Field(gt=0)
    bf16_tflops: float = Field(gt=0)
    gpu_gpu_gbs: float = Field(ge=0)
    interconnect: Interconnect
    tdp_w: float | None = None
    estimate: bool = False
    match: tuple[str, ...] = ()
    source: str
    as_of: str


class Catalog(BaseModel):
    """GPUs by id, raw offer entries by id (validated when a scenario uses them), defaults."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    gpus: dict[str, GpuSpec]
    offers: dict[str, dict[str, Any]]
    defaults: dict[str, Any]
    files: tuple[str, ...]
    _names: NameIndex | None = PrivateAttr(default=None)

    def gpu(self, gpu_id: str) -> GpuSpec:
        return self.gpus[gpu_id]

    @property
    def names(self) -> NameIndex:
        """The alias table (gpuplan.inputs.gpu_names) over this catalog's ids, names and `match` strings."""
        if self._names is None:
            self._names = NameIndex({g.id: (g.name, *g.match) for g in self.gpus.values()})
        return self._names

    def resolve_gpu(self, name: str) -> Resolved:
        """The catalog id a GPU name stands for; GpuNameError (ambiguous or unknown) otherwise."""
        return self.names.resolve(name)

    def match_gpu(self, reported_name: str) -> GpuSpec | None:
        """The catalog GPU a driver-reported product name (nvidia-smi, npu-smi, rocm-smi, hl-smi) is."""
        hit = self.names.match_reported(reported_name)
        if hit is not None:
            return self.gpus[hit.id]
        # a user's catalog entry may list substrings of the names its drivers report
        best: tuple[int, GpuSpec] | None = None
        low = reported_name.lower()
        for spec in self.gpus.values():
            for pattern in spec.match:
                if pattern.lower() in low and (best is None or len(pattern) > best[0]):
                    best = (len(pattern), spec)
        return best[1] if best else None


def _read_yaml(path: Path | None, text: str, name: str) -> Any:
    try:
        return yaml_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise CatalogError(
            f"not valid YAML: {getattr(exc, 'problem', exc)}",
            file=path or name,
            line=(mark.line + 1) if mark else None,
            hint="check indentation and quoting near that line.",
        ) from None


def _bundled(name: str) -> str:
    return resources.files("gpuplan.inputs.catalog").joinpath("data", name).read_text(encoding="utf-8")


def _add_gpus(gpus: dict[str, GpuSpec], entries: Any, where: str) -> None:
    if entries is None:
        return
    if not isinstance(entries, list):
        raise CatalogError("`gpus` must be a list", file=where, field="gpus")
    for i, entry in enumerate(entries):
        try:
            spec = GpuSpec.model_validate(entry)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise CatalogError(
                err["msg"], file=where, field=f"gpus[{i}].{loc}",
                hint="each GPU needs id, name, vendor, memory_gb, hbm_tbs, bf16_tflops, gpu_gpu_gbs, "
                "interconnect, source and as_of.",
            ) from None
        gpus[spec.id] = spec


def _add_offers(offers: dict[str, dict[str, Any]], entries: Any, where: str) -> None:
    if entries is None:
        return
    if not isinstance(entries, list):
        raise CatalogError("`offers` must be a list", file=where, field="offers")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "id" not in entry:
            raise CatalogError("each offer must be a mapping with an `id`", file=where, field=f"offers[{i}]")
        for key in ("source", "as_of"):
            if key not in entry:
                raise CatalogError(
                    f"missing `{key}`", file=where, field=f"offers[{i}].{key}",
                    hint="every catalog offer says where its price comes from and when it was seen.",
                )
        offers[str(entry["id"])] = {**entry, "_catalog_file": where}


@lru_cache(maxsize=8)
def _load(extra: str | None) -> Catalog:
    gpus: dict[str, GpuSpec] = {}
    offers: dict[str, dict[str, Any]] = {}
    _add_gpus(gpus, _read_yaml(None, _bundled("gpus.yaml"), "catalog/gpus.yaml")["gpus"], "catalog/gpus.yaml")
    _add_offers(offers, _read_yaml(None, _bundled("offers.yaml"), "catalog/offers.yaml")["offers"],
                "catalog/offers.yaml")
    defaults = _read_yaml(None, _bundled("defaults.yaml"), "catalog/defaults.yaml")
    files = ["bundled"]
    if extra:
        path = Path(extra)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CatalogError(f"cannot read catalog file: {exc.strerror}", file=path,
                               hint="check the path given to --catalog or GPUPLAN_CATALOG.") from None
        data = _read_yaml(path, text, str(path)) or {}
        if not isinstance(data, dict):
            raise CatalogError("a catalog file is a mapping with `gpus:` and/or `offers:`", file=path)
        unknown = set(data) - {"version", "gpus", "offers"}
        if unknown:
            raise CatalogError(f"unknown top-level keys: {', '.join(sorted(unknown))}", file=path,
                               hint="a catalog file has `version`, `gpus` and `offers`.")
        _add_gpus(gpus, data.get("gpus"), str(path))
        _add_offers(offers, data.get("offers"), str(path))
        files.append(str(path))
    return Catalog(gpus=gpus, offers=offers, defaults=defaults, files=tuple(files))


def load_catalog(extra: str | Path | None = None) -> Catalog:
    """The bundled catalog, plus the entries of `extra` (a user's file) when given."""
    return _load(str(extra) if extra else None)


__all__ = ["Catalog", "GpuNameError", "GpuSpec", "Resolved", "load_catalog"]

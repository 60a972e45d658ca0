"""GPU names as people write them -> one catalog id: the one alias table.

Every place that takes a GPU (a scenario's `gpu:`, `--gpu` flags, catalog files, telemetry and probe
product names, exporters) resolves it here. A name is compared as a set of tokens: case, spaces,
dashes, underscores and slashes do not matter, nor does word order; vendor words (NVIDIA, GeForce,
Tesla, AMD, Instinct, Intel, Habana, Huawei) are dropped; `80G` reads as `80GB`, `SXM4`/`SXM5` as `SXM`,
and `Ascend910B`, `RTX4090`, `Gaudi3`, `HL-225` split into their family word and model.

The table holds, per catalog id: the names drivers report (nvidia-smi/NVML, npu-smi, rocm-smi,
hl-smi), Kubernetes GPU feature discovery's `nvidia.com/gpu.product` (the NVML name with dashes),
SkyPilot's accelerator name, and the short names people write. A family name that does not say the
form factor (`H100`) resolves to the usual part and the resolution says what it assumed. A name that
several entries share (`A100`: 40 or 80 GB, SXM or PCIe) is an error listing the choices; an unknown
name gets the closest matches (difflib).

Aliases marked `guess` in GUESSED are not confirmed by a primary source (a driver log or the
project's documentation); they are listed so that the closing notes of issue 12 can name them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

VENDOR_WORDS = frozenset({"nvidia", "geforce", "tesla", "amd", "instinct", "intel", "habana", "huawei"})
_SPLIT = re.compile(r"[^a-z0-9]+")
_FAMILY = re.compile(r"^(ascend|rtx|gaudi|hl)(\d.*)$")


def tokens(name: str) -> tuple[str, ...]:
    """The comparable words of a GPU name, in order (vendor words dropped)."""
    out: list[str] = []
    for part in _SPLIT.split(name.lower()):
        if not part or part in VENDOR_WORDS:
            continue
        m = _FAMILY.match(part)
        if m:
            out += [m.group(1), m.group(2)]
            continue
        part = re.sub(r"^(\d+)(g|gib)$", r"\1gb", part)
        part = re.sub(r"^sxm\d$", "sxm", part)
        out.append(part)
    return tuple(out)


def name_key(name: str) -> str:
    """Order-free key: two names with the same key are the same name."""
    return " ".join(sorted(tokens(name)))


@dataclass(frozen=True)
class Entry:
    """One catalog id and the names it goes by."""

    id: str
    aliases: tuple[str, ...] = ()
    smi: str | None = None          # the product name the vendor's tool reports (nvidia-smi, rocm-smi, ...)
    skypilot: str | None = None     # SkyPilot's accelerator name
    assumed: Mapping[str, str] = field(default_factory=dict)  # alias -> what it assumes

    @property
    def k8s(self) -> str | None:
        """Kubernetes GPU feature discovery's `nvidia.com/gpu.product` (NVML name, spaces -> dashes)."""
        if self.smi is None or not self.smi.startswith(("NVIDIA", "Tesla")):
            return None
        return self.smi.replace(" ", "-")


_H100_FORM = "the SXM5 80GB part (the name does not say the form factor; H100 PCIe: h100-pcie, H100 NVL: h100-nvl)"
_H200_FORM = "the SXM 141GB part (the name does not say the form factor; H200 NVL: h200-nvl)"

TABLE: tuple[Entry, ...] = (
    # --- NVIDIA data centre ---------------------------------------------------------------------
    Entry("v100-16g", ("V100 SXM2 16GB", "V100-16GB", "V100 16GB"), "Tesla V100-SXM2-16GB", "V100"),
    Entry("v100-32g", ("V100 SXM2 32GB", "V100-32GB", "V100 32GB"), "Tesla V100-SXM2-32GB", "V100-32GB"),
    Entry("t4", ("T4", "T4 16GB"), "Tesla T4", "T4"),
    Entry("a10", ("A10", "A10 24GB", "A10 PCIe"), "NVIDIA A10", "A10"),
    Entry("a10g", ("A10G",), "NVIDIA A10G", "A10G"),
    Entry("a30", ("A30", "A30 24GB"), "NVIDIA A30", "A30"),
    Entry("a40", ("A40", "A40 48GB"), "NVIDIA A40", "A40"),
    Entry("a100-40g", ("A100-SXM4-40GB", "A100 40GB SXM", "A100 SXM 40GB", "A100-40GB"), "NVIDIA A100-SXM4-40GB",
          "A100"),
    Entry("a100-80g", ("A100-SXM4-80GB", "A100 80GB SXM", "A100-80GB", "A100 80GB"), "NVIDIA A100-SXM4-80GB",
          "A100-80GB", {"A100-80GB": "the SXM4 part (the name does not say the form factor; PCIe: a100-pcie-80g)",
                        "A100 80GB": "the SXM4 part (the name does not say the form factor; PCIe: a100-pcie-80g)"}),
    Entry("a100-pcie-40g", ("A100-PCIE-40GB", "A100 PCIe 40GB"), "NVIDIA A100-PCIE-40GB", "A100"),
    Entry("a100-pcie-80g", ("A100 80GB PCIe", "A100-PCIE-80GB"), "NVIDIA A100 80GB PCIe", "A100-80GB"),
    Entry("a800-80g", ("A800", "A800-SXM4-80GB", "A800 80GB", "A800 SXM"), "NVIDIA A800-SXM4-80GB", "A800",
          {"A800": "the SXM4 80GB part (the name does not say the form factor)"}),
    Entry("h100-sxm", ("H100", "H100 SXM", "H100 SXM5", "H100 80GB HBM3", "H100 SXM5 80GB", "H100-80GB"),
          "NVIDIA H100 80GB HBM3", "H100",
          {"H100": _H100_FORM, "H100-80GB": _H100_FORM,
           "H100 80GB HBM3": "the SXM5 part (nvidia-smi's name for it; HBM3 is only on the SXM5 H100)"}),
    Entry("h100-pcie", ("H100 PCIe", "H100-PCIE-80GB", "H100 PCIe 80GB"), "NVIDIA H100 PCIe", "H100-PCIe"),
    Entry("h100-nvl", ("H100 NVL", "H100-NVL", "H100NVL", "H100 NVL 94GB"), "NVIDIA H100 NVL", "H100-NVL"),
    Entry("h800-sxm", ("H800", "H800 SXM", "H800 80GB HBM3", "H800 SXM5"), "NVIDIA H800", "H800",
          {"H800": "the SXM5 80GB part (the name does not say the form factor)"}),
    Entry("h200-sxm", ("H200", "H200 SXM", "H200 141GB", "H200 SXM 141GB"), "NVIDIA H200", "H200",
          {"H200": _H200_FORM, "H200 141GB": _H200_FORM}),
    Entry("h200-nvl", ("H200 NVL", "H200NVL"), "NVIDIA H200 NVL", "H200-NVL"),
    Entry("h20", ("H20", "H20 96GB"), "NVIDIA H20", "H20"),
    Entry("gh200", ("GH200", "GH200 480GB", "GH200 96GB"), "NVIDIA GH200 480GB", "GH200"),
    Entry("b200", ("B200", "B200 180GB", "HGX B200", "DGX B200"), "NVIDIA B200", "B200"),
    Entry("b300", ("B300", "B300 288GB", "HGX B300", "DGX B300", "B300 SXM6 AC"), "NVIDIA B300 SXM6 AC", "B300"),
    Entry("gb200", ("GB200", "GB200 NVL72"), "NVIDIA GB200", "GB200"),
    Entry("gb300", ("GB300", "GB300 NVL72"), "NVIDIA GB300", "GB300"),
    Entry("l4", ("L4", "L4 24GB"), "NVIDIA L4", "L4"),
    Entry("l20", ("L20", "L20 48GB"), "NVIDIA L20", "L20"),
    Entry("l40", ("L40", "L40 48GB"), "NVIDIA L40", "L40"),
    Entry("l40s", ("L40S", "L40S 48GB"), "NVIDIA L40S", "L40S"),
    # --- NVIDIA workstation and consumer ---------------------------------------------------------
    Entry("rtx-a6000", ("RTX A6000", "A6000", "RTXA6000"), "NVIDIA RTX A6000", "RTXA6000"),
    Entry("rtx-6000-ada", ("RTX 6000 Ada", "RTX 6000 Ada Generation", "6000 Ada", "RTX6000-Ada", "RTX6000Ada"),
          "NVIDIA RTX 6000 Ada Generation", "RTX6000-Ada"),
    Entry("rtx-pro-6000", ("RTX PRO 6000", "RTX PRO 6000 Blackwell", "RTXPRO6000",
                           "RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell Workstation Edition"),
          "NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTXPRO6000"),
    Entry("rtx-3090", ("RTX 3090", "3090", "RTX3090"), "NVIDIA GeForce RTX 3090", "RTX3090"),
    Entry("rtx-4090", ("RTX 4090", "4090", "RTX4090"), "NVIDIA GeForce RTX 4090", "RTX4090"),
    Entry("rtx-5090", ("RTX 5090", "5090", "RTX5090"), "NVIDIA GeForce RTX 5090", "RTX5090"),
    # --- AMD Instinct (rocm-smi product names) ---------------------------------------------------
    Entry("mi210", ("MI210",), "AMD Instinct MI210", "MI210"),
    Entry("mi250", ("MI250",), "AMD Instinct MI250", "MI250"),
    Entry("mi250x", ("MI250X",), "AMD Instinct MI250X", "MI250X"),
    Entry("mi300a", ("MI300A",), "AMD Instinct MI300A", "MI300A"),
    Entry("mi300x", ("MI300X", "MI300X OAM"), "AMD Instinct MI300X", "MI300X"),
    Entry("mi325x", ("MI325X", "MI325X OAM"), "AMD Instinct MI325X", "MI325X"),
    Entry("mi350x", ("MI350X",), "AMD Instinct MI350X", "MI350X"),
    Entry("mi355x", ("MI355X",), "AMD Instinct MI355X", "MI355X"),
    # --- Intel Gaudi (hl-smi product names) ------------------------------------------------------
    Entry("gaudi2", ("Gaudi 2", "Gaudi2", "HL-225", "HL-225H", "HL-225B", "Habana Gaudi2"), "HL-225", "Gaudi2"),
    Entry("gaudi3", ("Gaudi 3", "Gaudi3", "HL-325", "HL-325L", "HL-328", "HL-338"), "HL-325L", "Gaudi3"),
    # --- Huawei Ascend (npu-smi chip names) ------------------------------------------------------
    Entry("ascend-910b", ("910B", "Ascend 910B", "Ascend910B", "910B1", "910B2", "910B3", "Ascend910B1",
                          "Ascend910B2", "Ascend910B3", "Ascend 910B3"), "910B3", "Ascend910B",
          {"910B1": "910B1 (catalog figures are the 910B family's)", "910B2": "910B2 (catalog figures are the "
           "910B family's)"}),
    Entry("ascend-910c", ("910C", "Ascend 910C", "Ascend910C"), "Ascend910C", "Ascend910C"),
)

# Names several entries share: an error listing the choices, never a silent pick.
AMBIGUOUS: dict[str, tuple[str, ...]] = {
    "A100": ("a100-40g", "a100-80g", "a100-pcie-40g", "a100-pcie-80g"),
    "A100 SXM": ("a100-40g", "a100-80g"),
    "A100 PCIe": ("a100-pcie-40g", "a100-pcie-80g"),
    "V100": ("v100-16g", "v100-32g"),
    "V100 SXM2": ("v100-16g", "v100-32g"),
    "Ascend 910": ("ascend-910b", "ascend-910c"),
    "Gaudi": ("gaudi2", "gaudi3"),
    "RTX 6000": ("rtx-a6000", "rtx-6000-ada", "rtx-pro-6000"),
}

# Aliases no primary source in this project confirms (driver logs, vendor docs): guesses to revisit.
GUESSED = frozenset({
    "NVIDIA B300 SXM6 AC", "NVIDIA GB200", "NVIDIA GB300", "Ascend910C", "HL-328", "HL-338", "H100-PCIe",
    "H100-NVL", "H200-NVL", "RTXPRO6000", "Gaudi2", "Gaudi3", "MI350X", "MI355X", "MI325X", "MI300A",
})

BY_ID: dict[str, Entry] = {e.id: e for e in TABLE}


@dataclass(frozen=True)
class Resolved:
    """What a name resolved to: the catalog id, the alias that matched, and any assumption made."""

    id: str
    alias: str
    assumed: str | None = None

    @property
    def note(self) -> str | None:
        return f"`{self.alias}` read as {self.id}: {self.assumed}" if self.assumed else None


class GpuNameError(ValueError):
    """An unknown or ambiguous GPU name; `hint` says what to write instead."""

    def __init__(self, message: str, hint: str, choices: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.choices = choices


class NameIndex:
    """The alias table (plus a catalog's own ids, names and `match` strings) as a lookup."""

    def __init__(self, known: Mapping[str, Iterable[str]] | None = None) -> None:
        """`known`: catalog id -> extra names (its display name, `match` strings). When given,
        only ids in it resolve (the table's other ids are left out)."""
        self._exact: dict[str, dict[str, tuple[str, str | None]]] = {}  # key -> id -> (alias, assumed)
        self._seen: dict[str, Resolved] = {}  # names resolved before: a server parses the same few per request
        self.ids: set[str] = set(known) if known is not None else set(BY_ID)

        def add(gpu_id: str, alias: str, assumed: str | None = None) -> None:
            if gpu_id not in self.ids:
                return
            slot = self._exact.setdefault(name_key(alias), {})
            slot.setdefault(gpu_id, (alias, assumed))

        for e in TABLE:
            for alias in (*e.aliases, *((e.smi,) if e.smi else ()), *((e.k8s,) if e.k8s else ())):
                add(e.id, alias, e.assumed.get(alias))
        for gpu_id in sorted(self.ids):
            add(gpu_id, gpu_id)
        for gpu_id, extra in (known or {}).items():
            for alias in extra:
                add(gpu_id, alias)
        self._ambiguous = {name_key(n): (n, tuple(i for i in ids if i in self.ids))
                           for n, ids in AMBIGUOUS.items()}

    def resolve(self, name: str) -> Resolved:
        """The one id `name` stands for, or GpuNameError (ambiguous: the choices; unknown: the closest)."""
        hit = self._seen.get(name) if isinstance(name, str) else None
        if hit is None:
            hit = self._resolve(name)
            if isinstance(name, str) and len(self._seen) < 4096:
                self._seen[name] = hit
        return hit

    def _resolve(self, name: str) -> Resolved:
        key = name_key(str(name))
        if not key:
            raise GpuNameError("an empty GPU name", "write a GPU such as H100 or ascend-910b "
                               "(`gpuplan catalog gpus` lists them).")
        amb = self._ambiguous.get(key)
        if amb and len(amb[1]) > 1:
            raise self._ambiguous_error(name, amb[1])
        hits = self._exact.get(key, {})
        if len(hits) == 1:
            ((gpu_id, (alias, assumed)),) = hits.items()
            return Resolved(gpu_id, alias, assumed)
        if len(hits) > 1:
            raise self._ambiguous_error(name, tuple(sorted(hits)))
        if amb and amb[1]:
            return Resolved(amb[1][0], amb[0])
        raise self._unknown_error(name)

    def match_reported(self, reported: str) -> Resolved | None:
        """A driver-reported product name: exact first, else the entry whose longest alias's words all
        appear in it (`AMD Instinct MI300X OAM AC`); None when nothing or several entries fit."""
        try:
            return self.resolve(reported)
        except GpuNameError:
            pass
        have = set(tokens(reported))
        if not have:
            return None
        best: dict[str, tuple[int, str, str | None]] = {}
        for key, hits in self._exact.items():
            words = key.split(" ")
            if words and set(words) <= have:
                for gpu_id, (alias, assumed) in hits.items():
                    if gpu_id not in best or len(words) > best[gpu_id][0]:
                        best[gpu_id] = (len(words), alias, assumed)
        if not best:
            return None
        top = max(v[0] for v in best.values())
        winners = [(i, v) for i, v in best.items() if v[0] == top]
        if len(winners) != 1:
            return None
        gpu_id, (_, alias, assumed) = winners[0]
        return Resolved(gpu_id, alias, assumed)

    def _describe(self, gpu_id: str) -> str:
        e = BY_ID.get(gpu_id)
        return f"{gpu_id} ({e.smi})" if e and e.smi else gpu_id

    def _ambiguous_error(self, name: str, choices: tuple[str, ...]) -> GpuNameError:
        listed = ", ".join(self._describe(c) for c in choices)
        return GpuNameError(f"GPU name `{name}` is ambiguous: it may be {listed}",
                            f"write one of: {', '.join(choices)}.", choices)

    def _unknown_error(self, name: str) -> GpuNameError:
        compact = "".join(tokens(str(name)))
        candidates: dict[str, str] = {}
        for hits in self._exact.values():
            for gpu_id, (alias, _) in hits.items():
                candidates.setdefault("".join(tokens(alias)), gpu_id)
        close = difflib.get_close_matches(compact, list(candidates), n=8, cutoff=0.6)
        ids: list[str] = []
        for c in close:
            if candidates[c] not in ids:
                ids.append(candidates[c])
        if ids:
            return GpuNameError(f"unknown GPU `{name}`", f"did you mean {', '.join(ids[:4])}? "
                                "(`gpuplan catalog gpus` lists them; add your own with --catalog FILE)",
                                tuple(ids[:4]))
        return GpuNameError(f"unknown GPU `{name}`", "`gpuplan catalog gpus` lists the known GPUs; "
                            "add your own with --catalog FILE.")


_DEFAULT: NameIndex | None = None


def default_index() -> NameIndex:
    """The table alone (the bundled catalog's ids)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = NameIndex()
    return _DEFAULT


def resolve(name: str) -> Resolved:
    """Resolve against the table alone; `Catalog.resolve_gpu` also knows a user's catalog entries."""
    return default_index().resolve(name)


def skypilot_name(gpu_id: str) -> str | None:
    """SkyPilot's accelerator name for a catalog id (`H100`, `A100-80GB`), None when it has none."""
    e = BY_ID.get(gpu_id)
    return e.skypilot if e else None


def k8s_product(gpu_id: str) -> str | None:
    """The `nvidia.com/gpu.product` label GPU feature discovery sets (`NVIDIA-H100-80GB-HBM3`); NVIDIA only."""
    e = BY_ID.get(gpu_id)
    return e.k8s if e else None


def smi_name(gpu_id: str) -> str | None:
    """The product name the vendor's tool reports (nvidia-smi, rocm-smi, hl-smi, npu-smi)."""
    e = BY_ID.get(gpu_id)
    return e.smi if e else None


__all__ = [
    "AMBIGUOUS", "BY_ID", "GUESSED", "TABLE", "Entry", "GpuNameError", "NameIndex", "Resolved", "default_index",
    "k8s_product", "name_key", "resolve", "skypilot_name", "smi_name", "tokens",
]

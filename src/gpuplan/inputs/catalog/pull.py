"""`gpuplan catalog pull`: current public cloud offers, through the gpuhunt library, as a catalog file.

gpuhunt (https://github.com/dstackai/gpuhunt) publishes one CSV per provider (aws, azure, gcp,
lambdalabs, runpod, nebius, oci, verda, cloudrift) with each instance type's USD price per hour in
each location; `GPUHUNT_CATALOG_DIR` makes it read `<provider>.csv` files from a folder instead of
downloading them (`GPUHUNT_CATALOG_URL` points it at another mirror). Each instance type becomes
one offer: the price per GPU-hour (instance price / GPU count), a [low, high] range over the
locations it is sold in, `source: gpuhunt:<provider> ...` and `as_of` = the time of the pull. The GPU
name gpuhunt reports goes through the alias table (gpuplan.inputs.gpu_names); instance types whose
GPU the catalog does not know (TPUs, small workstation cards) are left out and counted.

Cloud VMs are written as `mode: vm` (hourly, so billed like containers; behaving like VMs), whole
8-GPU machines with `tenancy: dedicated`, smaller ones `shared-node`; RunPod's pods as `mode: container`.
Spot instance types are written `capacity: spot` with the catalog's default `preemption:` for their
provider (`spot.providers` in defaults.yaml: rate, notice, max lifetime, with its source), so that
compare prices the work reclaims throw away instead of treating spot as a cheaper on-demand offer.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuplan.errors import CatalogError, UsageError
from gpuplan.inputs.gpu_names import GpuNameError

if TYPE_CHECKING:
    from gpuplan.inputs.catalog import Catalog

# the providers gpuhunt publishes as offline catalogs (gpuhunt._internal.catalog.OFFLINE_PROVIDERS)
PROVIDERS = ("aws", "azure", "gcp", "lambdalabs", "nebius", "oci", "runpod", "verda", "cloudrift")
# providers whose offers are containers (pods) rather than virtual machines
CONTAINER_PROVIDERS = frozenset({"runpod"})


@dataclass
class _Group:
    provider: str
    instance: str
    gpu: str
    gpu_count: int
    spot: bool
    low: float
    high: float
    locations: set[str]
    assumed: str | None


@contextmanager
def _quiet_gpuhunt() -> Iterator[None]:
    """gpuhunt logs every provider it fails to download with a traceback: the error we raise says it once."""
    log = logging.getLogger("gpuhunt")
    old = (log.level, log.propagate)
    log.setLevel(logging.CRITICAL + 1)
    log.propagate = False
    try:
        yield
    finally:
        log.setLevel(old[0])
        log.propagate = old[1]


def _items(providers: Sequence[str], spot: bool | None) -> list[Any]:
    try:
        import gpuhunt
    except ImportError:
        raise UsageError("`gpuplan catalog pull` needs the gpuhunt library",
                         hint="install it with: pip install 'gpuplan[pull]' (or pip install gpuhunt).") from None
    local = os.environ.get("GPUHUNT_CATALOG_DIR")
    chosen = list(providers)
    if local is not None:
        folder = Path(local)
        if not folder.is_dir():
            raise CatalogError(f"GPUHUNT_CATALOG_DIR is not a folder: {local}",
                               hint="point it at a folder of <provider>.csv files in gpuhunt's format, or unset it.")
        present = [p for p in PROVIDERS if (folder / f"{p}.csv").is_file()]
        missing = [p for p in chosen if p not in present]
        if missing:
            raise CatalogError(f"no {missing[0]}.csv in GPUHUNT_CATALOG_DIR ({local})", field="--provider",
                               hint=f"the folder has: {', '.join(present) or 'no provider files'}.")
        chosen = chosen or present
    else:
        chosen = chosen or list(PROVIDERS)
    cat = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
    with _quiet_gpuhunt():
        if local is None:
            try:
                cat.load()
            except Exception as exc:  # urllib's URLError, gpuhunt's GPUHuntError, a broken zip, ...
                cause = exc.__cause__ or exc
                raise CatalogError(
                    f"cannot download gpuhunt's price catalog: {getattr(cause, 'reason', None) or cause}",
                    hint="check the network (gpuhunt reads dstack-gpu-pricing.s3.eu-west-1.amazonaws.com, or "
                    "GPUHUNT_CATALOG_URL), or set GPUHUNT_CATALOG_DIR to a folder of <provider>.csv files.",
                ) from None
        items: list[Any] = []
        for p in chosen:
            try:
                items += cat.query(provider=p, spot=spot, min_gpu_count=1)
            except (OSError, ValueError) as exc:
                raise CatalogError(f"gpuhunt could not read the {p} catalog: {exc}", field="--provider") from None
    return items


def _gpu_id(cat: Catalog, name: str | None, memory: float | None) -> tuple[str, str | None] | None:
    if not name:
        return None
    tries = [f"{name} {round(memory)}GB", name] if memory else [name]
    for t in tries:
        try:
            hit = cat.resolve_gpu(t)
        except GpuNameError:
            continue
        return hit.id, hit.assumed
    return None


def _spot_default(cat: Catalog, provider: str) -> dict[str, Any]:
    """The catalog's default `preemption:` for a provider's spot offers (the generic one if it has none)."""
    spot = cat.defaults["spot"]
    name = provider.lower() if provider.lower() in spot["providers"] else str(spot["default"])
    d = spot["providers"][name]
    out: dict[str, Any] = {"rate": d["rate"], "per": d["per"]}
    for key in ("notice", "max_lifetime"):
        if d.get(key) is not None:
            out[key] = str(d[key])
    out["source"] = f"catalog default for {name} spot: " + " ".join(str(d.get("source", "")).split())
    out["as_of"] = str(d.get("as_of"))
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def pull_offers(
    cat: Catalog,
    *,
    gpus: Sequence[str] = (),
    providers: Sequence[str] = (),
    spot: bool | None = None,
    now: datetime | None = None,
) -> tuple[str, int]:
    """The catalog file's text (YAML) and how many offers it holds."""
    import yaml

    for p in providers:
        if p.lower() not in PROVIDERS:
            raise UsageError(f"unknown provider `{p}`", field="--provider",
                             hint=f"gpuhunt's published catalogs: {', '.join(PROVIDERS)}.")
    items = _items([p.lower() for p in providers], spot)
    when = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    groups: dict[tuple[str, str, bool], _Group] = {}
    unknown: dict[str, int] = {}
    for it in items:
        if not it.gpu_count or it.price is None or it.price <= 0:
            continue
        hit = _gpu_id(cat, it.gpu_name, it.gpu_memory)
        if hit is None:
            unknown[str(it.gpu_name)] = unknown.get(str(it.gpu_name), 0) + 1
            continue
        gpu_id, assumed = hit
        if gpus and gpu_id not in gpus:
            continue
        per_gpu = float(it.price) / int(it.gpu_count)
        key = (it.provider, it.instance_name, bool(it.spot))
        g = groups.get(key)
        if g is None:
            groups[key] = _Group(it.provider, it.instance_name, gpu_id, int(it.gpu_count), bool(it.spot),
                                 per_gpu, per_gpu, {it.location}, assumed)
        else:
            g.low, g.high = min(g.low, per_gpu), max(g.high, per_gpu)
            g.locations.add(it.location)
    offers: list[dict[str, Any]] = []
    seen: set[str] = set()
    for g in sorted(groups.values(), key=lambda g: (g.gpu, g.low, g.provider, g.instance, g.spot)):
        oid = _slug(f"{g.provider}-{g.instance}" + ("-spot" if g.spot else ""))
        base, n = oid, 2
        while oid in seen:
            oid, n = f"{base}-{n}", n + 1
        seen.add(oid)
        amount: float | list[float] = round(g.low, 4) if g.low == g.high else [round(g.low, 4), round(g.high, 4)]
        kind = "container" if g.provider in CONTAINER_PROVIDERS else "VM"
        where = sorted(g.locations)
        src = (f"gpuhunt:{g.provider} {g.instance} ({kind}, {g.gpu_count} GPU, "
               f"{'spot' if g.spot else 'on-demand'}) in {len(where)} location{'s' if len(where) != 1 else ''}: "
               f"{', '.join(where[:4])}{', ...' if len(where) > 4 else ''}")
        if g.assumed:
            src += f"; GPU read as {g.gpu}: {g.assumed}"
        offer: dict[str, Any] = {"id": oid, "provider": g.provider, "gpu": g.gpu}
        if kind == "VM":
            offer.update(mode="vm", tenancy="dedicated" if g.gpu_count >= 8 else "shared-node")
        else:
            offer["mode"] = "container"
        offer.update(currency="USD", price={"amount": amount, "per": "gpu-hour"}, gpus_per_node=g.gpu_count,
                     source=src, as_of=when)
        if g.spot:
            offer.update(capacity="spot", preemption=_spot_default(cat, g.provider))
        offers.append(offer)
    head = [
        f"# Cloud offers pulled with gpuhunt at {when}: {len(offers)} offers "
        f"({', '.join(sorted({o['provider'] for o in offers})) or 'none'}).",
        "# Prices are USD per GPU-hour (instance price / GPUs), [low, high] over the locations listed.",
        "# Cloud VMs are mode vm (hourly: billed like containers), whole 8-GPU machines tenancy dedicated;",
        "# pods are mode container.",
        "# Use with: gpuplan compare SCENARIO --catalog THIS_FILE (offers: - use: <id>).",
    ]
    if unknown:
        left = ", ".join(f"{k} ({v})" for k, v in sorted(unknown.items()))
        head.append(f"# Left out (GPU not in the catalog): {left}")
    body = yaml.safe_dump({"version": 1, "offers": offers}, sort_keys=False, allow_unicode=True, width=120)
    return "\n".join(head) + "\n" + body, len(offers)


__all__ = ["PROVIDERS", "pull_offers"]

"""Unit prices a pool or a telemetry audit needs, taken from a scenario's offers.

    lease_per_gpu_hour      = the bare-metal offer's price per GPU-hour (node prices / gpus_per_node)
    ops_per_gpu_hour        = ops hours per (node|gpu|)-month x engineer_hour_cost / (GPUs covered x hours a month)
    container_per_gpu_hour  = the container offer's price per GPU-hour
    container_slowdown      = perf slowdown of a single-node job of one GPU on the container offer
                              (the price of a unit of dedicated work there is price x slowdown)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import GpuplanError
from gpuplan.models import Offer, Scenario, Workload
from gpuplan.perf import slowdown
from gpuplan.scenario import load_scenario


@dataclass(frozen=True)
class PoolPrices:
    gpu: str
    currency: str
    offer_bare_metal: str | None
    offer_container: str | None
    lease_per_gpu_hour: float
    lease_low: float
    lease_high: float
    ops_per_gpu_hour: float
    container_per_gpu_hour: float
    container_low: float
    container_high: float
    container_slowdown: float
    gpus_per_node: int
    lease_unit: str
    min_term_hours: float


def ops_per_gpu_hour(offer: Offer, scenario: Scenario) -> float:
    eng = scenario.team.engineer_hour_cost or 0.0
    hours_per_month = 24 * scenario.days_per_month
    per_unit = offer.ops_hours * eng / hours_per_month
    return {"node-month": per_unit / offer.gpus_per_node, "gpu-month": per_unit, "month": 0.0}[offer.ops_per]


def _probe_workload(gpu: str) -> Workload:
    return Workload(id="_unit", kind="experiment", gpus_allowed=(gpu,), gpus=1, hours_per_day=1.0, days_per_week=7,
                    duration_hours=24.0, utilization=1.0, communication=0.0, requires=frozenset())


def cheapest(scenario: Scenario, gpu: str, mode: str) -> Offer | None:
    offers = [o for o in scenario.offers if o.gpu == gpu and o.mode == mode]
    return min(offers, key=lambda o: (o.price_per_gpu_hour.mid, o.id)) if offers else None


def pool_prices(scenario: Scenario, gpu: str | None = None, catalog: Catalog | None = None,
                workload: Workload | None = None) -> PoolPrices:
    """Prices of the cheapest bare-metal and container offers for `gpu` (the only GPU when None)."""
    cat = catalog or load_catalog()
    gpus = sorted({o.gpu for o in scenario.offers})
    if gpu is None:
        if len(gpus) != 1:
            raise GpuplanError("the scenario offers several GPUs; say which", field="gpu",
                               hint=f"GPUs offered: {', '.join(gpus)}")
        gpu = gpus[0]
    bm = cheapest(scenario, gpu, "bare-metal")
    ct = cheapest(scenario, gpu, "container")
    if bm is None and ct is None:
        raise GpuplanError(f"no offer for GPU `{gpu}`", field="offers", hint=f"GPUs offered: {', '.join(gpus)}")
    nan = float("nan")
    sd = slowdown(workload or _probe_workload(gpu), ct, cat).total if ct else nan
    return PoolPrices(
        gpu=gpu,
        currency=scenario.currency,
        offer_bare_metal=bm.id if bm else None,
        offer_container=ct.id if ct else None,
        lease_per_gpu_hour=bm.price_per_gpu_hour.mid if bm else nan,
        lease_low=bm.price_per_gpu_hour.low if bm else nan,
        lease_high=bm.price_per_gpu_hour.high if bm else nan,
        ops_per_gpu_hour=ops_per_gpu_hour(bm, scenario) if bm else 0.0,
        container_per_gpu_hour=ct.price_per_gpu_hour.mid if ct else nan,
        container_low=ct.price_per_gpu_hour.low if ct else nan,
        container_high=ct.price_per_gpu_hour.high if ct else nan,
        container_slowdown=sd,
        gpus_per_node=bm.gpus_per_node if bm else (ct.gpus_per_node if ct else 8),
        lease_unit=bm.lease_unit if bm else "gpu",
        min_term_hours=bm.min_term_hours if bm else 0.0,
    )


@dataclass(frozen=True)
class OfferPrice:
    offer: str
    per_gpu_hour: float
    low: float
    high: float
    currency: str
    mode: str
    gpu: str


def offer_price(offer_id: str, scenario_path: str | Path | None = None,
                catalog_path: str | Path | None = None) -> OfferPrice:
    """The per-GPU-hour price of an offer from a scenario or, without one, from the catalog."""
    cat = load_catalog(catalog_path)
    if scenario_path is not None:
        scen = load_scenario(scenario_path, cat)
        try:
            o = scen.offer(offer_id)
        except KeyError:
            raise GpuplanError(f"no offer `{offer_id}` in the scenario", file=scenario_path, field="--offer",
                               hint=f"offers: {', '.join(x.id for x in scen.offers)}") from None
        return OfferPrice(o.id, o.price_per_gpu_hour.mid, o.price_per_gpu_hour.low, o.price_per_gpu_hour.high,
                          scen.currency, o.mode, o.gpu)
    if offer_id not in cat.offers:
        raise GpuplanError(f"no catalog offer `{offer_id}`", field="--offer",
                           hint="`gpuplan catalog offers` lists them, or pass --scenario with your own offers.")
    from gpuplan.scenario import _Locator, build_scenario

    entry = cat.offers[offer_id]
    currency = entry.get("currency", "USD")
    scen = build_scenario({"version": 1, "currency": currency, "offers": [{"use": offer_id}],
                           "workloads": [{"id": "x", "kind": "experiment", "gpu": entry["gpu"], "gpus": 1,
                                          "hours_per_day": 1, "duration": "1d"}]},
                          _Locator("<catalog>"), cat)
    o = scen.offers[0]
    return OfferPrice(o.id, o.price_per_gpu_hour.mid, o.price_per_gpu_hour.low, o.price_per_gpu_hour.high,
                      currency, o.mode, o.gpu)


__all__ = ["OfferPrice", "PoolPrices", "cheapest", "offer_price", "ops_per_gpu_hour", "pool_prices",
           "load_scenario"]

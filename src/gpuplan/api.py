"""The one orchestrator: files -> models -> engines -> results. Interfaces (CLI, web, export) call these."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplan.advise import WorkloadAdvice, advise
from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import GpuplanError
from gpuplan.models import Overhead, Scenario
from gpuplan.scenario import load_scenario, scenario_from_text


@dataclass(frozen=True)
class CompareResult:
    scenario: Scenario
    catalog: Catalog
    advice: list[WorkloadAdvice]


def apply_measured(scenario: Scenario, overhead: dict[str, Any], offer_id: str | None) -> Scenario:
    """Replace one offer's overheads with measured ones (from `gpuplan probe -o json`).

    Without `offer_id` the scenario must have exactly one offer the measurement can apply to.
    """
    ids = [o.id for o in scenario.offers]
    if offer_id is None:
        if len(ids) != 1:
            raise GpuplanError("--measured needs --measured-offer ID when the scenario has several offers",
                               field="--measured-offer", hint=f"offers: {', '.join(ids)}")
        offer_id = ids[0]
    if offer_id not in ids:
        raise GpuplanError(f"no offer `{offer_id}` in the scenario", field="--measured-offer",
                           hint=f"offers: {', '.join(ids)}")
    offers = []
    for o in scenario.offers:
        if o.id == offer_id:
            jit = overhead.get("jitter")
            new = Overhead(
                compute=float(overhead.get("compute", o.overhead.compute)),
                interconnect=float(overhead.get("interconnect", o.overhead.interconnect)),
                jitter=(float(jit[0]), float(jit[1])) if jit else o.overhead.jitter,
            )
            measured = [k for k in ("compute", "interconnect", "jitter") if overhead.get(k) is not None]
            o = dataclasses.replace(o, overhead=new, defaults_used=tuple(
                d for d in o.defaults_used if d.removeprefix("overhead.") not in measured))
        offers.append(o)
    return dataclasses.replace(scenario, offers=tuple(offers))


def load_measured(path: str | Path, catalog: Catalog) -> dict[str, Any]:
    from gpuplan.probe.overhead import measured_overhead

    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GpuplanError(f"cannot read: {exc.strerror}", file=p, hint="give the file `gpuplan probe -o json` wrote.")
    except json.JSONDecodeError as exc:
        raise GpuplanError(f"not JSON: {exc.msg}", file=p, line=exc.lineno,
                           hint="give the file `gpuplan probe -o json` wrote.") from None
    return measured_overhead(data, catalog)


def compare(
    scenario: str | Path | Scenario,
    *,
    catalog: str | Path | Catalog | None = None,
    measured: str | Path | None = None,
    measured_offer: str | None = None,
) -> CompareResult:
    cat = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
    scen = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, cat)
    if measured is not None:
        scen = apply_measured(scen, load_measured(measured, cat), measured_offer)
    return CompareResult(scenario=scen, catalog=cat, advice=advise(scen, cat))


def compare_text(text: str, *, name: str = "<scenario>", catalog: str | Path | Catalog | None = None) -> CompareResult:
    cat = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
    return compare(scenario_from_text(text, name, cat), catalog=cat)

"""The one orchestrator: files -> models -> engines -> results. Interfaces (CLI, web, export) call these."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuplan.advise import WorkloadAdvice, advise
from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import GpuplanError
from gpuplan.models import Overhead, Scenario

if TYPE_CHECKING:
    from gpuplan.planner import PlanResult
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
            comp, inter = overhead.get("compute"), overhead.get("interconnect")
            new = Overhead(
                compute=float(comp) if comp is not None else o.overhead.compute,
                interconnect=float(inter) if inter is not None else o.overhead.interconnect,
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
        raise GpuplanError(f"cannot read: {exc.strerror}", file=p,
                           hint="give the file `gpuplan probe -o json` wrote.") from None
    except json.JSONDecodeError as exc:
        raise GpuplanError(f"not JSON: {exc.msg}", file=p, line=exc.lineno,
                           hint="give the file `gpuplan probe -o json` wrote.") from None
    try:
        out = measured_overhead(data, catalog)
    except GpuplanError as exc:
        exc.file = str(p)
        raise
    if all(out.get(k) is None for k in ("compute", "interconnect", "jitter")):
        raise GpuplanError("the probe measured no overhead (no benchmark figures)", file=p, field="bench",
                           hint="run `gpuplan probe --bench -o json` on the GPU node; without --bench, "
                           "or without a GPU, there is nothing to replace the defaults with.")
    return out


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


def plan(
    scenario: str | Path | Scenario,
    *,
    catalog: str | Path | Catalog | None = None,
    demand: str | Path | None = None,
    trace: str | Path | None = None,
    trace_format: str = "auto",
    queueing: str = "best-effort-fifo",
) -> PlanResult:
    """Size the hybrid pool for a scenario; demand from its workloads, a demand CSV, or a job trace."""
    from gpuplan import demand as demand_mod
    from gpuplan.planner import plan_pools

    cat = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
    scen = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, cat)
    if demand is not None and trace is not None:
        raise GpuplanError("give either --demand or --trace, not both", field="--demand",
                           hint="--demand reads hourly GPUs (time,gpu,gpus); --trace reads a job trace.")
    if demand is not None:
        dem = demand_mod.from_csv(demand)
    elif trace is not None:
        gpus = sorted({w.gpus_allowed[0] for w in scen.workloads})
        dem = demand_mod.from_trace(trace, gpus[0], trace_format)
    else:
        dem = demand_mod.from_schedules(scen.workloads)
    unknown = sorted(set(dem.by_gpu) - {o.gpu for o in scen.offers})
    if unknown:
        raise GpuplanError(f"the demand names GPU(s) no offer provides: {', '.join(unknown)}",
                           file=str(demand or trace), hint="add offers for them to the scenario.")
    return plan_pools(scen, dem, cat, queueing)


def plan_scenario(path: str | Path, catalog: str | Path | Catalog | None = None, lang: str = "en") -> dict[str, Any]:
    """The `gpuplan.plan/1` JSON of a scenario file (used by `export`)."""
    from gpuplan.render.plan import plan_json

    return plan_json(plan(path, catalog=catalog), lang)

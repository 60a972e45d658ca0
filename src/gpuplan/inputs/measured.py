"""A scenario with one offer's overheads replaced by measured ones (`compare --measured`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from gpuplan.errors import GpuplanError
from gpuplan.inputs.scenario_types import Jitter, Range, Scenario


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
            # the probe's all-reduce runs inside one node: it measures the intra-node fraction
            new = dataclasses.replace(
                o.overhead,
                compute=Range(float(comp), float(comp)) if comp is not None else o.overhead.compute,
                intra_node=Range(float(inter), float(inter)) if inter is not None else o.overhead.intra_node,
                jitter=Jitter("uniform", float(jit[0]), float(jit[1])) if jit else o.overhead.jitter,
            )
            measured = [{"interconnect": "intra_node"}.get(k, k) for k in ("compute", "interconnect", "jitter")
                        if overhead.get(k) is not None]
            o = dataclasses.replace(o, overhead=new, defaults_used=tuple(
                d for d in o.defaults_used if d.removeprefix("overhead.") not in measured))
        offers.append(o)
    return dataclasses.replace(scenario, offers=tuple(offers))

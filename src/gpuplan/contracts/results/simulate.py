"""`simulate`'s result: the replays, one `-o json` object per reserved level, and the table's heading."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuplan.constants import Packing, Queueing

if TYPE_CHECKING:
    from gpuplan.engines.pricing import PoolPricing


def heading(*, trace: str, fmt: str, records: int, gpu_hours: float, wait_hours: float, queueing: str,
            packing: str, gpus_per_node: int, prices: dict[str, Any] | None) -> dict[str, Any]:
    """What the table and markdown show above the runs (`SimulateResult.meta()`)."""
    from gpuplan.inputs.units import format_duration

    return {
        "trace": trace,
        "format": fmt,
        "records": records,
        "gpu_hours": gpu_hours,
        "wait": format_duration(wait_hours) if wait_hours else "0",
        "queueing": queueing,
        "packing": packing if packing == "gpu" else f"node ({gpus_per_node} GPUs)",
        "packing_mode": packing,
        "gpus_per_node": gpus_per_node,
        "prices": prices,
    }


@dataclass(frozen=True)
class SimulateResult:
    """The replays (one `-o json` object per reserved level) and what the table's heading shows."""

    runs: list[dict[str, Any]]
    trace: str
    format: str
    records: int
    gpu_hours: float
    wait_hours: float
    queueing: Queueing
    packing: Packing
    gpus_per_node: int
    prices: PoolPricing | None  # None without a scenario
    max_wait: dict[str, float] = field(default_factory=dict)  # the waiting budget {stat: hours}
    researcher_hour_cost: float | None = None  # the scenario's, when priced
    recommendation: dict[str, Any] = field(default_factory=dict)  # sim.cost.recommend's answer
    spot: dict[str, Any] | None = None  # the spot tier's settings (`--spot` > 0), else None

    def to_json(self) -> dict[str, Any]:
        """What `simulate -o json` prints (`gpuplan.simulate/1`): the runs, one per R, and the
        recommended R (null with `no_recommendation` saying why)."""
        from gpuplan.sim.cost import SCHEMA  # not the contract module: that would load pydantic

        rec = self.recommendation
        out = {
            "schema": SCHEMA,
            "max_wait_hours": dict(self.max_wait),
            "researcher_hour_cost": self.researcher_hour_cost,
            "runs": self.runs,
            "recommended": rec.get("recommended"),
            "no_recommendation": rec.get("no_recommendation"),
            "cheapest": rec.get("cheapest"),
        }
        if self.spot is not None:  # only with a spot tier: without one the output is as it was
            out["spot"] = dict(self.spot)
        return out

    def meta(self) -> dict[str, Any]:
        """The heading the table and markdown renderers show above the runs."""
        return heading(trace=self.trace, fmt=self.format, records=self.records, gpu_hours=self.gpu_hours,
                       wait_hours=self.wait_hours, queueing=self.queueing, packing=self.packing,
                       gpus_per_node=self.gpus_per_node,
                       prices=None if self.prices is None else self.prices.summary())

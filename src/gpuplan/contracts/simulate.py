"""`gpuplan.simulate/1`: what `gpuplan simulate -o json` prints (assembled by `sim.replay.summarize`).

One object per reserved level R: one R prints one object, several R print a JSON array of them, in
the order given (`SimulateResults`). Numbers are unrounded floats.
"""

from __future__ import annotations

from pydantic import Field, RootModel

from gpuplan.contracts._base import Count, OpenRecord, Record

SCHEMA = "gpuplan.simulate/1"


class GpuHours(Record):
    total: float = Field(description="reserved + burst.")
    reserved: float = Field(description="GPU-hours run on the R reserved cards.")
    burst: float = Field(description="GPU-hours run in containers, stretched by the container slowdown.")


class WaitHours(Record):
    mean: float
    p50: float
    p95: float
    max: float


class SimulateCost(OpenRecord):
    currency: str
    offer_bare_metal: str
    offer_container: str
    span_hours: float = Field(description="The trace's calendar span: the hours the R cards are leased.")
    billed_gpus: Count | None = Field(default=None, description=(
        "Cards paid for: R, rounded up to whole nodes when leased by the node (absent in older outputs)."))
    nodes: Count | None = Field(default=None, description="Nodes the leased cards occupy (absent in older outputs).")
    lease: float
    ops: float
    burst: float
    total: float = Field(description="lease + ops + burst at mid prices.")
    total_low: float
    total_high: float
    per_month: float
    per_month_low: float
    per_month_high: float


class SimulateResult(Record):
    """`gpuplan simulate -o json` for one reserved level R."""

    reserved_gpus: Count = Field(description="R, the reserved cards this replay used.")
    jobs: Count = Field(description="Jobs replayed (trace records left after `skipped`).")
    skipped: dict[str, Count] = Field(description="Trace records left out, by reason (`no_gpu`, `never_ran`, ...).")
    burst_jobs: Count = Field(description="Jobs that ran in containers.")
    gpu_hours: GpuHours
    wait_hours: WaitHours = Field(description="Queueing wait from submit to start, hours.")
    reserved_utilization: float = Field(description="Reserved GPU-hours over R x span.")
    cost: SimulateCost | None = Field(description="null without --scenario (nothing to price with).")


class SimulateResults(RootModel[list[SimulateResult]]):
    """`gpuplan simulate -o json` with several R: one object per R, in the order given."""

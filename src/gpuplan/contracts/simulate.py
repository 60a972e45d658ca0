"""`gpuplan.simulate/1`: what `gpuplan simulate -o json` prints (`SimulateOutput`).

One object for one R or many: `runs` holds one `SimulateResult` per reserved level R, in the order
given (each assembled by `sim.replay.summarize`), and `recommended` the cheapest R whose waits meet
`--max-wait` (`sim.cost.recommend`). Numbers are unrounded floats.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, RootModel

from gpuplan.contracts._base import Count, OpenRecord, Record
from gpuplan.contracts.recommend import NoRecommendation, Recommended, WaitHours

# WaitHours, Recommended and NoRecommendation are shared with `gpuplan.plan/1`: they live in
# contracts/recommend.py so that `plan` does not build every simulate model it never prints.
__all__ = ["Cheapest", "GpuHours", "NoRecommendation", "Recommended", "SimulateCost", "SimulateOutput",
           "SimulateResult", "SimulateResults", "SpotSettings", "WaitHours"]

SCHEMA = "gpuplan.simulate/1"


class GpuHours(Record):
    total: float = Field(description="reserved + burst.")
    reserved: float = Field(description="GPU-hours run on the R reserved cards.")
    burst: float = Field(description="GPU-hours run in containers, stretched by the container slowdown.")
    spot: float | None = Field(default=None, description=(
        "GPU-hours run on the spot tier (`--spot`), lost work included; absent without one."))


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
    total: float = Field(description="lease + ops + burst (+ overtime) at mid prices.")
    total_low: float
    total_high: float
    per_month: float
    per_month_low: float
    per_month_high: float
    bare_metal_slowdown: float | None = Field(default=None, description=(
        "s_b: the pool's work on the bare-metal offer against ideal dedicated bare metal with a full fabric "
        "(`pricing.pool_slowdown`, as plan's slowdown_bare_metal; absent in older outputs)."))
    overtime_per_gpu_hour: float | None = Field(default=None, description=(
        "(s_b - 1) x (lease price + ops per card-hour): lease overtime per GPU-hour the leased cards run."))
    overtime: float | None = Field(default=None, description=(
        "Reserved GPU-hours x overtime_per_gpu_hour, in `total` (the trace's durations are on the reference: "
        "the lease runs them s_b times as long, as plan bills it); absent when 0."))
    offer_spot: str | None = Field(default=None, description="The spot offer (`--spot`; absent without one).")
    spot: float | None = Field(default=None, description=(
        "Spot GPU-hours x (spot price + ops), in `total` (`--spot`; absent without one)."))
    lost: float | None = Field(default=None, description=(
        "What the lost GPU-hours cost, already inside `spot` and `burst` (`--spot`; absent without one)."))
    waiting_per_month: float | None = Field(default=None, description=(
        "Waiting priced per month: mean wait x jobs x researcher_hour_cost over the span, scaled like "
        "per_month (present when the scenario's researcher_hour_cost > 0)."))


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
    spot_gpus: Count | None = Field(default=None, description="S, the spot cards (`--spot` > 0; else absent).")
    spot_jobs: Count | None = Field(default=None, description="Jobs that finished on spot (`--spot`).")
    on_demand_jobs: Count | None = Field(default=None, description=(
        "Jobs that finished on demand, after a reclaim or because spot was full (`--spot`)."))
    preemptions: Count | None = Field(default=None, description=(
        "Spot reclaims replayed (drawn from the offer's rate per node-hour with --seed; `--spot`)."))
    lost_gpu_hours: float | None = Field(default=None, description=(
        "GPU-hours reclaims threw away: work since the last checkpoint plus restarts (`--spot`)."))


class SimulateResults(RootModel[list[SimulateResult]]):
    """The list several R printed before `gpuplan.simulate/1` wrapped the runs (still readable)."""


class Cheapest(Record):
    """The cheapest priced R whatever it waits (what a sweep without a budget would pick)."""

    reserved_gpus: Count
    cost_per_month: float
    waiting_cost_per_month: float | None
    wait_hours: WaitHours
    absurd_wait: bool = Field(description="Its p95 wait is over a week (168 h): a sweep says so.")


class SpotSettings(Record):
    """The spot tier a replay ran with (`--spot` > 0; `gpuplan.sim.spot`)."""

    gpus: Count = Field(description="S, the spot cards.")
    offer: str = Field(description="The scenario's cheapest spot offer for the GPU.")
    price_per_gpu_hour: float = Field(description="Its price per GPU-hour (mid).")
    rate_per_node_hour: float = Field(description="Reclaims per node-hour (the middle of a range).")
    seed: Count = Field(description="The seed of numpy's Generator(PCG64) that drew the reclaims.")
    checkpoint_hours: float | None = Field(description=(
        "The checkpoint interval (null: none, a reclaimed job starts over)."))
    restart_hours: float = Field(description="One restart after a reclaim.")
    slowdown: float = Field(description="Run times on spot x this (the offer's slowdown on the work).")
    fallback: Literal["on-demand", "requeue"] = Field(description=(
        "A reclaimed job runs on demand, or tries spot again (at most max_spot_runs runs)."))
    max_spot_runs: Count = Field(description="Spot runs a job gets in all (1 with fallback on-demand).")


class SimulateOutput(Record):
    """`gpuplan simulate -o json`: one object for one R or many."""

    schema_: Literal["gpuplan.simulate/1"] = Field(alias="schema", description="The contract's name and version.")
    max_wait_hours: dict[str, float] = Field(description=(
        "The waiting budget, {stat: hours} for stat in mean, p50, p95, max ({} without --max-wait)."))
    researcher_hour_cost: float | None = Field(description="The scenario's waiting cost per hour (null unpriced).")
    runs: list[SimulateResult] = Field(description="One replay per R, in the order given.")
    recommended: Recommended | None = Field(description="null when no R meets the budget or nothing is priced.")
    no_recommendation: NoRecommendation | None = Field(description="Why `recommended` is null (else null).")
    cheapest: Cheapest | None = Field(description="The cheapest priced R ignoring the budget (null unpriced).")
    spot: SpotSettings | None = Field(default=None, description="The spot tier (`--spot` > 0); absent without one.")

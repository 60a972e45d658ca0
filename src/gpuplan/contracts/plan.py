"""`gpuplan.plan/1`: what `gpuplan plan -o json` prints (built by `contracts.plan_document`), and what
`gpuplan export` reads.

Money is per month (`days_per_month` x 24 hours) in `currency`; a figure the plan cannot price (no
offer of that mode, NaN inside) is null.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuplan.constants import Queueing
from gpuplan.contracts._base import Count, Int, OpenRecord, Record
from gpuplan.contracts.recommend import NoRecommendation, Recommended

SCHEMA = "gpuplan.plan/1"

LeaseUnit = Literal["gpu", "node"]
Placement = Literal["bare-metal", "container", "split", "spot"]
Kind = Literal["training", "fine-tuning", "experiment", "inference"]
Requirement = Literal["compliance", "custom-driver", "multi-node", "isolation", "elastic", "no-preemption"]

Money = float | None


class PoolDemand(Record):
    peak: float = Field(ge=0, description="Highest hourly demand, GPUs.")
    mean: float = Field(ge=0, description="Mean hourly demand, GPUs.")
    start: str = Field(description="First hour of `hourly`, ISO 8601 UTC (`2026-01-05T00:00:00Z`).")
    hourly: list[float] = Field(description="GPUs wanted in each hour of the horizon.")


class PoolCostPerMonth(OpenRecord):
    lease: Money
    ops: Money
    spill: Money = Field(description="Containers for demand above the leased cards.")
    elastic: Money = Field(description="Containers for work that requires elastic capacity.")
    hybrid: Money = Field(description="The pool's whole monthly cost.")
    setup: Money | None = Field(default=None, description=(
        "One-off setup labour, spread over the horizon (added with the one tariff; absent in older plans)."))
    committed: Money | None = Field(default=None, description=(
        "What the cards already signed (`commitments:`) still cost: their ops, and their rental where "
        "unpaid (absent without commitments)."))
    spot: Money | None = Field(default=None, description=(
        "Spot capacity for tolerant work, lost work included (in `hybrid`; absent without a spot tier)."))
    power: Money | None = Field(default=None, description=(
        "Owned servers (`mode: owned`): their power above the idle draw while they serve work; `lease` holds "
        "their capex, colocation and idle power (absent for a leased pool)."))
    overtime: Money | None = Field(default=None, description=(
        "Lease overtime (in `hybrid`): the leased cards run the work they serve slowdown_bare_metal times as "
        "long; the (slowdown_bare_metal - 1) x served GPU-hours extra, at `overtime_per_gpu_hour` (the cards "
        "held longer, as `compare` stretches a bare-metal lease by its slowdown; absent when none)."))


class Marginal(Record):
    ratio: float | None = Field(
        description="Lease price over what a busy card saves an hour: container price x container_slowdown "
        "- (slowdown_bare_metal - 1) x overtime_per_gpu_hour. A leased card pays when busy a larger share "
        "of hours than this."
    )
    share_above_reserved_minus_step: float | None = Field(description="Share of hours demand exceeds R - step.")
    share_above_reserved: float | None = Field(description="Share of hours demand exceeds R.")


class PoolGpuHours(Record):
    spill: float = Field(ge=0, description="Dedicated GPU-hours a month above the leased cards, run in containers.")
    elastic: float = Field(ge=0, description="Dedicated GPU-hours a month of elastic work, run in containers.")
    bare_metal: float | None = Field(default=None, ge=0, description=(
        "GPU-hours a month the leased cards run the pool's work: its dedicated GPU-hours there x "
        "`slowdown_bare_metal` (compare's GPU-hours used on that offer; absent in older plans)."))


class SpotTier(Record):
    offer: str = Field(description="The spot offer.")
    gpus: Count = Field(description="S: the spot work's peak demand in whole spot instances.")
    gpus_per_node: Int = Field(ge=1)
    gpu_hours_per_month: float = Field(ge=0, description="GPU-hours run on spot a month, lost work included.")
    lost_gpu_hours_per_month: float = Field(ge=0, description="Of them, re-run after reclaims and restarts.")
    preemptions_per_month: float = Field(ge=0, description="Expected reclaims of spot instances a month.")
    preemption_rate: float = Field(ge=0, description="Reclaims per instance-hour (the rate's middle).")
    workloads: list[str]


class PlanPool(Record):
    gpu: str = Field(description="Catalog GPU id.")
    vendor: str
    offer_bare_metal: str | None
    offer_container: str | None
    reserved_gpus: Count = Field(description="Cards to lease (bare metal): the optimum R.")
    nodes: Count
    gpus_per_node: Int = Field(ge=1)
    lease_unit: LeaseUnit
    demand: PoolDemand
    reserved_utilization: float | None
    reserved_gpus_low: Count = Field(description="The optimum at the low end of the price ranges.")
    reserved_gpus_high: Count = Field(description="The optimum at the high end of the price ranges.")
    container_slowdown: float | None = Field(description=(
        "s_c: the pool's work in containers against ideal dedicated bare metal with a full fabric "
        "(`compare`'s `time.slowdown`, rework after interruptions included), weighted by GPU-hours."))
    slowdown_bare_metal: float | None = Field(default=None, description=(
        "s_b: the same work on the bare-metal offer, against the same reference (its own GPU links and "
        "network: a slow one costs time on bare metal too; null without a bare-metal offer, absent in older "
        "plans). The leased cards run what they serve s_b times as long (`cost_per_month.overtime`)."))
    overtime_per_gpu_hour: float | None = Field(default=None, description=(
        "A card-hour of lease overtime: the lease's price + its ops per card-hour (mid; absent without a "
        "bare-metal offer)."))
    cost_per_month: PoolCostPerMonth
    lease_hours: float | None = Field(default=None, description=(
        "Paid hours of the lease over the horizon (absent in older plans)."))
    marginal: Marginal
    # what the table and --explain state; added with the engines returning this contract (absent in older plans)
    lease_per_gpu_hour: float | None = Field(default=None, description="The lease's price per GPU-hour (mid).")
    lease_days_per_month: float | None = Field(default=None, description=(
        "Paid lease days in a month of the horizon (a term or setup can make it more than a month)."))
    container_per_gpu_hour: float | None = Field(default=None, description=(
        "What a container GPU-hour costs: price + ops (mid)."))
    container_slowdown_elastic: float | None = Field(default=None, description=(
        "The container slowdown of the elastic work."))
    pinned_peak: float | None = Field(default=None, ge=0, description=(
        "Peak demand of work that must stay on bare metal: the least R."))
    step: Int | None = Field(default=None, ge=1, description="Candidate pool sizes go in steps of this (a node).")
    gpu_hours_per_month: PoolGpuHours | None = None
    committed_gpus: Count | None = Field(default=None, description=(
        "Cards already signed (`commitments:`), serving first at no new rental (absent without)."))
    committed_until: str | None = Field(default=None, description=(
        "The day the signed cards end (the earliest `until`), ISO 8601; new cards replace them from then."))
    spot: SpotTier | None = Field(default=None, description=(
        "The spot tier (issue 26): tolerant work on reclaimable capacity; absent without one."))


class PlanAssignment(Record):
    workload: str
    placement: Placement
    reason: str = Field(description="Why, in the output language.")
    gpu: str
    gpus: Int = Field(ge=1)
    kind: Kind
    requires: list[Requirement]
    pool_share: float | None = Field(description="Share of the workload's GPU-hours the leased pool serves.")
    gpu_reason: str | None = Field(default=None, description=(
        "Why `gpu`, for a workload that lists several GPUs: the plan's monthly cost with it on each "
        "(the others fixed) and its speed there (absent for one GPU)."))


class PlanProject(Record):
    """One-off work (`once: true`): never part of a standing pool."""

    workload: str
    gpu: str = Field(description="The GPU it runs on (one of its listed GPUs).")
    choice: Literal["pool", "lease", "containers"] = Field(description=(
        "pool: the standing pool's spare cards cover it in every hour it runs (no new cost); lease: a "
        "bare-metal offer for its own term; containers."))
    offer: str | None = Field(description="The offer it runs on (the pool's lease for `pool`).")
    start: str = Field(description="Its first day, ISO 8601 (the scenario's start + its offset).")
    months: float = Field(ge=0, description="Its duration in months of `days_per_month`.")
    cost: float = Field(ge=0, description="Its whole cost (not per month), as compare prices that option.")
    reason: str = Field(description="What it is and why this choice, in the output language.")


class PlanCostPerMonth(OpenRecord):
    hybrid: Money
    hybrid_low: Money
    hybrid_high: Money
    all_bare_metal: Money
    all_container: Money


class CurvePoint(Record):
    gpu: str
    reserved_gpus: Count
    cost_per_month: Money
    cost_per_month_low: Money = Field(
        default=None, description="Absent when the low/high sizing ran over other candidates."
    )
    cost_per_month_high: Money = Field(default=None, description="As `cost_per_month_low`.")


class PlanWaiting(Record):
    """`plan --max-wait ...`, one pool: its sizes when work waits for leased cards up to the budget's
    largest bound before it bursts to containers, and the cheapest size meeting the budget."""

    model: Literal["replay", "fluid"] = Field(description=(
        "replay: a job trace replayed job by job (as `gpuplan simulate`); fluid: an hourly curve's "
        "GPU-hours in a first-in, first-out queue (`engines.waiting`)."))
    max_wait_hours: dict[str, float] = Field(description="The waiting budget, {stat: hours}.")
    burst_after_hours: float | None = Field(description=(
        "How long work waits for leased cards before it bursts (null: no container offer, it waits)."))
    gpu: str = Field(description="The pool the trace runs on (its GPU id).")
    reserved_gpus: list[Count] = Field(description="The pool sizes replayed.")
    recommended: Recommended | None = Field(description="The cheapest R meeting the budget (null: see below).")
    no_recommendation: NoRecommendation | None = Field(description="Why `recommended` is null (else null).")


class PlanResult(Record):
    """`gpuplan plan -o json`: per GPU type, the cards to lease and what spills to containers."""

    schema_: Literal["gpuplan.plan/1"] = Field(alias="schema")
    currency: str
    scenario: str | None = Field(description="The scenario file; null for a scenario given as text.")
    generated_at: str = Field(description="ISO 8601 UTC; SOURCE_DATE_EPOCH when set.")
    queueing: Queueing
    horizon_hours: Int = Field(ge=0, description="Hours of the demand curve.")
    calendar_hours: float | None = Field(default=None, description=(
        "Calendar hours the per-month figures divide by (absent in older plans)."))
    demand_source: str = Field(description="`schedules`, or the demand file the curve came from.")
    sample_hours: Int | None = Field(default=None, ge=1, description=(
        "Hours of the demand sample when it was repeated to fill a typical period (absent otherwise)."))
    sample_repeats: Int | None = Field(default=None, ge=2, description=(
        "Whole copies of the sample in the horizon (a sample under a day fills a day, under a week a week)."))
    kept_schedules: list[str] | None = Field(default=None, description=(
        "Workloads with no rows in the demand file: planned on their own schedules (absent when none)."))
    days_per_month: float | None = Field(default=None, description=(
        "The scenario's month, in days (added with the engines returning this contract)."))
    pools: list[PlanPool]
    assignments: list[PlanAssignment]
    cost_per_month: PlanCostPerMonth
    curve: list[CurvePoint] = Field(description="Monthly cost against the leased cards R, per pool.")
    waiting: list[PlanWaiting] | None = Field(default=None, description=(
        "With --max-wait: per pool, the size that meets a waiting budget (absent otherwise)."))
    one_off_removed: dict[str, float] | None = Field(default=None, description=(
        "GPU-hours per GPU of one-off work the demand file marks (`once`, from `audit --demand-out`), taken "
        "out of the standing demand (absent when none)."))
    projects: list[PlanProject] | None = Field(default=None, description=(
        "One-off work (`once: true`), each with its own choice; `pools` hold the standing pools only "
        "(absent when there is none)."))

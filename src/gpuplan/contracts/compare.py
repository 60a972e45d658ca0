"""`gpuplan.compare/1`: what `gpuplan compare -o json` prints (assembled by `render.compare.compare_json`).

Money is in the scenario's `currency`; `total`/`low`/`high` are the whole job at the mid/low/high price,
`per_month` the total spread over the job's calendar months. Messages are in the `--lang` language.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuplan.contracts._base import Int, Record

SCHEMA = "gpuplan.compare/1"

Mode = Literal["bare-metal", "container"]
Platform = Literal["bare-metal", "vm", "container"]
Tenancy = Literal["dedicated", "shared-node", "shared-gpu"]
Capacity = Literal["on-demand", "spot", "reserved"]
Bound = Literal["compute", "communication", "data"]
Favors = Literal["bare-metal", "container", "neither"]
FlipParameter = Literal["requires", "hours_per_day", "duration", "price"]


class CompareWarning(Record):
    code: str = Field(description="Stable machine code, e.g. `over-24h`, `min-term`.")
    message: str = Field(description="The warning in the output language.")


class OptionCost(Record):
    total: float = Field(description="Whole job at the mid price.")
    low: float = Field(description="Whole job at the low end of the price range.")
    high: float = Field(description="Whole job at the high end of the price range.")
    per_month: float = Field(description="`total` per month over max(duration, one month).")
    rental: float = Field(description="Rental at the mid price.")
    ops: float
    setup: float
    idle: float = Field(description="The part of `rental` paid for cards doing no work (not added to `total`).")
    transfer: float = Field(description="Moving the workload's data to this offer's site (in `total`).")
    capex: float | None = Field(default=None, description="Owned offers only: straight-line depreciation, "
                                "purchase x (1 - resale) / life per node-hour held (capex + power + colocation "
                                "= rental).")
    power: float | None = Field(default=None, description="Owned offers only: electricity, the full draw while "
                                "running and the idle share of it while held idle, PUE included.")
    colocation: float | None = Field(default=None, description="Owned offers only: rack space per node held.")


class TimeTerms(Record):
    """Each term's added time as a fraction of the dedicated step time; 1 + their sum = `slowdown`
    (before the GPU speed factor). 0 where a term does not apply (a one-node job's `inter_node`)."""

    compute: float = Field(description="Compute overhead of the platform.")
    intra_node: float = Field(description="Lost NVLink/HCCS bandwidth inside a node.")
    inter_node: float = Field(description="Lost network bandwidth between nodes (TCP efficiency included).")
    straggler: float = Field(description="Waiting for the slowest worker's jitter each step.")
    data: float = Field(description="<= 0: the platform slowdown hidden behind input waits (input-bound work).")


class GpuSpeed(Record):
    factor: float = Field(description="Time on this offer's GPU over time on the workload's first GPU.")
    source: str = Field(
        pattern=r"^(same-gpu|measured|roofline:bf16|roofline:inference|unknown|benchmark:[a-z0-9.-]+)$",
        description="Where the factor came from: the workload's `speed:`, a published benchmark ratio "
        "from the catalog (`benchmark:<id>`, its source in defaults.yaml `gpu_speed`), or a roofline estimate.")


class OptionTime(Record):
    run_hours: float = Field(description="Hours the work runs on this offer (per GPU): the workload's hours "
                             "on its first GPU x gpu_speed.factor x slowdown x the rework of interruptions.")
    wall_hours: float = Field(description="Calendar hours: run_hours spread over the workload's hours a day "
                              "and days a week, plus setup, recovery and transfer.")
    wall_hours_range: list[float] = Field(min_length=2, max_length=2,
                                          description="[low, high] wall hours at the ends of slowdown_range.")
    gpu_hours_used: float
    gpu_hours_paid: float
    slowdown: float = Field(description="Time on this offer over time on the reference (slowdown_reference: "
                            "the same GPU on ideal dedicated bare metal with a full fabric), at the middle "
                            "of every range (1.10 = 10% slower).")
    slowdown_range: list[float] = Field(min_length=2, max_length=2, description=(
        "[low, high]: the slowdown at the ends of the overhead ranges and, for a container that states no "
        "tenancy, from a dedicated node to a shared host; [slowdown, slowdown] where every input is one number."))
    slowdown_reference: str = Field(description="The reference the slowdown is measured against, in words.")
    terms: TimeTerms
    bound: Bound = Field(description="What limits a step: compute, communication, or input data.")
    gpu_speed: GpuSpeed
    transfer_hours: float = Field(description="Waiting for the workload's data to reach this offer's site.")
    recovery_hours: float = Field(description="Expected waiting to recover from interruptions (support, "
                                  "repair or rescheduling), plus the work they lose.")
    interruptions: float = Field(description="Expected interruptions over the run.")
    p90_wall_hours: float = Field(description="Wall hours at the 90th percentile of the spot running time "
                                  "(= wall_hours off spot).")
    preemptions: float = Field(description="Expected spot reclaims over the run (max_lifetime restarts "
                               "included); 0 off spot.")
    lost_gpu_hours: float = Field(description="GPU-hours spot reclaims cost: work re-run since the last "
                                  "checkpoint on every node of the job, and restarts (in the cost); 0 off spot.")


class CompareOption(Record):
    offer: str = Field(description="Offer id from the scenario or catalog.")
    mode: Mode = Field(description="How the offer bills: bare-metal (a lease) or container (elastic).")
    platform: Platform = Field(description="How the platform behaves: bare-metal, vm or container.")
    tenancy: Tenancy
    capacity: Capacity = Field(description="How the capacity is sold: on-demand, spot (reclaimable) or reserved.")
    gpu: str = Field(description="The offer's GPU, the catalog id.")
    feasible: bool
    infeasible_reason: str | None = Field(description="Why not feasible; null when feasible.")
    cost: OptionCost
    time: OptionTime
    warnings: list[CompareWarning]
    explain: list[str] | None = Field(default=None, description="With `--explain`: how each number is made, "
                                      "one line per formula with its inputs (absent otherwise).")


class Dimension(Record):
    favors: Favors
    reason: str


class Dimensions(Record):
    performance: Dimension
    flexibility: Dimension
    cost: Dimension
    scenario: Dimension


class Flip(Record):
    parameter: FlipParameter = Field(description="What would have to change for the verdict to flip.")
    value: float | str | None = Field(description="The value at which it flips (a requirement names a string).")
    message: str


class Recommendation(Record):
    offer: str
    mode: Mode
    reasons: list[str]
    dimensions: Dimensions
    flip: list[Flip]


class BuyBreakEven(Record):
    owned: str = Field(description="The cheapest feasible owned offer.")
    other: str = Field(description="A feasible rented offer.")
    other_mode: Mode
    hours_per_day: float | None = Field(description="Hours a day at which buying and renting `other` cost the "
                                        "same; null when they never cross in (0, 24].")
    buy_wins: Literal["above", "below", "always", "never"] = Field(
        description="Where buying is cheaper: above or below `hours_per_day`, or at any (always) or no (never) "
        "hours a day.")


class BreakEven(Record):
    hours_per_day: float | None = Field(
        description="Hours a day at which the cheapest container and bare-metal offers cost the same; "
        "null when there is no such pair or they never cross."
    )
    buy: list[BuyBreakEven] | None = Field(default=None, description="With owned offers (`mode: owned`): "
                                           "where buying breaks even with each feasible rented offer.")


class CompareWorkload(Record):
    id: str
    kind: Literal["training", "fine-tuning", "experiment", "inference"]
    gpus: Int | float = Field(description="Whole cards, or the fraction of one card (0.5) of work that shares it.")
    gpu: list[str] = Field(description="The GPUs the workload accepts (catalog ids; work is defined on the first).")
    warnings: list[CompareWarning]
    options: list[CompareOption]
    recommendation: Recommendation | None = Field(description="null when no option is feasible.")
    break_even: BreakEven


class CompareResult(Record):
    """`gpuplan compare -o json`: per workload, each offer's cost and time, and the verdict."""

    schema_: Literal["gpuplan.compare/1"] = Field(alias="schema")
    currency: str
    days_per_month: float = Field(description="The scenario's month, in days (per_month figures use it).")
    catalog_files: list[str] = Field(description="Catalogs the defaults came from (`bundled` and any --catalog).")
    workloads: list[CompareWorkload]

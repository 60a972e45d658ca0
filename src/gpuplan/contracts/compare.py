"""`gpuplan.compare/1`: what `gpuplan compare -o json` prints (assembled by `render.compare.compare_json`).

Money is in the scenario's `currency`; `total`/`low`/`high` are the whole job at the mid/low/high price,
`per_month` the total spread over the job's calendar months. Messages are in the `--lang` language.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuplan.contracts._base import Record

SCHEMA = "gpuplan.compare/1"

Mode = Literal["bare-metal", "container"]
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


class OptionTime(Record):
    wall_hours: float
    gpu_hours_used: float
    gpu_hours_paid: float
    slowdown: float = Field(description="Total slowdown factor against bare metal (1.10 = 10% slower).")


class CompareOption(Record):
    offer: str = Field(description="Offer id from the scenario or catalog.")
    mode: Mode
    feasible: bool
    infeasible_reason: str | None = Field(description="Why not feasible; null when feasible.")
    cost: OptionCost
    time: OptionTime
    warnings: list[CompareWarning]


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


class BreakEven(Record):
    hours_per_day: float | None = Field(
        description="Hours a day at which the cheapest container and bare-metal offers cost the same; "
        "null when there is no such pair or they never cross."
    )


class CompareWorkload(Record):
    id: str
    warnings: list[CompareWarning]
    options: list[CompareOption]
    recommendation: Recommendation | None = Field(description="null when no option is feasible.")
    break_even: BreakEven


class CompareResult(Record):
    """`gpuplan compare -o json`: per workload, each offer's cost and time, and the verdict."""

    schema_: Literal["gpuplan.compare/1"] = Field(alias="schema")
    currency: str
    workloads: list[CompareWorkload]

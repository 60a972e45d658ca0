"""The recommendation records `gpuplan.simulate/1` and `gpuplan.plan/1` share: the R to lease, or why
there is none. Kept apart from `contracts.simulate` so that `plan` builds only the models it prints."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuplan.contracts._base import Count, Record


class WaitHours(Record):
    mean: float
    p50: float
    p95: float
    max: float


class Recommended(Record):
    """The R to lease: the cheapest per month whose waits meet the budget."""

    reserved_gpus: Count
    cost_per_month: float = Field(description="The pool's mid bill per month at this R (its run's cost.per_month).")
    waiting_cost_per_month: float | None = Field(description=(
        "Waiting priced with researcher_hour_cost (null when it is 0); the choice minimises "
        "cost_per_month + this."))
    wait_hours: WaitHours
    basis: Literal["max_wait", "cheapest"] = Field(description=(
        "max_wait: the cheapest R meeting --max-wait; cheapest: no budget given, the cheapest R."))
    reason: str = Field(description="Why this R, in words (English).")


class NoRecommendation(Record):
    code: Literal["not_priced", "none_meets"] = Field(description=(
        "not_priced: no --scenario, nothing to compare by cost; none_meets: no R meets --max-wait."))
    reason: str
    smallest_meeting: Count | None = Field(description=(
        "not_priced: the smallest R whose waits meet the budget, when one does (else null)."))


__all__ = ["NoRecommendation", "Recommended", "WaitHours"]

"""`gpuplan.commit/1`: what `gpuplan commit -o json` prints (built by `contracts.commit_document`).

Money is the whole horizon's total in `currency` (not per month), over `paths` Monte Carlo paths of
price drift and demand growth drawn from `seed`: the same seed gives the same document.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuplan.contracts._base import Count, Int, Record

SCHEMA = "gpuplan.commit/1"


class Cost(Record):
    expected: float = Field(description="Mean total over the paths.")
    p10: float
    p50: float
    p90: float


class Ladder(Record):
    gpu: str
    offer: str = Field(description="The bare-metal offer the term is signed with.")
    term_months: Count = Field(ge=1)
    cards: Count = Field(ge=1, description="Cards leased (whole nodes when the offer leases by the node).")
    start_month: Count = Field(description="Month the term starts, 0 = now; it ends by the horizon.")
    exit_probability: float = Field(ge=0, le=1, description=(
        "Share of paths on which the lease is left before its term ends (its term's early_exit used; 0 "
        "without an exit clause)."))


class Against(Record):
    all_container: Cost
    no_exit: Cost | None = Field(default=None, description=(
        "The same ladder with leases run to term (exit clauses not used); absent when no term has one. "
        "cost.expected below it is what the exit clauses are worth."))
    single_term: dict[str, Cost] = Field(description=(
        "Term months -> one pool on that term from month 0, renewed while it fits, its size chosen for the "
        "lowest expected cost."))


class Regret(Record):
    expected: float = Field(ge=0, description="Mean of (ladder - best strategy in hindsight) per path.")
    p90: float = Field(ge=0)


class Band(Record):
    gpu: str
    tier: Literal["container", "bare-metal"]
    p10: list[float] = Field(description="Per month from month 0: the 10th percentile of the price per GPU-hour.")
    p50: list[float]
    p90: list[float]


class CommitResult(Record):
    """`gpuplan commit -o json`."""

    schema_: Literal["gpuplan.commit/1"] = Field(alias="schema")
    currency: str
    horizon_months: Count = Field(ge=1)
    paths: Count = Field(ge=1)
    seed: Int
    ladders: list[Ladder] = Field(description="Lease terms only; containers take the rest.")
    cost: Cost
    against: Against
    regret: Regret
    bands: list[Band] = Field(description=(
        "The price band the paths span, per GPU and tier (container: the cheapest container offer's price; "
        "bare-metal: the cheapest term's price for a lease signed that month)."))
    reasons: list[str]

"""The scenario, version 1: pydantic models of the YAML a user writes, and the resolved forms engines use.

`*In` models mirror the file exactly (unknown fields are errors). `Offer` and `Workload` are the
resolved, unit-parsed forms with every default filled in and the origin of each default recorded,
so any number can be traced back (`defaults_used`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuplan.inputs.market import LeaseTerm, Market, MarketIn, TermIn

Mode = Literal["bare-metal", "container"]
Kind = Literal["training", "fine-tuning", "experiment", "inference"]
Requirement = Literal["compliance", "custom-driver", "multi-node", "isolation", "elastic"]
PricePer = Literal["gpu-hour", "gpu-day", "gpu-month", "node-hour", "node-day", "node-month"]
InterconnectKind = Literal["nvlink", "hccs", "pcie", "none"]
Rdma = Literal["none", "roce", "infiniband"]

NonNeg = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, lt=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PriceIn(_Strict):
    amount: NonNeg | tuple[NonNeg, NonNeg]
    per: PricePer

    @field_validator("amount")
    @classmethod
    def _ordered(cls, v: float | tuple[float, float]) -> float | tuple[float, float]:
        if isinstance(v, tuple) and v[0] > v[1]:
            raise ValueError(f"a range must be [low, high] with low <= high, got [{v[0]}, {v[1]}]")
        return v


class OverheadIn(_Strict):
    compute: Fraction | None = None
    interconnect: Annotated[float, Field(gt=0, le=1)] | None = None
    jitter: Fraction | tuple[Fraction, Fraction] | None = None


class OfferIn(_Strict):
    id: str | None = Field(default=None, min_length=1)
    use: str | None = None
    provider: str | None = None
    gpu: str | None = None
    mode: Mode | None = None
    price: PriceIn | None = None
    lease_unit: Literal["gpu", "node"] | None = None
    gpus_per_node: Annotated[int, Field(ge=1, le=64)] | None = None
    min_term: str | None = None
    network_gbps: Annotated[float, Field(gt=0)] | None = None
    interconnect: InterconnectKind | None = None
    rdma: Rdma | None = None
    setup: str | None = None
    ops: str | None = None
    overhead: OverheadIn | None = None
    source: str | None = None
    as_of: str | None = None
    terms: list[TermIn] | None = None  # lease terms (`gpuplan commit`); see gpuplan.inputs.market


class WorkloadIn(_Strict):
    id: str = Field(min_length=1)
    kind: Kind
    gpu: str | list[str]
    gpus: Annotated[int, Field(ge=1)]
    hours_per_day: Annotated[float, Field(gt=0, le=24)]
    days_per_week: Annotated[int, Field(ge=1, le=7)] = 7
    duration: str
    utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    communication: Fraction | None = None
    requires: list[Requirement] = Field(default_factory=list)
    window: str | None = None

    @field_validator("window")
    @classmethod
    def _window(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-4]):[0-5]\d", v.strip()):
            raise ValueError(f"expected a daily window such as \"09:00-18:00\", got {v!r}")
        return v


class TeamIn(_Strict):
    engineer_hour_cost: NonNeg | None = None
    researcher_hour_cost: NonNeg = 0.0


class ScenarioIn(_Strict):
    version: Literal[1]
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    team: TeamIn = Field(default_factory=TeamIn)
    days_per_month: Annotated[float, Field(ge=28, le=31)] = 30.0
    offers: list[OfferIn] = Field(min_length=1)
    workloads: list[WorkloadIn] = Field(min_length=1)
    market: MarketIn | None = None  # horizon, price drifts, demand growth (`gpuplan commit`)


@dataclass(frozen=True)
class Range:
    """A money or ratio range; `mid` is the midpoint used for the verdict."""

    low: float
    high: float

    @property
    def mid(self) -> float:
        return (self.low + self.high) / 2

    def scale(self, k: float) -> Range:
        return Range(self.low * k, self.high * k)


@dataclass(frozen=True)
class Overhead:
    """Platform effect against dedicated bare metal (see `perf.slowdown`)."""

    compute: float
    interconnect: float
    jitter: tuple[float, float]


@dataclass(frozen=True)
class Offer:
    id: str
    provider: str | None
    gpu: str
    mode: Mode
    price_amount: Range
    price_per: str
    price_per_gpu_hour: Range
    lease_unit: Literal["gpu", "node"]
    gpus_per_node: int
    min_term_hours: float
    network_gbps: float | None
    interconnect: str
    rdma: str | None
    setup_hours: float
    ops_hours: float
    ops_per: str
    overhead: Overhead
    source: str | None = None
    as_of: str | None = None
    defaults_used: tuple[str, ...] = ()
    terms: tuple[LeaseTerm, ...] = ()  # the vendor's lease terms, when given (`gpuplan commit`)


@dataclass(frozen=True)
class Workload:
    id: str
    kind: str
    gpus_allowed: tuple[str, ...]
    gpus: int
    hours_per_day: float
    days_per_week: int
    duration_hours: float
    utilization: float
    communication: float
    requires: frozenset[str]
    window: str | None = None
    defaults_used: tuple[str, ...] = ()

    @property
    def duration_days(self) -> float:
        return self.duration_hours / 24


@dataclass(frozen=True)
class Team:
    engineer_hour_cost: float | None
    researcher_hour_cost: float


@dataclass(frozen=True)
class Scenario:
    currency: str
    team: Team
    days_per_month: float
    offers: tuple[Offer, ...]
    workloads: tuple[Workload, ...]
    path: str | None = None
    catalog_files: tuple[str, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)
    market: Market | None = None  # the `market:` section, when given (`gpuplan commit`)

    def offer(self, offer_id: str) -> Offer:
        for o in self.offers:
            if o.id == offer_id:
                return o
        raise KeyError(offer_id)

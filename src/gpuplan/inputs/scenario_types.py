"""The scenario, version 1: pydantic models of the YAML a user writes, and the resolved forms engines use.

`*In` models mirror the file exactly (unknown fields are errors). `Offer` and `Workload` are the
resolved, unit-parsed forms with every default filled in and the origin of each default recorded,
so any number can be traced back (`defaults_used`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from gpuplan import limits
from gpuplan.inputs.market import LeaseTerm, Market, MarketIn, TermIn

Mode = Literal["bare-metal", "container"]  # how an offer is billed: a lease, or elastic
Platform = Literal["bare-metal", "vm", "container"]  # how the platform behaves (issue 11)
OfferMode = Literal["bare-metal", "vm", "container", "owned"]  # `mode:` as written; owned: bought servers (issue 28)
Tenancy = Literal["dedicated", "shared-node", "shared-gpu"]
Nic = Literal["native", "passthrough", "sr-iov", "virtual"]
Kind = Literal["training", "fine-tuning", "experiment", "inference"]
Requirement = Literal["compliance", "custom-driver", "multi-node", "isolation", "elastic", "no-preemption"]
Capacity = Literal["on-demand", "spot", "reserved"]  # how the capacity is sold (issue 26)
PreemptionPer = Literal["node-hour", "instance-hour", "gpu-hour"]
PricePer = Literal["gpu-hour", "gpu-day", "gpu-month", "node-hour", "node-day", "node-month"]
InterconnectKind = Literal["nvlink", "hccs", "pcie", "none"]
Rdma = Literal["none", "roce", "infiniband"]

# Input limits (issue 14, one table since issue 27: gpuplan.limits): past them, exit 2 instead of running out of memory.
MAX_WORKLOAD_GPUS = limits.MAX_GPUS_PER_WORKLOAD
MAX_WORKLOADS = limits.MAX_WORKLOADS
# An id or a name: one line of printable text of at most limits.MAX_NAME_CHARS characters.
Name = Annotated[str, Field(min_length=1), AfterValidator(limits.check_name)]
Text = Annotated[str, AfterValidator(limits.check_name)]

# Every other number is at most limits.MAX_QUANTITY in its unit (also refuses .inf): sums stay finite.
NonNeg = Annotated[float, Field(ge=0, le=limits.MAX_QUANTITY)]
Positive = Annotated[float, Field(gt=0, le=limits.MAX_QUANTITY)]
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


BandwidthFraction = Annotated[float, Field(gt=0, le=1)]
ComputeOverhead = Annotated[float, Field(ge=-0.1, lt=1)]


def _check_range(v: object) -> object:
    if isinstance(v, tuple) and v[0] > v[1]:
        raise ValueError(f"a range must be [low, high] with low <= high, got [{v[0]}, {v[1]}]")
    return v


class JitterIn(_Strict):
    """Per-step slowdown of one worker from its neighbours: the median and the 99th percentile."""

    median: Annotated[float, Field(ge=0, lt=1)]
    p99: Annotated[float, Field(ge=0, lt=1)]

    @model_validator(mode="after")
    def _tail(self) -> JitterIn:
        if self.p99 < self.median:
            raise ValueError(f"p99 ({self.p99}) must be >= the median ({self.median})")
        return self


class OverheadIn(_Strict):
    compute: ComputeOverhead | tuple[ComputeOverhead, ComputeOverhead] | None = None
    interconnect: BandwidthFraction | None = None  # the flat form: one fraction for NVLink and network alike
    intra_node: BandwidthFraction | tuple[BandwidthFraction, BandwidthFraction] | None = None
    inter_node: BandwidthFraction | tuple[BandwidthFraction, BandwidthFraction] | None = None
    jitter: Fraction | tuple[Fraction, Fraction] | JitterIn | None = None

    @field_validator("compute", "intra_node", "inter_node", "jitter")
    @classmethod
    def _ordered(cls, v: object) -> object:
        return _check_range(v)


class NetworkIn(_Strict):
    gbps: Positive | None = None
    rdma: Rdma | None = None
    nic: Nic | None = None


class StepIn(_Strict):
    """One training step from first principles (communication from the all-reduce cost)."""

    compute_s: Positive
    gradient_gb: NonNeg
    overlap: Annotated[float, Field(ge=0, le=1)] = 0.0


class SupportIn(_Strict):
    """The vendor's written support commitment (issue 17)."""

    response: str | None = None  # time to first response, e.g. 4h
    coverage: Literal["24x7", "business-hours"] | None = None


class SiteIn(_Strict):
    id: Name


class LinkIn(_Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_: Name = Field(alias="from")
    to: Name
    gbps: Positive
    cost_per_gb: NonNeg = 0.0
    latency_ms: NonNeg | None = None
    one_way: bool = False


class DataIn(_Strict):
    size_gb: NonNeg
    site: Name
    moves: Literal["once", "per-run", "daily"] = "once"


class PurchaseIn(_Strict):
    """What one server (or one card) costs to buy, once, in the scenario's currency."""

    amount: Positive
    per: Literal["node", "gpu"]


class PowerIn(_Strict):
    """An owned server's electricity: kW at the wall while busy, the site's PUE and the price of a kWh."""

    kw_per_node: Positive
    pue: Annotated[float, Field(ge=1, le=3)] = 1.0
    price_per_kwh: NonNeg
    idle_share: Annotated[float, Field(ge=0, le=1)] | None = None  # idle draw / busy draw (catalog default)


class PreemptionIn(_Strict):
    """How often spot capacity is reclaimed, and how (issue 26; see `gpuplan.models.preemption`)."""

    rate: NonNeg | tuple[NonNeg, NonNeg]  # a provider's published bucket may stand for a range
    per: PreemptionPer = "node-hour"
    notice: str | None = None  # warning before the reclaim, e.g. 2m
    max_lifetime: str | None = None  # e.g. 24h: the instance is stopped after it, whatever happens
    restart: str | None = None  # one restart (start-up + data reload); default: the offer's reschedule wait
    source: str | None = None
    as_of: str | None = None

    @field_validator("rate")
    @classmethod
    def _ordered(cls, v: object) -> object:
        return _check_range(v)


class OfferIn(_Strict):
    id: Name | None = None
    use: Name | None = None
    provider: Text | None = None
    gpu: Name | None = None
    mode: OfferMode | None = None
    tenancy: Tenancy | None = None
    price: PriceIn | None = None
    lease_unit: Literal["gpu", "node"] | None = None
    gpus_per_node: Annotated[int, Field(ge=1, le=64)] | None = None
    min_term: str | None = None
    network_gbps: Positive | None = None
    interconnect: InterconnectKind | None = None
    rdma: Rdma | None = None
    network: NetworkIn | None = None
    setup: str | None = None
    ops: str | None = None
    overhead: OverheadIn | None = None
    site: Name | None = None  # where the offer's GPUs are (a `sites:` id)
    remote_data: bool = False  # reads data across sites in place (no copy before the run)
    support: SupportIn | None = None
    spares: Annotated[int, Field(ge=0, le=1000)] | None = None  # leased spare nodes (bare metal)
    interruptions_per_gpu_day: NonNeg | None = None
    sharing: Literal["mig", "mps", "time-slicing"] | None = None  # how a card is split among fractional work
    capacity: Capacity | None = None  # on-demand (default), spot (preemptible) or reserved
    preemption: PreemptionIn | None = None  # spot only: the reclaim rate, notice and max lifetime
    source: str | None = None
    as_of: str | None = None
    terms: list[TermIn] | None = None  # lease terms (`gpuplan commit`); see gpuplan.inputs.market
    # mode: owned (issue 28): bought servers, priced from these instead of `price`
    purchase: PurchaseIn | None = None
    life: str | None = None  # straight-line depreciation period, e.g. 4y
    resale: Annotated[float, Field(ge=0, lt=1)] | None = None  # share of the purchase recovered at the end
    power: PowerIn | None = None
    colocation: PriceIn | None = None  # rack space, e.g. {amount: 1500, per: node-month}
    lead_time: str | None = None  # order to delivery, e.g. 8w


class ServiceIn(_Strict):
    """`kind: inference` sized by load: replicas each hour = max(min_replicas, ceil(load / per_replica))."""

    peak: Annotated[float, Field(gt=0)]
    unit: Literal["requests/s", "tokens/s"]
    per_replica: Annotated[float, Field(gt=0)]
    min_replicas: Annotated[int, Field(ge=0, le=MAX_WORKLOAD_GPUS)] = 1
    daily_profile: Annotated[list[Annotated[float, Field(ge=0, le=1)]], Field(min_length=24, max_length=24)] | None \
        = None


class CommitmentIn(_Strict):
    """Cards already leased: capacity at no new rental until `until`."""

    offer: str = Field(min_length=1)
    cards: Annotated[int, Field(ge=1, le=MAX_WORKLOAD_GPUS)]
    until: date
    paid: bool = True


class WorkloadIn(_Strict):
    id: Name
    kind: Kind
    gpu: Name | list[Name]
    # whole cards, or a fraction of one card (0.5, 0.25) for work that shares it (issue 24)
    gpus: Annotated[float, Field(gt=0, le=MAX_WORKLOAD_GPUS)]
    hours_per_day: Annotated[float, Field(gt=0, le=24)]
    days_per_week: Annotated[int, Field(ge=1, le=7)] = 7
    duration: str
    utilization: Annotated[float, Field(gt=0, le=1)] | None = None
    communication: Fraction | None = None
    step: StepIn | None = None
    data_wait: Fraction | None = None
    memory_gb: Positive | None = None
    speed: dict[str, Positive] | None = None
    data: DataIn | None = None
    checkpoint_interval: str | None = None
    requires: list[Requirement] = Field(default_factory=list)
    window: str | None = None
    start: date | None = None
    once: bool = False
    service: ServiceIn | None = None

    @field_validator("gpus")
    @classmethod
    def _whole_or_fraction(cls, v: float) -> float:
        if v >= 1 and v != int(v):
            raise ValueError(f"must be a whole number >= 1, or a fraction of one card below 1, got {v}")
        return v

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
    offers: list[OfferIn] = Field(min_length=1, max_length=limits.MAX_OFFERS)
    workloads: list[WorkloadIn] = Field(min_length=1, max_length=MAX_WORKLOADS)
    market: MarketIn | None = None
    sites: list[SiteIn] = Field(default_factory=list)
    links: list[LinkIn] = Field(default_factory=list)  # horizon, price drifts, demand growth (`gpuplan commit`)
    start: date | None = None  # when the scenario starts (default: today, or SOURCE_DATE_EPOCH's day)
    commitments: list[CommitmentIn] = Field(default_factory=list)


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
class Jitter:
    """Per-step slowdown of one worker from its neighbours (see `perf.expected_max_jitter`).

    `uniform`: U(low, high), the flat `jitter: [lo, hi]` form. `tail`: a median and a p99, with an
    exponential tail fitted through both."""

    kind: Literal["uniform", "tail"]
    low: float  # uniform: low; tail: median
    high: float  # uniform: high; tail: p99

    def as_json(self) -> dict[str, float] | list[float]:
        if self.kind == "tail":
            return {"median": self.low, "p99": self.high}
        return [self.low, self.high]


@dataclass(frozen=True)
class Overhead:
    """Platform effect against dedicated bare metal (see `perf.slowdown`); each a range, mid used.

    compute: fraction slower on pure compute; intra_node / inter_node: fraction of the NVLink/HCCS
    and of the network bandwidth a job gets; jitter: per-step slowdown from neighbours."""

    compute: Range
    intra_node: Range
    inter_node: Range
    jitter: Jitter
    source: str | None = None  # where the defaults came from (catalog entry), when any were used
    estimate: bool = False


@dataclass(frozen=True)
class Owned:
    """An offer's bought servers (`mode: owned`), per node (models.owned prices them)."""

    purchase_per_node: float
    life_hours: float
    resale: float
    kw_per_node: float
    pue: float
    price_per_kwh: float
    idle_share: float
    colocation_per_node_hour: float
    lead_time_hours: float

    # Rates per node-hour (the formulas are in gpuplan.models.owned's docstring)
    @property
    def capex_per_node_hour(self) -> float:
        """purchase x (1 - resale) / life: straight-line depreciation of what is not recovered."""
        return self.purchase_per_node * (1.0 - self.resale) / self.life_hours

    @property
    def power_busy_per_node_hour(self) -> float:
        """kw_per_node x pue x price_per_kwh: the full draw of a node running work."""
        return self.kw_per_node * self.pue * self.price_per_kwh

    @property
    def power_idle_per_node_hour(self) -> float:
        """power_busy x idle_share: the draw of a node held idle."""
        return self.power_busy_per_node_hour * self.idle_share

    @property
    def fixed_per_node_hour(self) -> float:
        """capex + colocation + idle power: what a node costs per hour held, busy or idle."""
        return self.capex_per_node_hour + self.colocation_per_node_hour + self.power_idle_per_node_hour

    @property
    def extra_per_node_hour(self) -> float:
        """power_busy - power_idle: what running work adds per node-hour."""
        return self.power_busy_per_node_hour - self.power_idle_per_node_hour


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
    platform: str = ""  # bare-metal | vm | container: how the platform behaves (mode: how it bills)
    tenancy: str = "dedicated"
    nic: str = "native"
    site: str | None = None
    remote_data: bool = False
    support_response_hours: float | None = None  # None: the offer does not say
    support_coverage: str | None = None
    spares: int = 0
    interruptions_per_gpu_day: float = 0.0
    recovery_hours: float = 0.0  # one interruption's recovery wait (support, repair, spare or reschedule)
    terms: tuple[LeaseTerm, ...] = ()  # the vendor's lease terms, when given (`gpuplan commit`)
    # a container that states no tenancy: the dedicated figures, the favourable end of its slowdown
    # range (`overhead` holds the default, shared-host figures; `perf.slowdown` prices both)
    overhead_alt: Overhead | None = None
    sharing: str | None = None  # mig | mps | time-slicing: how fractional work shares a card (issue 24)
    capacity: str = "on-demand"  # on-demand | spot | reserved
    preemption: Preemption | None = None  # set for spot capacity
    owned: Owned | None = None  # bought servers (`mode: owned`): billed like a lease, priced by models.owned

    @property
    def spot(self) -> bool:
        return self.capacity == "spot"


@dataclass(frozen=True)
class Preemption:
    """A spot offer's reclaims, resolved: the rate per node-hour (an instance is a node)."""

    rate: Range  # per node-hour; the middle is used for the verdict, the ends for low/high
    per: str  # as written: node-hour | instance-hour | gpu-hour
    rate_as_written: Range
    notice_hours: float
    max_lifetime_hours: float | None
    restart_hours: float | None  # None: the offer's reschedule wait + data reload
    source: str | None = None
    as_of: str | None = None


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
    step: Step | None = None
    data_wait: float | None = None
    memory_gb: float | None = None
    speed: tuple[tuple[str, float], ...] = ()  # (gpu id, speed relative to the first GPU), user-measured
    data: Data | None = None
    checkpoint_hours: float = 1.0  # inf: `checkpoint_interval: none` (a preempted run starts over)
    start_hours: float = 0.0  # hours from the scenario's start to the workload's (`start:`)
    once: bool = False  # runs once, from its start, for its duration (else an ongoing schedule)
    service: Service | None = None  # an inference service sized by load

    share: float = 1.0  # a fraction of one card (`gpus: 0.5`; then gpus is 1), else 1

    @property
    def cards(self) -> float:
        """The cards' worth of work: gpus x share (0.5 for half a card)."""
        return self.gpus * self.share

    @property
    def gpus_stated(self) -> float:
        """`gpus` as the scenario states it: whole cards, or the fraction of one card (0.5)."""
        return self.share if self.share < 1 else self.gpus

    @property
    def end_hours(self) -> float:
        """Hours from the scenario's start to the end of the workload's schedule."""
        return self.start_hours + self.duration_hours

    @property
    def duration_days(self) -> float:
        return self.duration_hours / 24


@dataclass(frozen=True)
class Service:
    """`service:` of an inference workload: its load and one replica's throughput on the first GPU."""

    peak: float
    unit: str
    per_replica: float
    min_replicas: int
    daily_profile: tuple[float, ...]  # 24 hourly shares of the peak (flat: all 1.0)
    gpus_per_replica: int

    def replicas(self) -> list[int]:
        """Replicas in each hour of the day: max(min_replicas, ceil(peak x share / per_replica))."""
        return [max(self.min_replicas, math.ceil(self.peak * x / self.per_replica - 1e-9))
                for x in self.daily_profile]


@dataclass(frozen=True)
class Commitment:
    """Cards already signed for: `cards` of `offer` until `until_hours` after the scenario's start."""

    offer: str
    cards: int
    until: date
    until_hours: float
    paid: bool


@dataclass(frozen=True)
class Data:
    size_gb: float
    site: str
    moves: str  # once | per-run | daily


@dataclass(frozen=True)
class Link:
    src: str
    dst: str
    gbps: float
    cost_per_gb: float
    latency_ms: float | None
    one_way: bool


@dataclass(frozen=True)
class Step:
    compute_s: float
    gradient_gb: float
    overlap: float


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
    sites: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    start: date | None = None  # the scenario's first day
    commitments: tuple[Commitment, ...] = ()

    def offer(self, offer_id: str) -> Offer:
        for o in self.offers:
            if o.id == offer_id:
                return o
        raise KeyError(offer_id)


def with_service(w: Workload, sv: Service) -> Workload:
    """`w` as one schedule of its service `sv`: the peak hour's cards (`gpus`), for the replica-hours of
    a day spread over them (`hours_per_day`), no window; `sv` keeps the hour-by-hour shape."""
    from dataclasses import replace

    replicas = sv.replicas()
    peak = max(replicas)
    if peak <= 0:
        return replace(w, service=sv)
    return replace(w, gpus=peak * sv.gpus_per_replica, hours_per_day=sum(replicas) / peak, window=None, service=sv)

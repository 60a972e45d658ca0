"""`gpuplan.audit/1`: what `gpuplan audit -o json` prints (built by `contracts.audit_document`; every audit
renderer reads it).

Shares and utilisation are ratios 0..1; hours are GPU-hours observed; money is null without a price
(`--price` or `--offer`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuplan.contracts._base import Count, Int, Record

SCHEMA = "gpuplan.audit/1"

GpuClass = Literal["busy", "idle", "starved", "mixed", "partial"]


class BadByKind(Record):
    """Unusable rows by kind; a kind with none is absent."""

    nul_bytes: Count | None = None
    truncated: Count | None = None
    malformed: Count | None = None
    na: Count | None = None
    unit_change: Count | None = None
    out_of_range: Count | None = None
    duplicate: Count | None = None
    clock_jump: Count | None = None


class BadExamples(Record):
    """The first few locations (`file:line`) of each kind in `bad_by_kind`."""

    nul_bytes: list[str] | None = None
    truncated: list[str] | None = None
    malformed: list[str] | None = None
    na: list[str] | None = None
    unit_change: list[str] | None = None
    out_of_range: list[str] | None = None
    duplicate: list[str] | None = None
    clock_jump: list[str] | None = None


class AuditInput(Record):
    files: list[str]
    rows: Count
    bad_rows: Count
    bad_by_kind: BadByKind
    bad_examples: BadExamples


class Evidence(Record):
    """The figures the class was decided on; `rule` names the rule that decided it."""

    mean_util: float
    interval_s: float = Field(description="Median sampling interval, seconds.")
    switches: Count = Field(description="Busy <-> near-idle changes within stretches without gaps.")
    switches_per_hour: float
    median_stretch_min: float | None
    longest_busy_h: float
    longest_idle_h: float
    rule: GpuClass
    note: Literal["coarse_interval"] | None = Field(
        default=None, description="Present when sampling is too coarse to see a fast sawtooth."
    )
    other_metrics: dict[str, float] | None = Field(
        default=None, description="Means of further metrics in the data (e.g. memory activity), when any."
    )
    fed_util: float | None = Field(
        default=None,
        description="Starved GPUs: mean utilisation while busy (>= 70%), what the GPU does when fed.",
    )


class Timeline(Record):
    start: str = Field(description="Start of the first bin, ISO 8601 UTC; shared by every GPU.")
    step_s: Int = Field(ge=1, description="Bin width, seconds (3600, wider past 60 days).")
    util: list[float | None] = Field(description="Mean utilisation over observed time per bin; null: no data.")


class AuditGpu(Record):
    node: str
    gpu: str
    samples: Count
    observed_hours: float
    gap_hours: float
    mean_util: float
    idle_share: float
    busy_share: float
    class_: GpuClass = Field(alias="class")
    evidence: Evidence
    timeline: Timeline | None = Field(description="null when the data has no timestamps to bin.")


class Classes(Record):
    """GPUs per class."""

    busy: Count
    idle: Count
    starved: Count
    mixed: Count
    partial: Count


class AuditNode(Record):
    node: str
    gpus: Count
    observed_hours: float
    gap_hours: float
    mean_util: float
    idle_share: float
    busy_share: float
    classes: Classes
    cost: float | None
    idle_cost: float | None


class Rule70(Record):
    threshold: float
    below: bool = Field(description="Whether the fleet's mean utilisation is below `threshold`.")
    gpus_below: Count


class Fleet(Record):
    gpus: Count
    mean_util: float
    gpu_hours_observed: float
    gpu_hours_busy: float = Field(description="Sum of utilisation x time: GPU-hours of kernel activity.")
    cost: float | None
    idle_cost: float | None
    idle_share: float
    busy_share: float
    gap_hours: float
    classes: Classes
    unused_cost: float | None = Field(description="(observed - busy GPU-hours) x price.")
    starved_savings: float | None
    currency: str | None
    price_per_gpu_hour: float | None
    price_low: float | None
    price_high: float | None
    rule_70: Rule70
    cost_low: float | None = Field(
        default=None, description="Observed GPU-hours x price_low; present when the price is a range."
    )
    cost_high: float | None = Field(
        default=None, description="Observed GPU-hours x price_high; present when the price is a range."
    )


class AuditDemand(Record):
    file: str = Field(description="The CSV written by --demand-out.")
    mode: Literal["util", "busy"]
    rows: Count


class AuditResult(Record):
    """`gpuplan audit -o json`: per GPU, node and fleet, what the GPUs really did and what it cost."""

    schema_: Literal["gpuplan.audit/1"] = Field(alias="schema")
    input: AuditInput
    gpus: list[AuditGpu]
    nodes: list[AuditNode]
    fleet: Fleet
    demand: AuditDemand | None = Field(default=None, description="Present with --demand-out.")

"""`gpuplan.vendors/1`: what `gpuplan vendors SCENARIO -o json` prints (`contracts.vendors_document.vendors_json`).

The seed article's checklist per offer (node network, NVLink/RoCE, where the data is, support
response), each pass | warn | fail | unknown with its evidence in the output language, and a one-line
summary per provider.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuplan.contracts._base import Count, Record

SCHEMA = "gpuplan.vendors/1"

CheckId = Literal["network-25g", "nvlink-roce", "data-locality", "support-response"]
CheckStatus = Literal["pass", "warn", "fail", "unknown"]


class VendorCheck(Record):
    id: CheckId
    status: CheckStatus
    evidence: str = Field(description="Why, with the figures it used; in the output language.")


class OfferChecks(Record):
    offer: str
    provider: str | None = Field(description="The offer's `provider`; null when it names none.")
    checks: list[VendorCheck] = Field(description="One per check, in the order of `CheckId`.")


class StatusCounts(Record):
    pass_: Count = Field(alias="pass")
    warn: Count
    fail: Count
    unknown: Count


class ProviderSummary(Record):
    provider: str | None = Field(description="null: the offers that name no provider.")
    offers: list[str]
    counts: StatusCounts = Field(description="Checks of the provider's offers by status.")
    summary: str = Field(description="One line: the counts and every check that did not pass.")


class Measured(Record):
    offer: str
    gbps: float = Field(description="The fastest physical link the probe saw on the offer's node.")
    interface: str
    file: str


class Thresholds(Record):
    min_network_gbps: float
    data_warn_share: float = Field(description="Transfer time over the workload's duration above this: warn.")
    data_fail_share: float = Field(description="Above this: fail.")
    support_pass_hours: float = Field(description="A 24x7 first response within this: pass.")
    support_fail_hours: float = Field(description="A response time above this: fail.")


class VendorsResult(Record):
    """`gpuplan vendors -o json`: the article's checklist per offer and provider."""

    schema_: Literal["gpuplan.vendors/1"] = Field(alias="schema")
    scenario: str | None = Field(description="The scenario file; null for a scenario given as text.")
    thresholds: Thresholds
    measured: Measured | None = Field(description="The probe figure given with --measured; null without.")
    offers: list[OfferChecks]
    providers: list[ProviderSummary]

"""What the api returns: one result object per command, holding the engine's answer and building the
command's document (`document()`, `to_json()`) with the builders beside the contracts.

The renderers read the documents; the CLI and the web get these objects from `gpuplan.api` (which
re-exports them under their old names).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gpuplan.constants import Packing, Queueing

if TYPE_CHECKING:
    from gpuplan.contracts.audit import AuditResult as AuditDoc
    from gpuplan.contracts.compare import CompareResult as CompareDoc
    from gpuplan.engines.advise import HoursCurve, WorkloadAdvice
    from gpuplan.engines.pricing import PoolPricing
    from gpuplan.engines.vendors import VendorsResult
    from gpuplan.inputs.catalog import Catalog
    from gpuplan.inputs.scenario_types import Scenario
    from gpuplan.telemetry import AuditResult

DemandMode = Literal["util", "busy"]


@dataclass(frozen=True)
class CompareResult:
    scenario: Scenario
    catalog: Catalog
    advice: list[WorkloadAdvice]
    # workload id -> each option's cost against hours per day (the report's chart); only when asked for
    hours_curves: dict[str, list[HoursCurve]] = dataclasses.field(default_factory=dict)

    def vendors(self) -> VendorsResult:
        """The article's vendor checklist for this comparison's scenario (the compare report shows it)."""
        from gpuplan.engines.vendors import check_vendors

        return check_vendors(self.scenario, min_network_gbps=float(self.catalog.defaults["min_network_gbps"]))

    def document(self, lang: str = "en", explain: bool = False) -> CompareDoc:
        """The `gpuplan.compare/1` contract every compare renderer reads (`explain`: with formula lines)."""
        from gpuplan.contracts.compare_document import compare_document

        return compare_document(self, lang, explain)

    def document_data(self, lang: str = "en", explain: bool = False) -> dict[str, Any]:
        """What `compare -o json` prints: `render.compare.compare_json(self.document(...))`, the same
        data, built without validating the contract again (on big scenarios the validation cost more
        than the document; the contract tests check the two agree)."""
        from gpuplan.contracts.compare_document import compare_data

        return compare_data(self, lang, explain)

    def document_stream(self, lang: str = "en",
                        explain: bool = False) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
        """`document_data` without its `workloads` (its last key), and the workloads one at a time,
        made as asked for: a writer prints each and lets it go (a big scenario's document is never
        whole in memory)."""
        from gpuplan.contracts.compare_document import compare_data_stream

        return compare_data_stream(self, lang, explain)


def heading(*, trace: str, fmt: str, records: int, gpu_hours: float, wait_hours: float, queueing: str,
            packing: str, gpus_per_node: int, prices: dict[str, Any] | None) -> dict[str, Any]:
    """What the table and markdown show above the runs (`SimulateResult.meta()`, and the lean
    path's own)."""
    from gpuplan.inputs.units import format_duration

    return {
        "trace": trace,
        "format": fmt,
        "records": records,
        "gpu_hours": gpu_hours,
        "wait": format_duration(wait_hours) if wait_hours else "0",
        "queueing": queueing,
        "packing": packing if packing == "gpu" else f"node ({gpus_per_node} GPUs)",
        "packing_mode": packing,
        "gpus_per_node": gpus_per_node,
        "prices": prices,
    }


@dataclass(frozen=True)
class SimulateResult:
    """The replays (one `-o json` object per reserved level) and what the table's heading shows."""

    runs: list[dict[str, Any]]
    trace: str
    format: str
    records: int
    gpu_hours: float
    wait_hours: float
    queueing: Queueing
    packing: Packing
    gpus_per_node: int
    prices: PoolPricing | None  # None without a scenario
    max_wait: dict[str, float] = field(default_factory=dict)  # the waiting budget {stat: hours}
    researcher_hour_cost: float | None = None  # the scenario's, when priced
    recommendation: dict[str, Any] = field(default_factory=dict)  # sim.cost.recommend's answer
    spot: dict[str, Any] | None = None  # the spot tier's settings (`--spot` > 0), else None

    def to_json(self) -> dict[str, Any]:
        """What `simulate -o json` prints (`gpuplan.simulate/1`): the runs, one per R, and the
        recommended R (null with `no_recommendation` saying why)."""
        from gpuplan.sim.cost import SCHEMA  # not the contract module: that would load pydantic

        rec = self.recommendation
        out = {
            "schema": SCHEMA,
            "max_wait_hours": dict(self.max_wait),
            "researcher_hour_cost": self.researcher_hour_cost,
            "runs": self.runs,
            "recommended": rec.get("recommended"),
            "no_recommendation": rec.get("no_recommendation"),
            "cheapest": rec.get("cheapest"),
        }
        if self.spot is not None:  # only with a spot tier: without one the output is as it was
            out["spot"] = dict(self.spot)
        return out

    def meta(self) -> dict[str, Any]:
        """The heading the table and markdown renderers show above the runs."""
        return heading(trace=self.trace, fmt=self.format, records=self.records, gpu_hours=self.gpu_hours,
                       wait_hours=self.wait_hours, queueing=self.queueing, packing=self.packing,
                       gpus_per_node=self.gpus_per_node,
                       prices=None if self.prices is None else self.prices.summary())


@dataclass(frozen=True)
class DemandCurve:
    """The hourly demand curve an audit derived (`--demand-out`): its rows as `time,gpu,gpus` CSV."""

    mode: DemandMode
    rows: int
    csv: str


@dataclass(frozen=True)
class AuditReport:
    result: AuditResult
    demand: DemandCurve | None = None

    def demand_info(self, demand_file: str | Path | None) -> dict[str, Any] | None:
        """The JSON's `demand` key: where the curve was written, its mode and its rows."""
        if self.demand is None:
            return None
        return {"file": str(demand_file), "mode": self.demand.mode, "rows": self.demand.rows}

    def document(self, demand_file: str | Path | None = None) -> AuditDoc:
        """The `gpuplan.audit/1` contract every audit renderer reads (`demand_file`: where the caller
        wrote `demand.csv`)."""
        from gpuplan.contracts.audit_document import audit_document

        return audit_document(self.result, self.demand_info(demand_file))

    def to_json(self, demand_file: str | Path | None = None) -> dict[str, Any]:
        """What `audit -o json` prints: the contract as JSON."""
        from gpuplan.contracts.audit_document import document_json

        return document_json(self.document(demand_file))


@dataclass(frozen=True)
class CommitReport:
    """A commit: the `gpuplan.commit/1` document (`to_json`) and what its table and HTML show (`view`)."""

    view: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return dict(self.view["doc"])


@dataclass(frozen=True)
class DecisionPack:
    """Everything `gpuplan report` shows: the answer (`summary`, `engines.pack.decision_summary`) and
    each command's own result, as that command returns it, for its section."""

    summary: dict[str, Any]
    compare: CompareResult
    plan: dict[str, Any]  # `gpuplan.plan/1` as `plan -o json` prints it
    commit: CommitReport
    vendors: VendorsResult
    audit: dict[str, Any] | None  # `gpuplan.audit/1`, when telemetry was given
    scenario: str

    def to_json(self) -> dict[str, Any]:
        """What `report -o json` prints: the answer and each section's own JSON document."""
        return {"schema": "gpuplan.report/1", "scenario": self.scenario, "summary": self.summary,
                "compare": self.compare.document_data(), "plan": self.plan, "commit": self.commit.to_json(),
                "audit": self.audit}

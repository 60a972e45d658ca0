"""`audit`'s result: the telemetry's answer and, when asked for, the hourly demand curve."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from gpuplan.contracts.audit import AuditResult as AuditDoc
    from gpuplan.telemetry import AuditResult

DemandMode = Literal["util", "busy"]


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

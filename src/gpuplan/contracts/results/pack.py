"""`report`'s result: the decision pack (the answer and each command's own result)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplan.contracts.results.commit import CommitReport
    from gpuplan.contracts.results.compare import CompareResult
    from gpuplan.engines.vendors import VendorsResult


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

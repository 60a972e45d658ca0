"""`compare`'s result: the advice per workload, and the `gpuplan.compare/1` document built from it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplan.contracts.compare import CompareResult as CompareDoc
    from gpuplan.engines.advise import HoursCurve, WorkloadAdvice
    from gpuplan.engines.vendors import VendorsResult
    from gpuplan.inputs.catalog import Catalog
    from gpuplan.inputs.scenario_types import Scenario


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

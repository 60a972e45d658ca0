"""What the api returns: one result object per command, holding the engine's answer and building the
command's document (`document()`, `to_json()`) with the builders beside the contracts.

The renderers read the documents; the CLI and the web get these objects from `gpuplan.api` (which
re-exports them under their old names). Each command's result is a module of its own, loaded when a
name is first asked for: a command builds only its own result class (dataclasses cost about a
millisecond each to create, on every run).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplan.contracts.results.audit import AuditReport as AuditReport
    from gpuplan.contracts.results.audit import DemandCurve as DemandCurve
    from gpuplan.contracts.results.audit import DemandMode as DemandMode
    from gpuplan.contracts.results.commit import CommitReport as CommitReport
    from gpuplan.contracts.results.compare import CompareResult as CompareResult
    from gpuplan.contracts.results.pack import DecisionPack as DecisionPack
    from gpuplan.contracts.results.simulate import SimulateResult as SimulateResult

MODULE_OF = {
    "AuditReport": "audit",
    "DemandCurve": "audit",
    "DemandMode": "audit",
    "CommitReport": "commit",
    "CompareResult": "compare",
    "DecisionPack": "pack",
    "SimulateResult": "simulate",
}
"""Each public name and the module (of this package) that defines it."""

__all__ = sorted(MODULE_OF)


def __getattr__(name: str) -> Any:
    if name in MODULE_OF:
        return getattr(importlib.import_module(f"{__name__}.{MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

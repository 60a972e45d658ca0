"""gpuplan: decide where GPU work runs (containers, bare metal or a hybrid pool), with numbers and reasons.

The public API is small: load a scenario, compare it, and read the catalog. Everything else is
reachable through `gpuplan.api` and the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "CompareResult",
    "GpuplanError",
    "ScenarioError",
    "__version__",
    "compare",
    "load_catalog",
    "load_scenario",
]

if TYPE_CHECKING:  # pragma: no cover
    from gpuplan.api import CompareResult, compare
    from gpuplan.errors import GpuplanError, ScenarioError
    from gpuplan.inputs.catalog import load_catalog
    from gpuplan.inputs.scenario import load_scenario

_LAZY = {
    "CompareResult": "gpuplan.api",
    "compare": "gpuplan.api",
    "load_catalog": "gpuplan.inputs.catalog",
    "GpuplanError": "gpuplan.errors",
    "ScenarioError": "gpuplan.errors",
    "load_scenario": "gpuplan.inputs.scenario",
}


def __getattr__(name: str) -> Any:
    # Lazy so that `import gpuplan` (and `gpuplan --help`) does not pull in pydantic or numpy.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gpuplan' has no attribute {name!r}")

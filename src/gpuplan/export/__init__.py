"""Exporters: the plan written as scheduler configuration (Kueue, Slurm, Volcano, SkyPilot).

`export(target, plan, options) -> ExportResult` builds plain objects, checks them (validate.py) and
renders text; nothing here writes files or prints. See docs/export.md for the mapping.
"""

from __future__ import annotations

from importlib import import_module

from gpuplan.export.common import ExportFile, ExportOptions, ExportResult
from gpuplan.export.model import Plan, load_plan, parse_plan

TARGETS = ("kueue", "slurm", "volcano", "skypilot")


def export(target: str, plan: Plan, options: ExportOptions | None = None) -> ExportResult:
    """Render `plan` for `target` (one of TARGETS)."""
    if target not in TARGETS:
        raise ValueError(f"unknown export target {target!r}; expected one of {', '.join(TARGETS)}")
    opts = options or ExportOptions()
    opts.check()
    module = import_module(f"gpuplan.export.{target}")
    result: ExportResult = module.export(plan, opts)
    return result


__all__ = [
    "TARGETS",
    "ExportFile",
    "ExportOptions",
    "ExportResult",
    "Plan",
    "export",
    "load_plan",
    "parse_plan",
]

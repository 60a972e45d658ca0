"""Telemetry: nvidia-smi CSV logs, Prometheus range-query JSON, a live Prometheus; the audit analysis.

Public surface: `read_files`, `fetch_prometheus`, `analyze`, `demand_curve`, `Price`.
"""

from __future__ import annotations

from pathlib import Path

from gpuplan.errors import TelemetryError
from gpuplan.telemetry.analyze import AuditResult, Price, analyze
from gpuplan.telemetry.demand import demand_csv, demand_curve
from gpuplan.telemetry.samples import BAD_KINDS, Collector, Samples

__all__ = [
    "BAD_KINDS",
    "AuditResult",
    "Collector",
    "Price",
    "Samples",
    "analyze",
    "demand_csv",
    "demand_curve",
    "read_into",
]


def read_into(paths: list[Path], collector: Collector) -> None:
    """Read each file by its kind: JSON (starts with `{`) is a Prometheus response, else nvidia-smi CSV."""
    from gpuplan.telemetry.nvsmi import read_nvsmi
    from gpuplan.telemetry.promfile import read_promfile

    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise TelemetryError(
                "no such file", file=path, hint="give nvidia-smi CSV logs or Prometheus JSON files"
            )
        with path.open("rb") as fh:
            head = fh.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
        if head.startswith(b"{"):
            read_promfile(path, collector)
        else:
            read_nvsmi(path, collector)

"""Telemetry: nvidia-smi CSV logs, Prometheus range-query JSON, dcgm-exporter text scrapes, a live
Prometheus; the audit analysis.

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
    """Read each file by its kind: JSON (starts with `{`) is a Prometheus response, Prometheus text
    format (HELP/TYPE lines or DCGM samples) a saved dcgm-exporter scrape, else nvidia-smi CSV.

    A file of which no row can be used stops the audit (TelemetryError, exit 2) with that file's
    bad-row ledger: a 0-GPU fleet is never reported as an answer."""
    from gpuplan.telemetry.nvsmi import read_nvsmi
    from gpuplan.telemetry.promfile import read_promfile
    from gpuplan.telemetry.promtext import looks_like_scrape, read_promtext

    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise TelemetryError(
                "no such file",
                file=path,
                hint="give nvidia-smi CSV logs, Prometheus JSON files or saved dcgm-exporter scrapes",
            )
        with path.open("rb") as fh:
            raw = fh.read(8192)
        head = raw[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
        first_src = len(collector.sources)
        rows_before = collector.rows
        bad_before = dict(collector.bad.counts)
        if head.startswith(b"{"):
            read_promfile(path, collector)
        elif looks_like_scrape(raw):
            read_promtext(path, collector)
        else:
            read_nvsmi(path, collector)
        good = sum(collector.good.get(s, 0) for s in range(first_src, len(collector.sources)))
        if good == 0:
            _no_usable_rows(path, collector, collector.rows - rows_before, bad_before)


def _no_usable_rows(path: Path, collector: Collector, rows: int, bad_before: dict[str, int]) -> None:
    bad = {k: n - bad_before.get(k, 0) for k, n in collector.bad.counts.items() if n > bad_before.get(k, 0)}
    if not rows:
        raise TelemetryError(
            "the file has no data rows",
            file=path,
            hint="nothing to audit in it: check that the logger ran (nvidia-smi -l N, or the scrape loop)",
        )
    ledger = "; ".join(
        f"{kind} {n} (first: {', '.join(e for e in collector.bad.examples.get(kind, []) if e.startswith(str(path)))})"
        for kind, n in ((k, bad[k]) for k in BAD_KINDS if k in bad)
    )
    raise TelemetryError(
        f"no usable row in the file: {rows} rows, all bad: {ledger}",
        file=path,
        hint="check the timestamp and utilization.gpu values (nvidia-smi --query-gpu=timestamp,"
        "utilization.gpu --format=csv -l 10 writes a usable log)",
    )

"""Writes nvidia-smi logs whose truth is known: GPU behaviours, gaps and every kind of bad row.

Used by the telemetry and audit tests. The truth is computed from the very values written, so a
test can demand exact line numbers and counts and means within 0.01.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

T0 = datetime(2024, 3, 4, 0, 0, 0)
STEP_S = 10
HOURS = 6


@dataclass
class GpuTruth:
    node: str
    gpu: str
    cls: str
    utils: list[int] = field(default_factory=list)  # good samples' values, in time order
    gap_hours: float = 0.0

    @property
    def mean(self) -> float:
        return sum(self.utils) / len(self.utils) / 100.0

    @property
    def observed_hours(self) -> float:
        return len(self.utils) * STEP_S / 3600.0


@dataclass
class LogTruth:
    files: list[Path]
    gpus: dict[tuple[str, str], GpuTruth]
    bad: dict[str, list[str]]  # kind -> locations "file:line" in file order
    rows: int  # data rows written (good + bad; blank lines and headers excluded)


def _pattern(kind: str, i: int, rnd: random.Random) -> int | None:
    """Utilisation (percent) of sample i for a behaviour; None = no sample (a gap)."""
    n = HOURS * 3600 // STEP_S
    if kind == "busy":
        return 90 + rnd.randint(0, 9)
    if kind == "idle":
        return rnd.randint(0, 2)
    if kind == "starved":  # 30 s fed, 40 s waiting on the input pipeline
        return 97 + rnd.randint(0, 3) if (i % 7) < 3 else rnd.randint(0, 3)
    if kind == "mixed":  # the job ended after 40% of the window
        return 93 + rnd.randint(0, 5) if i < 0.4 * n else 0
    if kind == "busy_gap":  # busy, with one hour missing from the log
        return None if n // 3 <= i < n // 3 + 360 else 85 + rnd.randint(0, 10)
    if kind == "partial":
        return 45 + rnd.randint(0, 10)
    raise ValueError(kind)


def _ts(i: int) -> str:
    return (T0 + timedelta(seconds=STEP_S * i)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]


def write_logs(directory: Path, seed: int = 7) -> LogTruth:
    """Two logs: `nodeA.csv` (no hostname column: node = file stem; units) and `b.csv` (hostname column,
    columns in another order, `nounits`). Bad rows of every kind are interleaved in nodeA.csv."""
    rnd = random.Random(seed)
    n = HOURS * 3600 // STEP_S
    truth: dict[tuple[str, str], GpuTruth] = {}
    bad: dict[str, list[str]] = {}
    rows = 0

    # ---- nodeA.csv: timestamp, index, utilization.gpu [%], memory.used [MiB]
    kinds_a = ["busy", "starved", "idle", "mixed", "busy_gap", "partial"]
    path_a = directory / "nodeA.csv"
    lines = ["timestamp, index, utilization.gpu [%], memory.used [MiB]"]
    for g, kind in enumerate(kinds_a):
        truth[("nodeA", str(g))] = GpuTruth("nodeA", str(g), "busy" if kind == "busy_gap" else kind)

    def mark(kind: str) -> None:
        bad.setdefault(kind, []).append(f"{path_a}:{len(lines)}")

    for i in range(n):
        for g, kind in enumerate(kinds_a):
            v = _pattern(kind, i, rnd)
            if v is None:
                continue
            lines.append(f"{_ts(i)}, {g}, {v} %, {1000 + v} MiB")
            truth[("nodeA", str(g))].utils.append(v)
            rows += 1
            if g == 0 and i % 97 == 5:  # a second sample at the same timestamp: duplicate
                lines.append(f"{_ts(i)}, {g}, 3 %, 1000 MiB")
                rows += 1
                mark("duplicate")
        if i % 500 == 17:
            lines.append("\x00\x00\x00\x00\x00\x00")
            rows += 1
            mark("nul_bytes")
        if i % 400 == 33:
            lines.append(f"{_ts(i)}, 1")
            rows += 1
            mark("truncated")
        if i % 450 == 41:
            lines.append(f"{_ts(i)}, 2, [N/A], [N/A]")
            rows += 1
            mark("na")
        if i % 600 == 59:
            lines.append(f"{_ts(i)}, 2, 50 %, 2 GiB")
            rows += 1
            mark("unit_change")
        if i % 700 == 61:
            lines.append(f"{_ts(i)}, 3, 50 %, 10 MiB, extra")
            rows += 1
            mark("malformed")
        if i % 710 == 63:
            lines.append("2024/13/45 99:99:99.000, 3, 50 %, 10 MiB")
            rows += 1
            mark("malformed")
        if i % 800 == 71:
            lines.append(f"{_ts(i)}, 4, 180 %, 10 MiB")
            rows += 1
            mark("out_of_range")
        if i % 900 == 89 and i > 400:  # the clock stepped back an hour for one sample
            lines.append(f"{_ts(i - 360)}, 5, 7 %, 10 MiB")
            rows += 1
            mark("clock_jump")
        if i == n // 2:  # the logger restarted: a repeated identical header and a blank line (not bad)
            lines.append("")
            lines.append("timestamp, index, utilization.gpu [%], memory.used [MiB]")
    path_a.write_text("\n".join(lines) + "\n", encoding="utf-8")

    # ---- b.csv: hostname column, other order, nounits; GPUs identified by index on host nodeB
    path_b = directory / "b.csv"
    lines_b = ["index, utilization.gpu, hostname, timestamp, name"]
    kinds_b = ["starved", "busy"]
    for g, kind in enumerate(kinds_b):
        truth[("nodeB", str(g))] = GpuTruth("nodeB", str(g), kind)
    for i in range(n):
        for g, kind in enumerate(kinds_b):
            v = _pattern(kind, i, rnd)
            assert v is not None
            lines_b.append(f"{g}, {v}, nodeB, {_ts(i)}, NVIDIA H100 80GB HBM3")
            truth[("nodeB", str(g))].utils.append(v)
            rows += 1
    path_b.write_text("\n".join(lines_b) + "\n", encoding="utf-8")
    truth[("nodeA", "4")].gap_hours = 1.0  # 360 samples missing: 3610 s between samples, 10 s observed
    return LogTruth([path_a, path_b], truth, bad, rows)

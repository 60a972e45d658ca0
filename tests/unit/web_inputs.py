"""Small inputs for the report and web tests: a job trace, an nvidia-smi log, and the commands' JSON."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed-910b.yaml"
HYBRID = ROOT / "examples" / "seed-hybrid.yaml"


def write_trace(path: Path) -> Path:
    rows = ["submit_time,duration,gpus"]
    t = 0
    for i in range(60):
        t += 600 + (i * 37) % 900
        rows.append(f"{t},{1800 + (i * 611) % 9000},{(1, 2, 4, 8, 1)[i % 5]}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def write_nvsmi(path: Path) -> Path:
    """One node, three GPUs, an hour at 60 s: GPU 0 busy, GPU 1 idle, GPU 2 alternating (starved-looking)."""
    t0 = datetime(2024, 3, 4)
    lines = ["timestamp, index, utilization.gpu [%], memory.used [MiB]"]
    for i in range(60):
        ts = (t0 + timedelta(seconds=60 * i)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        lines += [f"{ts}, 0, 97 %, 30000 MiB", f"{ts}, 1, 0 %, 100 MiB", f"{ts}, 2, {95 if i % 2 else 2} %, 9000 MiB"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> object:
    from gpuplan.cli import main

    capsys.readouterr()
    rc = main([*args, "-o", "json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)

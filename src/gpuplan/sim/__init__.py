"""Trace replay through a hybrid pool: a reserved pool of R GPUs that spills to an elastic one.

- `traces`: readers for job traces (generic CSV, Alibaba 2023 openb, Alibaba PAI 2020, Philly,
  Helios, Tiresias) into one plain `Trace`.
- `replay`: the replay engine, a plain reference (`replay_reference`) and a compiled one (`replay`)
  with the same exact semantics, and `summarize` into the `-o json` contract.
- `cost`: pricing a replay (lease of R cards for the trace's span + ops + burst GPU-hours).

The engine knows jobs and pools, not file formats.
"""

from __future__ import annotations

from gpuplan.sim.cost import price_replay
from gpuplan.sim.replay import (
    ReplayResult,
    parse_reserved,
    replay,
    replay_reference,
    simulate,
    summarize,
)
from gpuplan.sim.traces import FORMATS, Trace, read_trace

__all__ = [
    "FORMATS",
    "ReplayResult",
    "Trace",
    "parse_reserved",
    "price_replay",
    "read_trace",
    "replay",
    "replay_reference",
    "simulate",
    "summarize",
]

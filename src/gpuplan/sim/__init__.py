"""Trace replay through a hybrid pool: a reserved pool of R GPUs that spills to an elastic one.

- `traces`: readers for job traces (generic CSV, Alibaba 2023 openb, Alibaba PAI 2020, Philly,
  Helios, Tiresias) into one plain `Trace`; `trace_formats`: the formats by their header.
- `replay`: the replay engine, a plain reference (`replay_reference`) and a compiled one (`replay`)
  with the same exact semantics, `read_jobs` (a trace file's jobs, through the C reader where it can)
  and `summarize` into the `-o json` contract.
- `pool`: the pool's rules (the sizes a sweep names, the checks, the layout in nodes).
- `cost`: pricing a replay (lease of R cards for the trace's span + ops + burst GPU-hours).

The engine knows jobs and pools, not file formats. Names load on first use; numpy loads only where
a function uses it (`gpuplan.lazy`): a replay of a plain CSV through the C extension never does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from gpuplan.sim.cost import price_replay
    from gpuplan.sim.pool import parse_reserved
    from gpuplan.sim.replay import ReplayResult, replay, replay_reference, simulate, summarize
    from gpuplan.sim.trace_formats import FORMATS
    from gpuplan.sim.traces import Trace, read_trace

_LAZY = {
    "FORMATS": "gpuplan.sim.trace_formats",
    "ReplayResult": "gpuplan.sim.replay",
    "Trace": "gpuplan.sim.traces",
    "parse_reserved": "gpuplan.sim.pool",
    "price_replay": "gpuplan.sim.cost",
    "read_trace": "gpuplan.sim.traces",
    "replay": "gpuplan.sim.replay",
    "replay_reference": "gpuplan.sim.replay",
    "simulate": "gpuplan.sim.replay",
    "summarize": "gpuplan.sim.replay",
}

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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gpuplan.sim' has no attribute {name!r}")

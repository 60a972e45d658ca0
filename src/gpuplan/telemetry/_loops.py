"""The audit's two compiled loops, `parse_block` and `accumulate`, and the layout of their state.

They come from the C extension `_ctelemetry` (`_ctelemetry.c`, built by `pip install`: loads in about
a millisecond) where it was built, else from the numba kernels in `_kernels` (the same code, which
also serves as the oracle the C extension is tested against; loading numba and its cached kernels
takes about a second per process). GPUPLAN_AUDIT_KERNEL=numba forces the numba kernels.

The state constants are those of `_kernels` (checked equal by the tests), here so that the state
can be set up without importing numba.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

NO_TIME = -(2**62)
# Per-GPU integer state columns (si) and float state columns (sf).
I_HAS, I_LAST_T, I_COUNT, I_FIRST_T, I_DT, I_DTN, I_HOUR, I_REC = range(8)
F_LAST_U, F_OBS, F_WU, F_IDLE, F_BUSY, F_FED, F_HWU, F_HWB, F_REC_W, F_HWO = range(10)
N_SI = 8
N_SF = 10

_loaded: dict[str, Callable[..., Any]] = {}


def implementation() -> str:
    """'c' or 'numba': where the loops come from in this process."""
    _load()
    return "c" if "c" in _loaded else "numba"


def _load() -> None:
    if _loaded:
        return
    import importlib

    mod: Any = None
    if os.environ.get("GPUPLAN_AUDIT_KERNEL", "") != "numba":
        try:
            mod = importlib.import_module("gpuplan.telemetry._ctelemetry")
            _loaded["c"] = mod.parse_block
        except ImportError:  # not built (no C compiler or Python headers at install): numba
            mod = None
    if mod is None:
        mod = importlib.import_module("gpuplan.telemetry._kernels")
    _loaded["parse_block"] = mod.parse_block
    _loaded["accumulate"] = mod.accumulate


def parse_block(*args: Any) -> int:
    """See `_kernels.parse_block`."""
    _load()
    return int(_loaded["parse_block"](*args))


def accumulate(*args: Any) -> tuple[int, int, int, int]:
    """See `_kernels.accumulate`."""
    _load()
    n_dt, n_pend, n_hour, n_rec = _loaded["accumulate"](*args)
    return int(n_dt), int(n_pend), int(n_hour), int(n_rec)

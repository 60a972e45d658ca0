"""Types of the C extension `_ctelemetry.c` (the audit's parser and fold; see `_loops` for the semantics)."""

from typing import Any

def parse_block(
    buf: Any,
    start: int,
    ncol: int,
    i_time: int,
    i_gpu: int,
    i_util: int,
    unit_start: Any,
    unit_len: Any,
    units: Any,
    out_t: Any,
    out_g: Any,
    out_u: Any,
    out_ls: Any,
) -> int: ...
def accumulate(
    key: Any,
    t: Any,
    u: Any,
    si: Any,
    sf: Any,
    bad: Any,
    o_dt: Any,
    o_pend: Any,
    o_pend_u: Any,
    o_hour: Any,
    o_hour_f: Any,
    o_rec: Any,
    o_rec_w: Any,
    max_sure_ms: int,
    idle_below: float,
    busy_from: float,
    near_idle_below: float,
) -> tuple[int, int, int, int]: ...

"""The audit's two hot loops, `parse_block` and `accumulate`, and the layout of their state.

One compiled back-end, the C extension `_ctelemetry` (`_ctelemetry.c`, built by `pip install`), and
one plain reference per loop, which is both the oracle the tests hold C to and the fallback where the
extension could not be built (no C compiler or Python headers): the same answers, slower.

- `parse_block` (C): a strict parser for ordinary nvidia-smi lines. Its reference is the careful
  reader of `nvsmi.py` (polars), which reads every line, odd ones included: the C parser accepts
  only lines the careful reader reads to exactly the same values, and refuses the rest, which go to
  the careful reader. Without the extension every line goes there.
- `accumulate` (C): one pass over samples folding per-GPU state; `accumulate_reference` below is the
  same loop in plain Python, line for line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

NO_TIME = -(2**62)
# Per-GPU integer state columns (si) and float state columns (sf).
I_HAS, I_LAST_T, I_COUNT, I_FIRST_T, I_DT, I_DTN, I_HOUR, I_REC = range(8)
# F_HWU, F_HWB, F_HWO: the open clock hour's util x time, in-use time, observed time.
F_LAST_U, F_OBS, F_WU, F_IDLE, F_BUSY, F_FED, F_HWU, F_HWB, F_REC_W, F_HWO = range(10)
N_SI = 8
N_SF = 10

_module: list[Any] = []  # [the C extension or None], once looked up


def compiled() -> Any | None:
    """The C extension `_ctelemetry`, or None where `pip install` could not build it."""
    if not _module:
        try:
            _module.append(importlib.import_module("gpuplan.telemetry._ctelemetry"))
        except ImportError:
            _module.append(None)
    return _module[0]


def implementation() -> str:
    """'c' or 'reference': which loops this process runs."""
    return "reference" if compiled() is None else "c"


def parse_block(*args: Any) -> int:
    """The C strict parser (see `_ctelemetry.c`); callers check `compiled()` first."""
    mod = compiled()
    if mod is None:
        raise RuntimeError("the C parser is not built; nvsmi reads every line the careful way")
    return int(mod.parse_block(*args))


def accumulate(*args: Any) -> tuple[int, int, int, int]:
    """Fold a block of samples: the C loop, else `accumulate_reference` (the same answers)."""
    mod = compiled()
    fn = accumulate_reference if mod is None else mod.accumulate
    n_dt, n_pend, n_hour, n_rec = fn(*args)
    return int(n_dt), int(n_pend), int(n_hour), int(n_rec)


def accumulate_reference(
    key: np.ndarray, t: np.ndarray, u: np.ndarray, si: np.ndarray, sf: np.ndarray, bad: np.ndarray,
    o_dt: np.ndarray, o_pend: np.ndarray, o_pend_u: np.ndarray, o_hour: np.ndarray, o_hour_f: np.ndarray,
    o_rec: np.ndarray, o_rec_w: np.ndarray, max_sure_ms: int, idle_below: float, busy_from: float,
    near_idle_below: float,
) -> tuple[int, int, int, int]:
    """Fold samples (in input order) into the per-GPU state `si` (int64, keys x N_SI) and `sf`
    (float64, keys x N_SF), both updated in place. `bad[i]` is set to 1 for a clock jump (earlier than
    the GPU's latest timestamp), 2 for a duplicate timestamp. Returns the numbers of rows written to
    o_dt (k, interval ms, run length), o_pend (k, t0, dt) + o_pend_u, o_hour (k, hour) + o_hour_f
    (util x s, in-use s, observed s) and o_rec (k, state, pending, dt) + o_rec_w.

    Per GPU, each sample closes the previous one, which stands for the interval dt = t - t0 until it
    (weight w = dt / 1000 s). An interval of at most `max_sure_ms` is never a gap: its w is added at
    once (observed, w x u0, idle where u0 < idle_below, busy and w x u0 where u0 >= busy_from, and
    the clock hour of t0); a longer one is written to o_pend, resolved once the median is known.
    Stretches: state 1 busy (u0 >= busy_from), 0 near idle (u0 < near_idle_below), 2 neither."""
    kl, tl, ul = key.tolist(), t.tolist(), u.tolist()  # float32 -> float exactly
    S = si.tolist()
    F = sf.tolist()
    out_dt: list[tuple[int, int, int]] = []
    out_pend: list[tuple[int, int, int, float]] = []
    out_hour: list[tuple[int, int, float, float, float]] = []
    out_rec: list[tuple[int, int, int, int, float]] = []
    for i in range(len(kl)):
        k = kl[i]
        ti = tl[i]
        s_, f_ = S[k], F[k]
        if s_[I_HAS] == 0:
            s_[I_HAS] = 1
            s_[I_FIRST_T] = ti
            s_[I_LAST_T] = ti
            s_[I_COUNT] = 1
            f_[F_LAST_U] = ul[i]
            continue
        t0 = s_[I_LAST_T]
        if ti < t0:
            bad[i] = 1
            continue
        if ti == t0:
            bad[i] = 2
            continue
        u0 = f_[F_LAST_U]
        dt = ti - t0
        s_[I_LAST_T] = ti
        s_[I_COUNT] += 1
        f_[F_LAST_U] = ul[i]
        if s_[I_DTN] > 0 and s_[I_DT] == dt:
            s_[I_DTN] += 1
        else:
            if s_[I_DTN] > 0:
                out_dt.append((k, s_[I_DT], s_[I_DTN]))
            s_[I_DT] = dt
            s_[I_DTN] = 1
        sure = dt <= max_sure_ms
        w = dt / 1000.0
        if sure:
            f_[F_OBS] += w
            f_[F_WU] += w * u0
            if u0 < idle_below:
                f_[F_IDLE] += w
            if u0 >= busy_from:
                f_[F_BUSY] += w
                f_[F_FED] += w * u0
            h = t0 // 3600000
            if s_[I_HOUR] != h:
                if s_[I_HOUR] != NO_TIME:
                    out_hour.append((k, s_[I_HOUR], f_[F_HWU], f_[F_HWB], f_[F_HWO]))
                s_[I_HOUR] = h
                f_[F_HWU] = 0.0
                f_[F_HWB] = 0.0
                f_[F_HWO] = 0.0
            f_[F_HWU] += w * u0
            f_[F_HWO] += w
            if u0 >= idle_below:
                f_[F_HWB] += w
        else:
            out_pend.append((k, t0, dt, u0))
        s = 1 if u0 >= busy_from else (0 if u0 < near_idle_below else 2)
        if s != 2:
            if s_[I_REC] == s:
                if sure:
                    f_[F_REC_W] += w
            else:
                if s_[I_REC] >= 0:
                    out_rec.append((k, s_[I_REC], 0, 0, f_[F_REC_W]))
                s_[I_REC] = s
                f_[F_REC_W] = w if sure else 0.0
            if not sure:
                out_rec.append((k, s, 1, dt, f_[F_REC_W]))
                s_[I_REC] = -1
                f_[F_REC_W] = 0.0
        elif not sure:
            if s_[I_REC] >= 0:
                out_rec.append((k, s_[I_REC], 0, 0, f_[F_REC_W]))
            out_rec.append((k, 2, 1, dt, 0.0))
            s_[I_REC] = -1
            f_[F_REC_W] = 0.0
    si[:] = S if S else si
    sf[:] = F if F else sf
    for n_out, rows, ints, floats in (
        (len(out_dt), out_dt, o_dt, None),
        (len(out_pend), out_pend, o_pend, o_pend_u),
        (len(out_hour), out_hour, o_hour, o_hour_f),
        (len(out_rec), out_rec, o_rec, o_rec_w),
    ):
        if not n_out:
            continue
        w_int = ints.shape[1]
        for r, row in enumerate(rows):
            ints[r] = row[:w_int]
            if floats is not None:
                floats[r] = row[w_int:] if floats.ndim == 2 else row[w_int]
    return len(out_dt), len(out_pend), len(out_hour), len(out_rec)

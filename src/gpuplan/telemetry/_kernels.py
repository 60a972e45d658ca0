"""Compiled loops (numba, cached on disk) for the two hot paths of the audit.

- `parse_block`: a strict parser for well-formed nvidia-smi CSV blocks. It accepts only lines that
  the careful (polars) path would accept with exactly the same values, and gives up (returns a
  negative number) at the first line that is in any way unusual; the caller then parses that block
  with the careful path, which classifies and counts every bad line.
- `accumulate`: one pass over a block of samples in input order that keeps only small per-GPU state
  (last sample, running sums, the open busy/idle stretch, the current hour) and writes compact
  summaries: interval counts (for the median), long intervals (possible gaps, resolved once the
  median is known), closed stretches and closed hours. Semantics: see `gpuplan.telemetry.stream`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

NO_TIME = np.int64(-(2**62))
SPACE = 32
TAB = 9
COMMA = 44
NEWLINE = 10
DOT = 46
PERCENT = 37


@njit(cache=True)
def _is_ws(c):  # type: ignore[no-untyped-def]
    return c == SPACE or c == TAB  # noqa: SIM109  (numba: plain comparisons)


@njit(cache=True)
def _digits(buf, s, n):  # type: ignore[no-untyped-def]
    v = 0
    for i in range(s, s + n):
        d = buf[i] - 48
        if d < 0 or d > 9:
            return -1
        v = v * 10 + d
    return v


@njit(cache=True)
def _days_from_civil(y, m, d):  # type: ignore[no-untyped-def]
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    mp = (m + 9) % 12
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


@njit(cache=True)
def _time_ms(buf, s, e, sep):  # type: ignore[no-untyped-def]
    """`YYYY/MM/DD HH:MM:SS.fff` (sep '/', blank between) or `YYYY-MM-DD[ T]HH:MM:SS.fff` (sep '-')."""
    while s < e and _is_ws(buf[s]):
        s += 1
    while e > s and _is_ws(buf[e - 1]):
        e -= 1
    if e - s != 23:
        return NO_TIME
    if buf[s + 4] != sep or buf[s + 7] != sep or buf[s + 13] != 58 or buf[s + 16] != 58:
        return NO_TIME
    mid = buf[s + 10]
    if not (mid == SPACE or (sep == 45 and mid == 84)):
        return NO_TIME
    if buf[s + 19] != DOT:
        return NO_TIME
    y = _digits(buf, s, 4)
    mo = _digits(buf, s + 5, 2)
    d = _digits(buf, s + 8, 2)
    hh = _digits(buf, s + 11, 2)
    mi = _digits(buf, s + 14, 2)
    ss = _digits(buf, s + 17, 2)
    ms = _digits(buf, s + 20, 3)
    if y < 0 or mo < 1 or mo > 12 or d < 1 or hh < 0 or hh > 23 or mi < 0 or mi > 59 or ss < 0 or ss > 59:
        return NO_TIME
    if ms < 0:
        return NO_TIME
    leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0
    dim = 31
    if mo == 2:
        dim = 29 if leap else 28
    elif mo == 4 or mo == 6 or mo == 9 or mo == 11:
        dim = 30
    if d > dim:
        return NO_TIME
    days = _days_from_civil(y, mo, d)
    return ((days * 24 + hh) * 60 + mi) * 60000 + ss * 1000 + ms


@njit(cache=True)
def _index(buf, s, e):  # type: ignore[no-untyped-def]
    """A GPU index written canonically (`0`, `7`, `12`; no sign, no leading zero), else -1."""
    while s < e and _is_ws(buf[s]):
        s += 1
    while e > s and _is_ws(buf[e - 1]):
        e -= 1
    n = e - s
    if n < 1 or n > 9 or (n > 1 and buf[s] == 48):
        return -1
    return _digits(buf, s, n)


@njit(cache=True)
def _util(buf, s, e):  # type: ignore[no-untyped-def]
    """`98`, `98 %`, `98.5 %` -> percent as float64 (exactly as a decimal parse gives it); -1 if unusual
    or outside 0..100."""
    while s < e and _is_ws(buf[s]):
        s += 1
    while e > s and _is_ws(buf[e - 1]):
        e -= 1
    while e > s and (buf[e - 1] == SPACE or buf[e - 1] == PERCENT):  # strip_chars_end(" %")
        e -= 1
    mant = 0
    nd = 0
    frac = 0
    i = s
    while i < e and 48 <= buf[i] <= 57:
        mant = mant * 10 + (buf[i] - 48)
        nd += 1
        i += 1
    if nd == 0 or nd > 9:
        return -1.0
    if i < e:
        if buf[i] != DOT:
            return -1.0
        i += 1
        while i < e and 48 <= buf[i] <= 57:
            mant = mant * 10 + (buf[i] - 48)
            frac += 1
            i += 1
        if frac == 0 or frac > 6 or i != e:
            return -1.0
    v = mant / (10.0**frac) if frac else float(mant)
    if v > 100.0:
        return -1.0
    return v


@njit(cache=True)
def parse_block(buf, start, ncol, i_time, i_gpu, i_util, unit_start, unit_len, units, out_t, out_g, out_u, out_ls):  # type: ignore[no-untyped-def]
    """Parse the lines of `buf` from byte `start` (whole lines, `\n` or `\r\n` ended except maybe the
    last). Returns the number of rows when all lines were accepted, else -1 - (rows accepted before the
    first line it does not accept); `out_ls[row]` is the byte offset where each line (and the refused
    one) starts."""
    n_buf = len(buf)
    pos = start
    row = 0
    while pos < n_buf:
        ls = pos
        out_ls[row] = ls
        field = 0
        fs = pos
        t = NO_TIME
        g = -1
        u = -1.0
        while True:
            c = buf[pos] if pos < n_buf else NEWLINE
            if c == 0 or c == 1 or c == 34:  # NUL, the careful path's sentinel, a quote: not ordinary
                return -1 - row
            crlf = False
            if c == 13:
                if pos + 1 < n_buf and buf[pos + 1] == NEWLINE:
                    crlf = True
                else:
                    return -1 - row
            if c == COMMA or c == NEWLINE or crlf:  # noqa: SIM109
                if field >= ncol:
                    return -1 - row
                if field == i_time:
                    k = fs
                    while k < pos and _is_ws(buf[k]):
                        k += 1
                    sep = buf[k + 4] if k + 4 < pos else 0
                    if sep != 47 and sep != 45:  # the careful path: `/` format if the value has a `/`
                        return -1 - row
                    t = _time_ms(buf, fs, pos, sep)
                    if t == NO_TIME:
                        return -1 - row
                elif field == i_gpu:
                    g = _index(buf, fs, pos)
                    if g < 0:
                        return -1 - row
                elif field == i_util:
                    u = _util(buf, fs, pos)
                    if u < 0.0:
                        return -1 - row
                if unit_len[field] > 0:
                    ul = unit_len[field]
                    if pos - fs < ul:
                        return -1 - row
                    for j in range(ul):
                        if buf[pos - ul + j] != units[unit_start[field] + j]:
                            return -1 - row
                field += 1
                fs = pos + 1
                if crlf:
                    pos += 2
                    break
                if c == NEWLINE:
                    pos += 1
                    break
            pos += 1
        if field != ncol:
            return -1 - row
        out_t[row] = t
        out_g[row] = g
        out_u[row] = np.float32(u / 100.0)
        row += 1
    return row


# Per-GPU integer state columns (si) and float state columns (sf).
I_HAS, I_LAST_T, I_COUNT, I_FIRST_T, I_DT, I_DTN, I_HOUR, I_REC = range(8)
# F_HWU, F_HWB, F_HWO: the open clock hour's util x time, in-use time, observed time.
F_LAST_U, F_OBS, F_WU, F_IDLE, F_BUSY, F_FED, F_HWU, F_HWB, F_REC_W, F_HWO = range(10)
N_SI = 8
N_SF = 10


@njit(cache=True)
def accumulate(  # type: ignore[no-untyped-def]
    key, t, u, si, sf, bad, o_dt, o_pend, o_pend_u, o_hour, o_hour_f, o_rec, o_rec_w,
    max_sure_ms, idle_below, busy_from, near_idle_below,
):
    """Fold samples (in input order) into the per-GPU state. `bad[i]` is set to 1 for a clock jump
    (earlier than the GPU's latest timestamp), 2 for a duplicate timestamp. Returns the numbers of
    rows written to o_dt, o_pend, o_hour, o_rec."""
    n_dt = 0
    n_pend = 0
    n_hour = 0
    n_rec = 0
    for i in range(len(key)):
        k = key[i]
        ti = t[i]
        if si[k, I_HAS] == 0:
            si[k, I_HAS] = 1
            si[k, I_FIRST_T] = ti
            si[k, I_LAST_T] = ti
            si[k, I_COUNT] = 1
            sf[k, F_LAST_U] = np.float64(u[i])
            continue
        t0 = si[k, I_LAST_T]
        if ti < t0:
            bad[i] = 1
            continue
        if ti == t0:
            bad[i] = 2
            continue
        # Close the previous sample of this GPU: it stands for the interval until this one.
        u0 = sf[k, F_LAST_U]
        dt = ti - t0
        si[k, I_LAST_T] = ti
        si[k, I_COUNT] += 1
        sf[k, F_LAST_U] = np.float64(u[i])
        if si[k, I_DTN] > 0 and si[k, I_DT] == dt:
            si[k, I_DTN] += 1
        else:
            if si[k, I_DTN] > 0:
                o_dt[n_dt, 0] = k
                o_dt[n_dt, 1] = si[k, I_DT]
                o_dt[n_dt, 2] = si[k, I_DTN]
                n_dt += 1
            si[k, I_DT] = dt
            si[k, I_DTN] = 1
        sure = dt <= max_sure_ms  # never a gap, whatever the median turns out to be
        w = dt / 1000.0
        if sure:
            sf[k, F_OBS] += w
            sf[k, F_WU] += w * u0
            if u0 < idle_below:
                sf[k, F_IDLE] += w
            if u0 >= busy_from:
                sf[k, F_BUSY] += w
                sf[k, F_FED] += w * u0
            h = t0 // 3600000
            if si[k, I_HOUR] != h:
                if si[k, I_HOUR] != NO_TIME:
                    o_hour[n_hour, 0] = k
                    o_hour[n_hour, 1] = si[k, I_HOUR]
                    o_hour_f[n_hour, 0] = sf[k, F_HWU]
                    o_hour_f[n_hour, 1] = sf[k, F_HWB]
                    o_hour_f[n_hour, 2] = sf[k, F_HWO]
                    n_hour += 1
                si[k, I_HOUR] = h
                sf[k, F_HWU] = 0.0
                sf[k, F_HWB] = 0.0
                sf[k, F_HWO] = 0.0
            sf[k, F_HWU] += w * u0
            sf[k, F_HWO] += w
            if u0 >= idle_below:
                sf[k, F_HWB] += w
        else:
            o_pend[n_pend, 0] = k
            o_pend[n_pend, 1] = t0
            o_pend[n_pend, 2] = dt
            o_pend_u[n_pend] = u0
            n_pend += 1
        # Busy / near-idle stretches: records of (state, time known so far, pending interval).
        s = 1 if u0 >= busy_from else (0 if u0 < near_idle_below else 2)
        if s != 2:
            if si[k, I_REC] == s:
                if sure:
                    sf[k, F_REC_W] += w
            else:
                if si[k, I_REC] >= 0:
                    o_rec[n_rec, 0] = k
                    o_rec[n_rec, 1] = si[k, I_REC]
                    o_rec[n_rec, 2] = 0
                    o_rec[n_rec, 3] = 0
                    o_rec_w[n_rec] = sf[k, F_REC_W]
                    n_rec += 1
                si[k, I_REC] = s
                sf[k, F_REC_W] = w if sure else 0.0
            if not sure:
                o_rec[n_rec, 0] = k
                o_rec[n_rec, 1] = s
                o_rec[n_rec, 2] = 1
                o_rec[n_rec, 3] = dt
                o_rec_w[n_rec] = sf[k, F_REC_W]
                n_rec += 1
                si[k, I_REC] = -1
                sf[k, F_REC_W] = 0.0
        elif not sure:
            if si[k, I_REC] >= 0:
                o_rec[n_rec, 0] = k
                o_rec[n_rec, 1] = si[k, I_REC]
                o_rec[n_rec, 2] = 0
                o_rec[n_rec, 3] = 0
                o_rec_w[n_rec] = sf[k, F_REC_W]
                n_rec += 1
            o_rec[n_rec, 0] = k
            o_rec[n_rec, 1] = 2
            o_rec[n_rec, 2] = 1
            o_rec[n_rec, 3] = dt
            o_rec_w[n_rec] = 0.0
            n_rec += 1
            si[k, I_REC] = -1
            sf[k, F_REC_W] = 0.0
    return n_dt, n_pend, n_hour, n_rec

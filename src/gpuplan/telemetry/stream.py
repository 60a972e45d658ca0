"""Per-GPU statistics folded block by block, so memory does not grow with the number of samples.

The analysis (see `gpuplan.telemetry.analyze`) needs, per GPU, the median sampling interval before it
can tell a gap from a slow sample, and the median is only known at the end. So each block of samples
(in input order) is folded by one compiled pass (`_loops.accumulate`: C, else its plain reference) into:

- running sums over the intervals that can never be gaps (at most MIN_GAP_S long): observed time,
  time x utilisation, idle time, busy time, busy time x utilisation; per clock hour: time x
  utilisation, time in use and observed time;
- counts of each interval length (run-length coded; few distinct values in practice) for the median;
- the intervals longer than MIN_GAP_S, one row each: resolved into gap or not once the median is known;
- the busy / near-idle stretches as records (state, time so far, the long interval that closes the
  record if any): a compact run-length summary from which the class rules' switches and stretch
  lengths follow exactly once the gaps are known.

Only the last sample of each GPU (its interval is still open) and a few numbers per GPU are carried
from one block to the next. The result equals the whole-frame computation (up to float summation
order). Memory: a few numbers per GPU, per GPU-hour, per busy/idle stretch and per long interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gpuplan.telemetry.rules import BUSY_FROM, GAP_FACTOR, IDLE_BELOW, MIN_GAP_S, NEAR_IDLE_BELOW

if TYPE_CHECKING:
    import polars as pl

# The per-sample thresholds; analyze imports them from here. Idle and busy are defined once, in
# gpuplan.constants (busy is the article's 70% rule, the same figure as the catalog's).
# Utilisation is held as float32, where 70 % reads 0.6999999881: every comparison uses these cuts,
# a hair below the thresholds, so that a sample of exactly 70 % counts as busy (>= 0.70), as documented.
_TOL = 1e-6
IDLE_CUT = IDLE_BELOW - _TOL
BUSY_CUT = BUSY_FROM - _TOL
NEAR_IDLE_CUT = NEAR_IDLE_BELOW - _TOL
DEFAULT_INTERVAL_S = 60.0  # a GPU with a single sample: assume a minute
_COMPACT_EVERY = 64  # slices between merges of the interval-count tables
_SLICE = 1 << 16  # samples folded per call of the compiled loop
_N_SF = 10  # = _loops.N_SF


@dataclass
class Aggregates:
    """Per-GPU statistics, arrays indexed by the GPU key id (length = number of registered keys)."""

    samples: np.ndarray  # int64
    observed_s: np.ndarray  # time each sample stands for, summed
    util_s: np.ndarray  # sum(w * u)
    idle_s: np.ndarray  # sum(w) where u < IDLE_BELOW
    busy_s: np.ndarray  # sum(w) where u >= BUSY_FROM
    fed_s: np.ndarray  # sum(w * u) where u >= BUSY_FROM
    gap_s: np.ndarray
    gaps: np.ndarray  # int64
    first_ms: np.ndarray
    last_ms: np.ndarray
    interval_s: np.ndarray  # median interval (DEFAULT_INTERVAL_S when unknown)
    switches: np.ndarray
    median_run_min: np.ndarray  # NaN when the GPU has no busy or near-idle stretch
    longest_busy_h: np.ndarray
    longest_idle_h: np.ndarray
    # key (u32), hour (i64, hours since the epoch), util_s (sum w*u), inuse_s (sum w where u >= 5%),
    # obs_s (sum w: observed time; an interval counts in the hour in which it starts)
    hourly: pl.DataFrame

    @property
    def n_keys(self) -> int:
        return len(self.samples)


@dataclass
class StreamAccumulator:
    """Folds blocks of samples (key, t ms, u) in input order; `finalize` gives `Aggregates`."""

    si: np.ndarray = field(default_factory=lambda: _new_si(0))
    sf: np.ndarray = field(default_factory=lambda: np.zeros((0, _N_SF)))
    dt_parts: list[pl.DataFrame] = field(default_factory=list)
    pend: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    hours: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    recs: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def _grow(self, n_keys: int) -> None:
        have = self.si.shape[0]
        if n_keys <= have:
            return
        size = max(n_keys, 2 * have, 16)
        si = _new_si(size)
        sf = np.zeros((size, _N_SF))
        si[:have] = self.si
        sf[:have] = self.sf
        self.si, self.sf = si, sf

    def add(self, key: np.ndarray, t: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Fold one block; returns per row 0 (kept), 1 (clock jump) or 2 (duplicate timestamp)."""
        n = len(key)
        bad = np.zeros(n, dtype=np.int8)
        if n == 0:
            return bad
        key = np.ascontiguousarray(key, dtype=np.int64)
        t = np.ascontiguousarray(t, dtype=np.int64)
        u = np.ascontiguousarray(u, dtype=np.float32)
        self._grow(int(key.max()) + 1)
        for a in range(0, n, _SLICE):  # slices keep the output buffers small
            self._add(key[a : a + _SLICE], t[a : a + _SLICE], u[a : a + _SLICE], bad[a : a + _SLICE])
        return bad

    def _add(self, key: np.ndarray, t: np.ndarray, u: np.ndarray, bad: np.ndarray) -> None:
        import polars as pl

        from gpuplan.telemetry._loops import accumulate

        n = len(key)
        m = n + 1
        o_dt = np.empty((m, 3), dtype=np.int64)
        o_pend = np.empty((m, 3), dtype=np.int64)
        o_pend_u = np.empty(m)
        o_hour = np.empty((m, 2), dtype=np.int64)
        o_hour_f = np.empty((m, 3))
        o_rec = np.empty((2 * m, 4), dtype=np.int64)
        o_rec_w = np.empty(2 * m)
        n_dt, n_pend, n_hour, n_rec = accumulate(
            key,
            t,
            u,
            self.si,
            self.sf,
            bad,
            o_dt,
            o_pend,
            o_pend_u,
            o_hour,
            o_hour_f,
            o_rec,
            o_rec_w,
            int(MIN_GAP_S * 1000),
            IDLE_CUT,
            BUSY_CUT,
            NEAR_IDLE_CUT,
        )
        if n_dt:
            self.dt_parts.append(
                pl.DataFrame({"k": o_dt[:n_dt, 0], "dt": o_dt[:n_dt, 1], "n": o_dt[:n_dt, 2]})
            )
            if len(self.dt_parts) >= _COMPACT_EVERY:
                self.dt_parts = [_merge_counts(self.dt_parts)]
        if n_pend:
            self.pend.append((o_pend[:n_pend].copy(), o_pend_u[:n_pend].copy()))
        if n_hour:
            self.hours.append((o_hour[:n_hour].copy(), o_hour_f[:n_hour].copy()))
        if n_rec:
            self.recs.append((o_rec[:n_rec].copy(), o_rec_w[:n_rec].copy()))

    def finalize(self, n_keys: int) -> Aggregates:
        import polars as pl

        import gpuplan.telemetry._loops as kk

        self._grow(n_keys)
        si, sf = self.si[:n_keys], self.sf[:n_keys]
        has = si[:, kk.I_HAS] == 1
        # Close what is still open: interval counts, hours, stretches; the last sample of each GPU.
        open_dt = si[:, kk.I_DTN] > 0
        dt_parts = list(self.dt_parts)
        if open_dt.any():
            ks = np.flatnonzero(open_dt)
            dt_parts.append(pl.DataFrame({"k": ks, "dt": si[ks, kk.I_DT], "n": si[ks, kk.I_DTN]}))
        counts = _merge_counts(dt_parts) if dt_parts else None
        interval = _medians(counts, n_keys)

        hour_i = [h[0] for h in self.hours]
        hour_f = [h[1] for h in self.hours]
        open_h = si[:, kk.I_HOUR] != kk.NO_TIME
        if open_h.any():
            ks = np.flatnonzero(open_h)
            hour_i.append(np.column_stack([ks, si[ks, kk.I_HOUR]]))
            hour_f.append(sf[ks][:, [kk.F_HWU, kk.F_HWB, kk.F_HWO]])

        rec_i = [r[0] for r in self.recs]
        rec_w = [r[1] for r in self.recs]
        open_r = si[:, kk.I_REC] >= 0
        if open_r.any():
            ks = np.flatnonzero(open_r)
            rec_i.append(np.column_stack([ks, si[ks, kk.I_REC], np.zeros_like(ks), np.zeros_like(ks)]))
            rec_w.append(sf[ks, kk.F_REC_W])

        obs = sf[:, kk.F_OBS].copy()
        wu = sf[:, kk.F_WU].copy()
        idle = sf[:, kk.F_IDLE].copy()
        busy = sf[:, kk.F_BUSY].copy()
        fed = sf[:, kk.F_FED].copy()
        gap_s = np.zeros(n_keys)
        gaps = np.zeros(n_keys, dtype=np.int64)

        # Long intervals: a gap when longer than GAP_FACTOR x the median (and MIN_GAP_S); a gap
        # counts for one median interval, the rest is gap time.
        if self.pend:
            p = np.concatenate([x[0] for x in self.pend])
            pu = np.concatenate([x[1] for x in self.pend])
            pk, pt, pdt = p[:, 0], p[:, 1], p[:, 2] / 1000.0
            med = interval[pk]
            is_gap = pdt > np.maximum(GAP_FACTOR * med, MIN_GAP_S)
            w = np.where(is_gap, med, pdt)
            _add_sums(pk, w, pu, n_keys, obs, wu, idle, busy, fed)
            gap_s += np.bincount(pk, weights=np.where(is_gap, pdt - med, 0.0), minlength=n_keys)
            gaps += np.bincount(pk[is_gap], minlength=n_keys)
            hour_i.append(np.column_stack([pk, pt // 3_600_000]))
            hour_f.append(np.column_stack([w * pu, w * (pu >= IDLE_CUT), w]))
        # The last sample of each GPU stands for one median interval.
        ks = np.flatnonzero(has)
        if len(ks):
            lu = sf[ks, kk.F_LAST_U]
            w = interval[ks]
            _add_sums(ks, w, lu, n_keys, obs, wu, idle, busy, fed)
            hour_i.append(np.column_stack([ks, si[ks, kk.I_LAST_T] // 3_600_000]))
            hour_f.append(np.column_stack([w * lu, w * (lu >= IDLE_CUT), w]))
            state = np.where(lu >= BUSY_CUT, 1, np.where(lu < NEAR_IDLE_CUT, 0, 2))
            last = state != 2
            kl = ks[last]
            rec_i.append(np.column_stack([kl, state[last], np.full_like(kl, 2), np.zeros_like(kl)]))
            rec_w.append(np.zeros(len(kl)))

        runs = _runs(rec_i, rec_w, interval, n_keys)
        if hour_i:
            hi = np.concatenate(hour_i)
            hf = np.concatenate(hour_f)
            hourly = (
                pl.DataFrame(
                    {
                        "key": hi[:, 0].astype(np.uint32),
                        "hour": hi[:, 1],
                        "util_s": hf[:, 0],
                        "inuse_s": hf[:, 1],
                        "obs_s": hf[:, 2],
                    }
                )
                .group_by("key", "hour")
                .agg(pl.col("util_s").sum(), pl.col("inuse_s").sum(), pl.col("obs_s").sum())
                .sort("key", "hour")
            )
        else:
            hourly = pl.DataFrame(
                schema={
                    "key": pl.UInt32,
                    "hour": pl.Int64,
                    "util_s": pl.Float64,
                    "inuse_s": pl.Float64,
                    "obs_s": pl.Float64,
                }
            )
        return Aggregates(
            samples=si[:, kk.I_COUNT].copy() * has,
            observed_s=obs,
            util_s=wu,
            idle_s=idle,
            busy_s=busy,
            fed_s=fed,
            gap_s=gap_s,
            gaps=gaps,
            first_ms=np.where(has, si[:, kk.I_FIRST_T], 0),
            last_ms=np.where(has, si[:, kk.I_LAST_T], 0),
            interval_s=interval,
            switches=runs[0],
            median_run_min=runs[1],
            longest_busy_h=runs[2],
            longest_idle_h=runs[3],
            hourly=hourly,
        )


def _new_si(n: int) -> np.ndarray:
    import gpuplan.telemetry._loops as kk

    si = np.zeros((n, kk.N_SI), dtype=np.int64)
    si[:, kk.I_HOUR] = kk.NO_TIME
    si[:, kk.I_REC] = -1
    return si


def _merge_counts(parts: list[pl.DataFrame]) -> pl.DataFrame:
    import polars as pl

    return pl.concat(parts).group_by("k", "dt").agg(pl.col("n").sum())


def _medians(counts: pl.DataFrame | None, n_keys: int) -> np.ndarray:
    """Median interval per GPU (seconds) from counts of each interval length (ms)."""
    out = np.full(n_keys, DEFAULT_INTERVAL_S)
    if counts is None or counts.height == 0:
        return out
    c = counts.sort("k", "dt")
    k = c["k"].to_numpy().astype(np.int64)
    dt = c["dt"].to_numpy()
    n = c["n"].to_numpy().astype(np.int64)
    cum = np.cumsum(n)
    total = np.bincount(k, weights=n, minlength=n_keys).astype(np.int64)
    before = np.r_[0, np.cumsum(total)[:-1]]
    ks = np.flatnonzero(total)
    lo = before[ks] + (total[ks] - 1) // 2
    hi = before[ks] + total[ks] // 2
    a = dt[np.searchsorted(cum, lo, side="right")] / 1000.0
    b = dt[np.searchsorted(cum, hi, side="right")] / 1000.0
    out[ks] = (a + b) / 2.0
    return out


def _add_sums(
    k: np.ndarray,
    w: np.ndarray,
    u: np.ndarray,
    n: int,
    obs: np.ndarray,
    wu: np.ndarray,
    idle: np.ndarray,
    busy: np.ndarray,
    fed: np.ndarray,
) -> None:
    b = u >= BUSY_CUT
    obs += np.bincount(k, weights=w, minlength=n)
    wu += np.bincount(k, weights=w * u, minlength=n)
    idle += np.bincount(k, weights=w * (u < IDLE_CUT), minlength=n)
    busy += np.bincount(k, weights=w * b, minlength=n)
    fed += np.bincount(k, weights=w * u * b, minlength=n)


def _runs(
    rec_i: list[np.ndarray], rec_w: list[np.ndarray], interval: np.ndarray, n_keys: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Switches, median stretch (minutes), longest busy and near-idle stretch (hours) per GPU.

    Records are (key, state 0 near-idle / 1 busy / 2 partial, kind, long interval ms) with the time
    known so far; kind 1: closed by a long interval (a gap or not, by the median), kind 2: the GPU's
    last sample (one median interval). A gap ends the stretch of data; partial samples between two
    stretches of the same state do not split it."""
    import polars as pl

    switches = np.zeros(n_keys)
    med = np.full(n_keys, np.nan)
    lb = np.zeros(n_keys)
    li = np.zeros(n_keys)
    if not rec_i:
        return switches, med, lb, li
    r = np.concatenate(rec_i)
    w = np.concatenate(rec_w)
    order = np.argsort(r[:, 0], kind="stable")
    r, w = r[order], w[order]
    k, s, kind, pdt = r[:, 0], r[:, 1], r[:, 2], r[:, 3] / 1000.0
    m = interval[k]
    is_gap = (kind == 1) & (pdt > np.maximum(GAP_FACTOR * m, MIN_GAP_S))
    wp = np.where(kind == 1, np.where(is_gap, m, pdt), np.where(kind == 2, m, 0.0))
    w = w + np.where(s != 2, wp, 0.0)
    new_seg = np.r_[True, (k[1:] != k[:-1]) | is_gap[:-1]]
    seg = np.cumsum(new_seg)
    keep = s != 2
    k2, s2, w2, g2 = k[keep], s[keep], w[keep], seg[keep]
    if len(k2) == 0:
        return switches, med, lb, li
    new_run = np.r_[True, (g2[1:] != g2[:-1]) | (s2[1:] != s2[:-1])]
    switch = np.r_[False, (g2[1:] == g2[:-1]) & (s2[1:] != s2[:-1])]
    run_id = np.cumsum(new_run) - 1
    run_len = np.bincount(run_id, weights=w2)
    switches = np.bincount(k2[switch], minlength=n_keys).astype(np.float64)
    runs = pl.DataFrame({"k": k2[new_run], "s": s2[new_run], "len": run_len})
    agg = runs.group_by("k").agg(
        pl.col("len").median().alias("med"),
        pl.col("len").filter(pl.col("s") == 1).max().alias("busy"),
        pl.col("len").filter(pl.col("s") == 0).max().alias("idle"),
    )
    ks = agg["k"].to_numpy()
    med[ks] = agg["med"].to_numpy() / 60.0
    lb[ks] = agg["busy"].fill_null(0.0).to_numpy() / 3600.0
    li[ks] = agg["idle"].fill_null(0.0).to_numpy() / 3600.0
    return switches, med, lb, li

"""Hourly demand curves: from workload schedules, a demand CSV (`time,gpu,gpus`), or a job trace.

A demand CSV is a sample of usage that repeats. A sample shorter than a day is repeated (whole
copies) to fill at least a day, one shorter than a week to fill at least a week, so the horizon is a
typical period (`Demand.sample_hours` and `repeats` say so; the distribution of demand, and so the
plan's money per month, is the sample's). A workload whose GPU has no row in the CSV keeps its own
schedule over that horizon (`add_schedules`; `Demand.kept` names it) instead of leaving the plan.

Schedules: a workload runs `gpus` cards for `hours_per_day` hours a day on `days_per_week` days,
from the start of the horizon (a Monday 00:00) for `duration`. Its hours are placed inside
`window` ("09:00-18:00") when given, else from 09:00 (wrapping past midnight). An hour partly covered
counts the covered fraction (demand is GPU-hours per hour). Days run Monday first.
"""

from __future__ import annotations

import csv
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import methodcaller
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gpuplan.errors import GpuplanError, ScenarioError

if TYPE_CHECKING:
    from gpuplan.inputs.scenario_types import Workload

HORIZON_START = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday: schedules are placed from here
DEFAULT_START_HOUR = 9.0


@dataclass(frozen=True)
class Demand:
    """Hourly GPU demand per GPU type, with each workload's own curve when built from schedules."""

    start: datetime
    hours: int
    by_gpu: dict[str, np.ndarray]
    by_workload: dict[str, np.ndarray]
    source: str
    # calendar hours the demand covers: `hours` for schedules and CSV rows, the exact span of a trace
    span_hours: float | None = None
    project: bool = True  # schedules (a project with a start and an end); False: a repeating sample
    sample_hours: int | None = None  # hours of the CSV sample before it was repeated
    repeats: int = 1  # whole copies of the sample in `hours`
    kept: tuple[str, ...] = ()  # workloads with no demand rows that keep their own schedule

    @property
    def calendar_hours(self) -> float:
        return float(self.hours) if self.span_hours is None else self.span_hours


def _window(w: Workload) -> tuple[float, float]:
    if w.window is None:
        return DEFAULT_START_HOUR, DEFAULT_START_HOUR + w.hours_per_day
    a, b = w.window.split("-")
    start = int(a[:2]) + int(a[3:]) / 60
    end = int(b[:2]) + int(b[3:]) / 60
    length = (end - start) % 24 or 24.0
    if w.hours_per_day > length + 1e-9:
        raise ScenarioError(
            f"hours_per_day {w.hours_per_day:g} does not fit the window {w.window} ({length:g} h)",
            field=f"workloads[{w.id}].window", hint="widen the window or lower hours_per_day.")
    return start, start + w.hours_per_day


def daily_profile(w: Workload) -> np.ndarray:
    """24 values: the share of each hour of the day the workload runs."""
    start, end = _window(w)
    prof = np.zeros(24)
    for h in range(48):  # the window may wrap past midnight
        lo, hi = max(start, h), min(end, h + 1)
        if hi > lo:
            prof[h % 24] += hi - lo
    return np.minimum(prof, 1.0)


def workload_curve(w: Workload, hours: int) -> np.ndarray:
    prof = daily_profile(w)
    n_days = math.ceil(hours / 24)
    days = np.arange(n_days)
    active_day = (days % 7) < w.days_per_week
    curve = (active_day[:, None] * prof[None, :]).reshape(-1)[:hours] * w.gpus
    # the workload ends after its duration (a partial last day counts its covered part)
    end = w.duration_hours
    t = np.arange(hours, dtype=np.float64)
    frac = np.clip(end - t, 0.0, 1.0)
    return curve * frac


def horizon_hours(workloads: list[Workload] | tuple[Workload, ...], minimum_days: float = 30.0) -> int:
    longest = max((w.duration_hours for w in workloads), default=0.0)
    return math.ceil(max(longest, minimum_days * 24))


DAY_HOURS = 24
WEEK_HOURS = 168


def repeat_sample(d: Demand) -> Demand:
    """A sample shorter than a day (a week) repeated in whole copies to fill at least a day (a week)."""
    if d.hours <= 0 or d.hours >= WEEK_HOURS:
        return d
    period = DAY_HOURS if d.hours < DAY_HOURS else WEEK_HOURS
    reps = math.ceil(period / d.hours)
    if reps <= 1:
        return d
    return Demand(d.start, d.hours * reps, {g: np.tile(c, reps) for g, c in d.by_gpu.items()},
                  {w: np.tile(c, reps) for w, c in d.by_workload.items()}, d.source,
                  span_hours=None if d.span_hours is None else d.span_hours * reps, project=d.project,
                  sample_hours=d.hours, repeats=reps, kept=d.kept)


def add_schedules(d: Demand, workloads: list[Workload] | tuple[Workload, ...]) -> Demand:
    """Workloads whose GPU has no demand in `d` keep their own schedule over `d`'s horizon (placed by
    weekday and hour from `d.start`), so that no workload silently leaves the plan."""
    missing = [w for w in workloads if w.gpus_allowed[0] not in d.by_gpu]
    if not missing:
        return d
    monday = (d.start - timedelta(days=d.start.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    offset = int((d.start - monday) / timedelta(hours=1))
    by_gpu = dict(d.by_gpu)
    by_wl = dict(d.by_workload)
    for w in missing:
        curve = workload_curve(w, offset + d.hours)[offset:]
        by_wl[w.id] = curve
        g = w.gpus_allowed[0]
        by_gpu[g] = by_gpu.get(g, np.zeros(d.hours)) + curve
    return Demand(d.start, d.hours, by_gpu, by_wl, d.source, span_hours=d.span_hours, project=d.project,
                  sample_hours=d.sample_hours, repeats=d.repeats, kept=d.kept + tuple(w.id for w in missing))


def from_schedules(workloads: list[Workload] | tuple[Workload, ...], hours: int | None = None) -> Demand:
    n = hours or horizon_hours(workloads)
    by_wl = {w.id: workload_curve(w, n) for w in workloads}
    by_gpu: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(n))
    for w in workloads:
        by_gpu[w.gpus_allowed[0]] = by_gpu[w.gpus_allowed[0]] + by_wl[w.id]
    return Demand(HORIZON_START, n, dict(by_gpu), by_wl, "schedules")


def _parse_time(text: str) -> datetime:
    t = text.strip()
    try:
        value = float(t)
    except ValueError:
        value = math.nan
    if math.isfinite(value):
        return datetime.fromtimestamp(value, tz=UTC)
    dt = datetime.fromisoformat(t.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def from_csv(path: str | Path) -> Demand:
    """Read `time,gpu,gpus` rows (hourly; time ISO 8601 or epoch seconds); missing hours are 0.

    Parsed in one vectorised pass (`_rows_fast`); a file with anything unusual (a blank line, quotes,
    a missing field, a bad time or number) is read again row by row (`_rows_careful`), which skips
    blank lines and names a bad line."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise GpuplanError(f"cannot read the demand file: {exc.strerror}", file=p,
                           hint="give the CSV that `gpuplan audit --demand-out` writes.") from None
    rows = _rows_fast(raw)
    when_s, code, names, gpus = rows if rows is not None else _rows_careful(p)
    if not len(when_s):
        raise GpuplanError("the demand file has no rows", file=p, hint="expected hourly rows time,gpu,gpus.")
    t0 = float(when_s.min())
    start_s = math.floor(t0 / 3600.0) * 3600.0
    start = datetime.fromtimestamp(start_s, tz=UTC)
    idx = np.floor((when_s - start_s) / 3600.0 + 1e-9).astype(np.int64)
    n = int(idx.max()) + 1
    flat = np.bincount(code * n + idx, weights=gpus, minlength=len(names) * n).reshape(len(names), n)
    by_gpu = {g: flat[i] for i, g in enumerate(names)}
    return Demand(start, n, by_gpu, {}, str(p), project=False)


_Rows = tuple[np.ndarray, np.ndarray, list[str], np.ndarray]  # time (Unix s), GPU code, GPU names, gpus


def _rows_fast(raw: bytes) -> _Rows | None:
    """Every row as (time in Unix seconds, GPU code into the names, names, gpus), or None when the
    careful path must decide.

    numpy only (polars' import alone costs more than parsing a year of hours): the body is split into
    fields once, the numbers are converted by numpy, and each distinct time and GPU name is parsed
    once (an hourly file repeats each time once per GPU type), with the careful path's own rules."""
    try:
        text = raw.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        return None
    text = text.replace("\r\n", "\n")
    head, _, body = text.partition("\n")
    cols = [c.strip().lower() for c in head.split(",")]
    if any(c not in cols for c in ("time", "gpu", "gpus")) or len(set(cols)) != len(cols):
        return None
    body = body.rstrip("\n")
    if '"' in body or "\r" in body:
        return None  # quotes, stray CRs: the csv module decides
    if not body:
        return np.zeros(0), np.zeros(0, dtype=np.int64), [], np.zeros(0)
    ncol = len(cols)
    lines = body.split("\n")
    if set(map(methodcaller("count", ","), lines)) != {ncol - 1}:
        return None  # a blank line, or a line with another number of fields
    fields = body.replace("\n", ",").split(",")
    it, ig, ig2 = cols.index("time"), cols.index("gpu"), cols.index("gpus")
    try:
        g = np.array(fields[ig2::ncol], dtype=np.float64)
    except ValueError:
        return None
    t_list = fields[it::ncol]
    uniq = list(dict.fromkeys(t_list))
    parsed = _times_fast(uniq)
    if parsed is None:
        try:
            parsed = [_parse_time(t).timestamp() for t in uniq]
        except (ValueError, OverflowError):
            return None
    secs = dict(zip(uniq, parsed, strict=True))
    when_s = np.fromiter(map(secs.__getitem__, t_list), dtype=np.float64, count=len(t_list))
    g_list = fields[ig::ncol]
    names: dict[str, int] = {}
    raw_code = {n: names.setdefault(n.strip(), len(names)) for n in dict.fromkeys(g_list)}
    code = np.fromiter(map(raw_code.__getitem__, g_list), dtype=np.int64, count=len(g_list))
    if not (np.isfinite(when_s).all() and np.isfinite(g).all() and (g >= 0).all()):
        return None
    return when_s, code, list(names), g


_PLAIN_ISO = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?Z?")


def _times_fast(texts: list[str]) -> list[float] | None:
    """Unix seconds of plain ISO times (`2024-03-04T13:00:00Z`, UTC or no zone) or epoch numbers,
    converted by numpy; None when any is another form (the careful `_parse_time` decides)."""
    try:
        return np.array(texts, dtype=np.float64).tolist()
    except ValueError:
        pass
    stripped = [t.strip() for t in texts]
    if not all(map(_PLAIN_ISO.fullmatch, stripped)):
        return None
    iso = [t[:-1] if t.endswith("Z") else t for t in stripped]
    try:
        us = np.array(iso, dtype="datetime64[us]").astype(np.int64)
    except ValueError:
        return None
    return (us / 1e6).tolist()


def _rows_careful(p: Path) -> _Rows:
    """Row by row with the csv module: every bad row is an error naming its line."""
    try:
        f = p.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise GpuplanError(f"cannot read the demand file: {exc.strerror}", file=p,
                           hint="give the CSV that `gpuplan audit --demand-out` writes.") from None
    rows: list[tuple[float, str, float]] = []
    with f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise GpuplanError("the demand file is empty", file=p, line=1, hint="expected a header time,gpu,gpus.")
        cols = [h.strip().lower() for h in header]
        missing = [c for c in ("time", "gpu", "gpus") if c not in cols]
        if missing:
            raise GpuplanError(f"missing column(s) {', '.join(missing)}", file=p, line=1,
                               hint="the header is time,gpu,gpus (the format `gpuplan audit --demand-out` writes).")
        it, ig, ig2 = cols.index("time"), cols.index("gpu"), cols.index("gpus")
        for n, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            try:
                when = _parse_time(row[it])
                gpus = float(row[ig2])
            except (ValueError, IndexError, OverflowError):
                raise GpuplanError(
                    f"bad row {row!r}", file=p, line=n,
                    hint="each row is an ISO time or epoch seconds, a GPU id, and a number of GPUs.") from None
            if not math.isfinite(gpus) or gpus < 0:
                raise GpuplanError(f"gpus must be a number >= 0, got {row[ig2]!r}", file=p, line=n, field="gpus",
                                   hint="demand is the number of GPUs in use during that hour.")
            rows.append((when.timestamp(), row[ig].strip(), gpus))
    names: dict[str, int] = {}
    code = np.array([names.setdefault(r[1], len(names)) for r in rows], dtype=np.int64)
    return (np.array([r[0] for r in rows], dtype=np.float64), code, list(names),
            np.array([r[2] for r in rows], dtype=np.float64))


def calendar_span_hours(submit: np.ndarray, duration: np.ndarray) -> float:
    """First submission to the last end as submitted, in hours: the calendar time a trace covers.

    `plan --trace` and `simulate` both price a trace over this span (no queueing, no slowdown in it).
    """
    if len(submit) == 0:
        return 0.0
    return float((np.max(submit + duration) - np.min(submit)) / 3600.0)


def from_trace(path: str | Path, default_gpu: str, fmt: str = "auto") -> Demand:
    """Jobs as submitted (no queueing): each job's GPUs spread over the hours it covers."""
    from gpuplan.sim.traces import read_trace

    tr = read_trace(path, fmt)
    if len(tr.submit) == 0:
        raise GpuplanError("the trace has no jobs", file=path)
    t0 = float(tr.submit.min())
    start_h = (tr.submit - t0) / 3600.0
    end_h = start_h + tr.duration / 3600.0
    n = max(1, math.ceil(float(end_h.max())))
    types = tr.gpu_type if tr.gpu_type is not None else np.array([None] * len(start_h), dtype=object)
    by_gpu: dict[str, np.ndarray] = {}
    for gpu in sorted({str(g) if g else default_gpu for g in types}):
        mask = np.array([(str(g) if g else default_gpu) == gpu for g in types])
        by_gpu[gpu] = _spread(start_h[mask], end_h[mask], tr.gpus[mask], n)
    # the same span `simulate` prices: first submission to the last end as submitted
    return Demand(datetime.fromtimestamp(0, tz=UTC), n, by_gpu, {}, str(path),
                  span_hours=calendar_span_hours(tr.submit, tr.duration), project=False)


def _spread(a: np.ndarray, b: np.ndarray, g: np.ndarray, n: int) -> np.ndarray:
    """Sum of g over [a, b) in hourly bins, exactly (difference arrays on the integrated curve)."""
    # integrate a step function: cumulative GPU-hours F(x); demand in hour k = F(k+1) - F(k)
    edges = np.arange(n + 1, dtype=np.float64)
    total = np.zeros(n + 1)
    for lo, hi, w in ((a, b, g),):
        order_lo = np.argsort(lo)
        order_hi = np.argsort(hi)
        lo_s, w_lo = lo[order_lo], w[order_lo]
        hi_s, w_hi = hi[order_hi], w[order_hi]
        # F(x) = sum w * (min(x, hi) - min(x, lo)) = sum_{lo<x} w (x - lo) - sum_{hi<x} w (x - hi)
        i_lo = np.searchsorted(lo_s, edges, side="left")
        i_hi = np.searchsorted(hi_s, edges, side="left")
        cw_lo = np.concatenate([[0.0], np.cumsum(w_lo)])
        cwx_lo = np.concatenate([[0.0], np.cumsum(w_lo * lo_s)])
        cw_hi = np.concatenate([[0.0], np.cumsum(w_hi)])
        cwx_hi = np.concatenate([[0.0], np.cumsum(w_hi * hi_s)])
        total += edges * cw_lo[i_lo] - cwx_lo[i_lo] - (edges * cw_hi[i_hi] - cwx_hi[i_hi])
    return np.diff(total)

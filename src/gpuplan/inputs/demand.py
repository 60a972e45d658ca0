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
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from operator import methodcaller
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from gpuplan import limits
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
    once_removed: tuple[tuple[str, float], ...] = ()  # (gpu, GPU-hours) of one-off work taken out (`once`)

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


def service_profile(w: Workload) -> np.ndarray:
    """24 values for a service (`service:`): GPUs each hour of the day over the peak's GPUs (`w.gpus`),
    from `Service.replicas`, plus each step up's container start-up (`CONTAINER_STARTUP_HOURS` of the
    new replicas, billed in the hour before)."""
    from gpuplan.constants import CONTAINER_STARTUP_HOURS

    sv = w.service
    assert sv is not None
    cards = np.asarray(sv.replicas(), dtype=np.float64) * sv.gpus_per_replica
    up = np.maximum(np.roll(cards, -1) - cards, 0.0)  # new replicas the next hour
    return np.minimum((cards + up * CONTAINER_STARTUP_HOURS) / w.gpus, 1.0)


def workload_curve(w: Workload, hours: int) -> np.ndarray:
    """GPUs each hour from the scenario's start: nothing before the workload's `start_hours`, then its
    schedule (or a service's replicas) for its duration."""
    offset = int(round(w.start_hours))
    if offset > 0:
        own = workload_curve(replace(w, start_hours=0.0), max(hours - offset, 0))
        return np.concatenate([np.zeros(min(offset, hours)), own])[:hours]
    prof = service_profile(w) if w.service is not None else daily_profile(w)
    n_days = math.ceil(hours / 24)
    days = np.arange(n_days)
    active_day = (days % 7) < w.days_per_week
    curve = (active_day[:, None] * prof[None, :]).reshape(-1)[:hours] * w.cards  # a shared card's slice
    # the workload ends after its duration (a partial last day counts its covered part)
    end = w.duration_hours
    t = np.arange(hours, dtype=np.float64)
    frac = np.clip(end - t, 0.0, 1.0)
    return curve * frac


def horizon_hours(workloads: list[Workload] | tuple[Workload, ...], minimum_days: float = 30.0) -> int:
    longest = max((w.end_hours for w in workloads), default=0.0)
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
                  sample_hours=d.hours, repeats=reps, kept=d.kept, once_removed=d.once_removed)


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
                  sample_hours=d.sample_hours, repeats=d.repeats, kept=d.kept + tuple(w.id for w in missing),
                  once_removed=d.once_removed)


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
    if raw.count(b"\n") > limits.MAX_DEMAND_ROWS + 1:
        raise limits.over(raw.count(b"\n") - 1, limits.MAX_DEMAND_ROWS, what="", unit="rows", field=None, file=p,
                          hint="aggregate the demand to hours (one row per hour and GPU type).")
    rows = _rows_fast(raw)
    when_s, code, names, gpus = rows if rows is not None else _rows_careful(p)
    if not len(when_s):
        raise GpuplanError("the demand file has no rows", file=p, hint="expected hourly rows time,gpu,gpus.")
    for name in names:
        problem = limits.name_problem(name)
        if problem is not None:
            raise GpuplanError(f"the GPU name {name[:40]!r} {problem}", file=p, field="gpu",
                               hint="GPU names are catalog ids such as h100-sxm or ascend-910b.")
    big = np.flatnonzero(gpus > limits.MAX_DEMAND_GPUS)
    if len(big):
        raise limits.over(float(gpus[big[0]]), limits.MAX_DEMAND_GPUS, what="", unit="GPUs in one hour",
                          field="gpus", file=p, line=_line_of(raw, int(big[0])),
                          hint="check the demand's units (GPUs in use during the hour, not GPU-seconds).")
    t0 = float(when_s.min())
    span = (float(when_s.max()) - t0) / 3600.0
    if span >= limits.MAX_DEMAND_HOURS:
        late = int(np.argmax(when_s))
        raise limits.over(span, limits.MAX_DEMAND_HOURS, what="the first to the last time: ", unit="hours",
                          field="time", file=p, line=_line_of(raw, late),
                          hint="a demand covers at most 10 years; check that every time has the same form "
                               "(epoch seconds, not milliseconds).")
    start_s = math.floor(t0 / 3600.0) * 3600.0
    start = datetime.fromtimestamp(start_s, tz=UTC)
    idx = np.floor((when_s - start_s) / 3600.0 + 1e-9).astype(np.int64)
    n = int(idx.max()) + 1
    flat = np.bincount(code * n + idx, weights=gpus, minlength=len(names) * n).reshape(len(names), n)
    by_gpu = {g: flat[i] for i, g in enumerate(names)}
    removed: list[tuple[str, float]] = []
    for g, once in _once_column(raw, start_s, n).items():  # one-off work (audit's `once`): not standing demand
        if g in by_gpu and float(once.sum()) > 0:
            by_gpu[g] = np.maximum(by_gpu[g] - once, 0.0)
            removed.append((g, float(once.sum())))
    return Demand(start, n, by_gpu, {}, str(p), project=False, once_removed=tuple(removed))


def _once_column(raw: bytes, start_s: float, n: int) -> dict[str, np.ndarray]:
    """The `once` column `audit --demand-out` writes for a burst seen once (GPUs of one-off work in each
    hour, by GPU); empty when the file has no such column."""
    text = raw.decode("utf-8-sig", errors="replace")
    head = text.split("\n", 1)[0]
    if "once" not in [c.strip().lower() for c in head.split(",")]:
        return {}
    out: dict[str, np.ndarray] = {}
    for row in csv.DictReader(text.splitlines()):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        try:
            value = float(row.get("once") or 0.0)
            when = _parse_time(row["time"]).timestamp()
        except (ValueError, KeyError):
            continue
        if value <= 0 or not math.isfinite(value):
            continue
        i = int(math.floor((when - start_s) / 3600.0 + 1e-9))
        if 0 <= i < n:
            out.setdefault(row.get("gpu", ""), np.zeros(n))[i] += value
    return out


_Rows = tuple[np.ndarray, np.ndarray, list[str], np.ndarray]  # time (Unix s), GPU code, GPU names, gpus


def _line_of(raw: bytes, row: int) -> int | None:
    """The file line of the `row`-th data row (0-based), counting only lines that hold a row."""
    seen = -1
    for n, line in enumerate(raw.splitlines()[1:], start=2):
        if line.strip(b" \t\r,\""):
            seen += 1
            if seen == row:
                return n
    return None


def _rows_fast(raw: bytes) -> _Rows | None:
    """Every row as (time in Unix seconds, GPU code into the names, names, gpus), or None when the
    careful path must decide.

    The common file is read as bytes (`_rows_bytes`); anything it declines is split as text
    (`_rows_split`). Both give the careful path's answer on the files they accept."""
    rows = _rows_bytes(raw)
    return rows if rows is not None else _rows_split(raw)


_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # the low n bytes of a word
_POW10 = np.array([10.0**i for i in range(23)])  # exact in binary64
# years 1900-2199: whether each is a leap year, and days from 1970-01-01 to its 1 January
_YEAR0 = 1900
_LEAP = np.array([y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) for y in range(_YEAR0, 2200)], dtype=np.int64)
_YEAR_DAYS = np.concatenate([[0], np.cumsum(365 + _LEAP)[:-1]]) - 25567  # 1900-01-01 is day -25567
_MONTH_DAYS = np.array([[0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31],
                        [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]], dtype=np.int64)  # [leap, month]
_BEFORE_MONTH = np.cumsum(_MONTH_DAYS, axis=1) - _MONTH_DAYS  # [leap, month]: days of the year before it


def _lanes(byte: int, mask: int = (1 << 64) - 1) -> np.uint64:
    """`byte` in every byte (lane) of a 64-bit word that `mask` keeps."""
    return np.uint64((0x0101010101010101 * byte) & mask)


def _layout_ok(x: np.ndarray, layout: str) -> bool:
    """Whether every word `x` (its bytes ^ 0x30, first byte lowest) is `layout`: `d` a digit, any
    other character itself."""
    digits = other = expect = 0
    for k, ch in enumerate(layout):
        if ch == "d":
            digits |= 0xFF << (8 * k)
        else:
            other |= 0xFF << (8 * k)
            expect |= (ord(ch) ^ 0x30) << (8 * k)
    if not ((x & np.uint64(other)) == np.uint64(expect)).all():
        return False
    # a digit lane holds 0-9: adding 0x76 leaves its high bit clear (ASCII lanes are below 0x80)
    return not (((x & np.uint64(digits)) + _lanes(0x76, digits)) & _lanes(0x80, digits)).any()


def _two_digits(x: np.ndarray, lane: int) -> np.ndarray:
    v = (x >> np.uint64(8 * lane)).astype(np.int64)
    return (v & 0xFF) * 10 + ((v >> 8) & 0xFF)


def _rows_bytes(raw: bytes) -> _Rows | None:
    """The common file, read as bytes by numpy with no Python object per row: ASCII, no quotes or
    blank lines, every time `YYYY-MM-DDTHH:MM:SS` (a `Z` or not, one form for the file, years
    1900-2199), GPU names of at most 16 bytes with nothing to strip, and plain decimal numbers (`4`,
    `2.5`, `1e-05`). None for anything else.

    Each field is located from the positions of the commas and newlines and read as 8-byte words: a
    time from its digits (days from the civil date, as numpy's datetime64 counts them), a number
    from its digits exactly (an integer of at most 2**53 times or divided by an exact power of ten:
    one correctly rounded operation, as Python's float() rounds), a name as two words."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.isascii() or b"\0" in raw or b'"' in raw:
        return None
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n")
        if b"\r" in raw:
            return None
    head, _, body = raw.partition(b"\n")
    cols = [c.strip().lower() for c in head.decode("ascii").split(",")]
    if any(c not in cols for c in ("time", "gpu", "gpus")) or len(set(cols)) != len(cols):
        return None
    body = body.rstrip(b"\n")
    if not body:
        return None
    ncol = len(cols)
    size = len(body) + 1
    data = body + b"\n" + bytes(32)  # the padding keeps reads past the last field (8 or 24 bytes) inside
    buf = np.frombuffer(data, dtype=np.uint8)
    flat = np.flatnonzero((buf[:size] == 44) | (buf[:size] == 10))
    if len(flat) % ncol:
        return None
    n = len(flat) // ncol
    seps = flat.reshape(n, ncol)  # each field ends at its comma or newline
    if not (buf[seps[:, -1]] == 10).all() or not (buf[seps[:, :-1]] == 44).all():
        return None  # a blank line, or a line with another number of fields
    first = np.empty(n * ncol, dtype=np.int64)
    first[0] = 0
    first[1:] = flat[:-1] + 1
    starts = first.reshape(n, ncol)
    it, ig, ig2 = cols.index("time"), cols.index("gpu"), cols.index("gpus")
    # the 8 bytes from every offset as a little-endian word (unaligned reads)
    words = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    when_s = _iso_seconds(words, starts[:, it], seps[:, it])
    if when_s is None:
        return None
    gpus, short = _short_decimals(words, starts[:, ig2], seps[:, ig2])
    if not short.all():
        rest = np.flatnonzero(~short)
        other = _decimals(buf, starts[rest, ig2], seps[rest, ig2])
        if other is None:
            return None
        gpus[rest] = other
    named = _name_codes(data, words, buf, starts[:, ig], seps[:, ig])
    if named is None:
        return None
    return when_s, named[0], named[1], gpus


def _iso_seconds(words: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """Unix seconds of `YYYY-MM-DDTHH:MM:SS[Z]` fields (all of one length, years 1900-2199), as
    `_times_fast` gives them (microseconds / 1e6); None when any field is another form or out of range.

    Each time is three 8-byte words; its digits and separators are checked and read a whole column
    of words at a time."""
    length = int(end[0] - start[0])
    if length not in (19, 20) or not (end - start == length).all():
        return None
    x0 = words[start] ^ _lanes(0x30)  # YYYY-MM-
    x1 = words[start + 8] ^ _lanes(0x30)  # DDTHH:MM
    x2 = (words[start + 16] ^ _lanes(0x30)) & _LOW_BYTES[length - 16]  # :SS or :SSZ
    heads = np.flatnonzero((x0[1:] != x0[:-1]) | (x1[1:] != x1[:-1]) | (x2[1:] != x2[:-1])) + 1
    if 2 * len(heads) < len(start):  # hour by hour, one row per GPU type: each time once
        first = np.concatenate([[0], heads])
        once = _iso_words(x0[first], x1[first], x2[first], length)
        return None if once is None else np.repeat(once, np.diff(np.append(first, len(start))))
    return _iso_words(x0, x1, x2, length)


def _iso_words(x0: np.ndarray, x1: np.ndarray, x2: np.ndarray, length: int) -> np.ndarray | None:
    if not (_layout_ok(x0, "dddd-dd-") and _layout_ok(x1, "ddTdd:dd")
            and _layout_ok(x2, ":dd" if length == 19 else ":ddZ")):
        return None
    year = _two_digits(x0, 0) * 100 + _two_digits(x0, 2)
    month, day = _two_digits(x0, 5), _two_digits(x1, 0)
    hour, minute, sec = _two_digits(x1, 3), _two_digits(x1, 6), _two_digits(x2, 1)
    if not (((year >= _YEAR0) & (year < _YEAR0 + len(_LEAP)) & (month >= 1) & (month <= 12)).all()):
        return None
    leap = _LEAP[year - _YEAR0]
    if not ((day >= 1) & (day <= _MONTH_DAYS[leap, month]) & (hour <= 23) & (minute <= 59) & (sec <= 59)).all():
        return None
    days = _YEAR_DAYS[year - _YEAR0] + _BEFORE_MONTH[leap, month] + day - 1
    secs = days * 86400 + hour * 3600 + minute * 60 + sec
    return (secs * 1_000_000) / 1e6


def _short_decimals(words: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float() of fields of 1-8 bytes of digits with at most one point (`4`, `2.5`, `.5`, `5.`),
    exactly, and which fields are of that form (the values of the others mean nothing).

    A field is one word: its point is found and taken out, its digits summed in three multiplies
    (pairs, fours, eights), and the integer divided by an exact power of ten: one rounding."""
    length = end - start
    low = _LOW_BYTES[np.clip(length, 0, 8)]
    x = (words[start] ^ _lanes(0x30)) & low
    high = _lanes(0x80) & low
    other = (x + (_lanes(0x76) & low)) & high  # the high bit of each lane that is not a digit
    y = x ^ (_lanes(0x1E) & low)  # 0 in the lane of a point ("." ^ 0x30)
    point = ~((y + _lanes(0x7F)) | y) & high  # the high bit of the lane that is 0
    ok = ((length >= 1) & (length <= 8) & (other == point) & ((point & (point - np.uint64(1))) == 0)
          & ~((length == 1) & (point != 0)))
    at = np.bitwise_count(point - np.uint64(1)).astype(np.int64) // 8  # the point's lane; 8: none
    keep = _LOW_BYTES[at]
    digits = (x & keep) | ((x >> np.uint64(8)) & ~keep)
    has_point = at < 8
    ndig = np.where(ok, length - has_point, 8).astype(np.uint64)
    v = digits << (np.uint64(8) * (np.uint64(8) - ndig))  # right-aligned: leading zero digits
    v = ((v & np.uint64(0x0F0F0F0F0F0F0F0F)) * np.uint64(2561)) >> np.uint64(8)
    v = ((v & np.uint64(0x00FF00FF00FF00FF)) * np.uint64(6553601)) >> np.uint64(16)
    v = ((v & np.uint64(0x0000FFFF0000FFFF)) * np.uint64(42949672960001)) >> np.uint64(32)
    frac = np.where(ok & has_point, length - 1 - at, 0)
    return v.astype(np.float64) / _POW10[frac], ok


def _decimals(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """float() of fields like `4`, `2.5`, `.5`, `1e-05`, exactly; None when any field is another form
    (a sign, a space, more than 18 digits) or needs more than one rounding."""
    length = end - start
    width = int(length.max())
    if width > 24 or not (length >= 1).all():
        return None
    n = len(start)
    mant = np.zeros(n, dtype=np.int64)
    ndig = np.zeros(n, dtype=np.int64)
    frac = np.zeros(n, dtype=np.int64)
    exp = np.zeros(n, dtype=np.int64)
    edig = np.zeros(n, dtype=np.int64)
    eneg = np.zeros(n, dtype=bool)
    phase = np.zeros(n, dtype=np.int8)  # 0 integer part, 1 after the point, 2 after e, 3 after e's sign or digit
    bad = np.zeros(n, dtype=bool)
    for j in range(width):
        act = length > j
        b = buf[start + j]
        d = b - np.uint8(48)
        digit = act & (d <= 9)
        in_mant = phase <= 1
        take = digit & in_mant
        mant = np.where(take, mant * 10 + d, mant)
        ndig += take
        frac += take & (phase == 1)
        point = act & (b == 46) & (phase == 0)
        e = act & ((b | 32) == 101) & in_mant
        sign = act & ((b == 43) | (b == 45)) & (phase == 2)
        etake = digit & (phase >= 2)
        exp = np.where(etake, exp * 10 + d, exp)
        edig += etake
        eneg |= sign & (b == 45)
        bad |= act & ~(take | point | e | sign | etake)
        phase = np.where(point, 1, np.where(e, 2, np.where(sign | etake, 3, phase))).astype(np.int8)
    bad |= (ndig == 0) | (ndig > 18) | ((phase >= 2) & (edig == 0)) | (edig > 3)
    if bad.any() or not (mant <= 2**53).all():
        return None
    power = np.where(eneg, -exp, exp) - frac
    if not (np.abs(power) <= 22).all():
        return None
    scale = _POW10[np.abs(power)]
    m = mant.astype(np.float64)
    return np.where(power >= 0, m * scale, m / scale)


def _name_codes(data: bytes, words: np.ndarray, buf: np.ndarray, start: np.ndarray,
                end: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
    """Each row's GPU name as a code into the names in order of first appearance; None for a name
    longer than 16 bytes or with anything `str.strip` would remove, or for more than 64 names."""
    length = end - start
    if not ((length >= 1) & (length <= 16)).all() or not ((buf[start] > 32) & (buf[end - 1] > 32)).all():
        return None
    k1 = words[start] & _LOW_BYTES[np.minimum(length, 8)]
    k2 = words[start + 8] & _LOW_BYTES[np.clip(length - 8, 0, 8)]
    runs = np.flatnonzero((k1[1:] != k1[:-1]) | (k2[1:] != k2[:-1])) + 1
    firsts: list[int] = []
    if len(runs) < 4096:  # rows grouped by GPU: one name per run
        seen: dict[tuple[int, int], int] = {}
        heads = [0, *runs.tolist()]
        run_code = []
        for i in heads:
            key = (int(k1[i]), int(k2[i]))
            if key not in seen:
                seen[key] = len(seen)
                firsts.append(i)
            run_code.append(seen[key])
        code = np.repeat(np.array(run_code, dtype=np.int64), np.diff([*heads, len(start)]))
    else:  # interleaved (hour by hour): one pass per name
        code = np.full(len(start), -1, dtype=np.int64)
        while True:
            i = int(np.argmax(code < 0))
            if code[i] >= 0:
                break
            if len(firsts) == 64:
                return None
            code[(k1 == k1[i]) & (k2 == k2[i])] = len(firsts)
            firsts.append(i)
    return code, [data[start[i]:end[i]].decode("ascii") for i in firsts]


def _rows_split(raw: bytes) -> _Rows | None:
    """`_rows_fast` for the files `_rows_bytes` declines: the body is split into fields once as
    text, the numbers are converted by numpy, and each distinct time and GPU name is parsed once (an
    hourly file repeats each time once per GPU type), with the careful path's own rules."""
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
        try:
            return _careful_rows(p, csv.reader(f), rows)
        except UnicodeDecodeError:
            raw = p.read_bytes()
            try:
                raw.decode("utf-8")
                at = 0
            except UnicodeDecodeError as exc:
                at = exc.start
            raise GpuplanError(f"not UTF-8 text (byte {at:,})", file=p, line=raw.count(b"\n", 0, at) + 1,
                               hint="save the demand CSV as UTF-8 (the format `gpuplan audit --demand-out` "
                                    "writes).") from None


def _careful_rows(p: Path, reader: Any, rows: list[tuple[float, str, float]]) -> _Rows:
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


class JobTable(Protocol):
    """What `from_trace` reads of a trace (`sim.traces.Trace`, which the api reads from the file)."""

    @property
    def submit(self) -> np.ndarray: ...  # float64 seconds

    @property
    def duration(self) -> np.ndarray: ...  # float64 seconds

    @property
    def gpus(self) -> np.ndarray: ...

    @property
    def gpu_type(self) -> np.ndarray | None: ...  # object array of str | None


def from_trace(tr: JobTable, default_gpu: str, path: str | Path) -> Demand:
    """Jobs as submitted (no queueing): each job's GPUs spread over the hours it covers. `path`: the
    trace's file, which the demand names as its source."""
    if len(tr.submit) == 0:
        raise GpuplanError("the trace has no jobs", file=path)
    t0 = float(tr.submit.min())
    start_h = (tr.submit - t0) / 3600.0
    end_h = start_h + tr.duration / 3600.0
    last = float(end_h.max())
    if not last < limits.MAX_DEMAND_HOURS:  # also NaN
        raise limits.over(last, limits.MAX_DEMAND_HOURS, what="the first submission to the last end: ",
                          unit="hours", field=None, file=path,
                          hint="a demand covers at most 10 years; replay a sample, or check the times' unit.")
    n = max(1, math.ceil(last))
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

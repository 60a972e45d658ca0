"""Break-even points in closed form: where the difference of two decision costs changes sign.

A decision cost (`gpuplan.engines.cost`) is piecewise linear in hours per day and in duration. Its
pieces end where the formulas switch branch:
- hours per day h, for an offer that stretches work by st (slowdown x GPU speed factor), A active days:
  h = 24 / st (a day's stretched work reaches 24 h); above it the working days W = h A st / 24 pass
  whole weeks at W = K dpw (the calendar jumps over the days off); the lease follows the calendar
  where 24 K (7 - dpw) + h A st meets the duration (the lease covers the longer) or min_term - setup;
- duration d: the week boundaries of the schedule (d = 24 x 7w and 24 x (7w + dpw)), the same
  calendar jumps, and d = min_term - setup.

`first_crossing` keeps the search the verdict has always used -- the first sign change of f over a
coarse grid -- and solves that bracket exactly: it finds the first piece between breakpoints where the
sign changes (one evaluation per breakpoint), takes the piece's line from two points inside it and
returns its root, checked (f there is zero to rounding); where the line keeps one sign, f jumps through
zero at an end of the piece, which is the answer. Only a bend this list does not name leaves the
bracket to plain bisection. No root-finder library is loaded.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from gpuplan.engines.cost import decision_over, offer_slowdown
from gpuplan.inputs.calendar import active_days

if TYPE_CHECKING:
    from gpuplan.inputs.catalog import Catalog
    from gpuplan.inputs.scenario_types import Offer, Scenario, Workload

# the check of a piece's root: |f(root)| below this share of the bracket's values (costs are sums of
# a few products: rounding is ~1e-15 of them)
REL_TOL = 1e-9
BISECT_XTOL = 1e-10

Fn = Callable[[float], float]


def first_crossing(
    f: Fn, grid: list[float], breakpoints: Iterable[float] = (), *, complete: bool = False
) -> float | None:
    """The x of the first sign change of f over `grid` (a grid point where f is 0 counts), solved
    exactly on the linear piece that holds it; None when f keeps its sign over the grid.

    `complete`: f is linear between `breakpoints` (no other bend or jump), so a run of grid points
    with no breakpoint among them is one line: its ends decide whether and where it crosses zero,
    and of the points inside only one is evaluated, to check the run is one line (a cost term this
    module does not know of sends the run back to point by point)."""
    bps = sorted(breakpoints)
    x0, y0 = grid[0], f(grid[0])
    if y0 == 0:
        return x0
    i, n = 0, len(grid)
    while i < n - 1:
        j = i + 1
        if complete:  # extend the run while no breakpoint lies strictly inside it
            # (a breakpoint lies in (grid[i], grid[j]) when the first one past grid[i] is below grid[j])
            k = bisect.bisect_right(bps, grid[i])
            nxt = bps[k] if k < len(bps) else math.inf
            while j + 1 < n and not nxt < grid[j]:
                j += 1
            if nxt < grid[j] and j > i + 1:
                j -= 1
        x1, y1 = grid[j], f(grid[j])
        if j > i + 2:  # a long run: check it is one line at a point inside, else go point by point
            m = (i + j) // 2
            ym = f(grid[m])
            line = y0 + (y1 - y0) * (grid[m] - x0) / (x1 - x0)
            if abs(ym - line) > REL_TOL * max(abs(y0), abs(y1), 1.0):
                j, x1, y1 = i + 1, grid[i + 1], f(grid[i + 1])
        if y1 == 0 and j == i + 1:
            return x1
        if (y0 < 0) != (y1 < 0) or y1 == 0:
            if j == i + 1:
                return solve_bracket(f, x0, y0, x1, y1, [b for b in bps if x0 < b < x1])
            r = _line_root(f, x0, y0, x1, y1, grid[i : j + 1])
            if r is not None:
                return r
            return first_crossing(f, grid[i : j + 1], bps)  # not one line after all: point by point
        i, x0, y0 = j, x1, y1
    return None


def _line_root(f: Fn, a: float, fa: float, b: float, fb: float, points: list[float]) -> float | None:
    """The zero of the line through (a, fa), (b, fb), checked on f; a grid point where it lies, if any."""
    r = a - fa * (b - a) / (fb - fa)
    for x in points:  # the old scan returned a grid point where f was exactly 0
        if x == r:
            return x
    return r if abs(f(r)) <= REL_TOL * max(abs(fa), abs(fb), 1.0) else None


def solve_bracket(f: Fn, a: float, fa: float, b: float, fb: float, inner: list[float]) -> float:
    """A root of f in [a, b] where f(a) and f(b) differ in sign; f is linear between consecutive
    `inner` breakpoints (sorted, inside (a, b))."""
    if inner:  # most named breakpoints are only candidates: try the whole bracket as one line first
        r = _line_root(f, a, fa, b, fb, [])
        if r is not None and a <= r <= b:
            return r
    p, fp, q = a, fa, b
    for x in inner:  # the first piece whose ends differ in sign
        y = f(x)
        if y == 0:
            return x
        if (fp < 0) != (y < 0):
            q = x
            break
        p, fp = x, y
    scale = max(abs(fa), abs(fb), 1.0)
    x1, x2 = p + (q - p) / 3, p + 2 * (q - p) / 3
    y1, y2 = f(x1), f(x2)
    slope = (y2 - y1) / (x2 - x1)
    if slope != 0:
        r = x1 - y1 / slope
        if p <= r <= q and abs(f(r)) <= REL_TOL * scale:
            return r
    # the piece's line keeps one sign: f jumps through zero at an end (the calendar skipping days off)
    line_p, line_q = y1 + slope * (p - x1), y1 + slope * (q - x1)
    eps = BISECT_XTOL * max(1.0, abs(q))
    if (line_p < 0) == (line_q < 0):
        if (line_p < 0) != (fp < 0) and (f(p + eps) < 0) == (line_p < 0):
            return p  # f(p) is the value before the jump
        if (line_q < 0) == (fp < 0) and (f(q - eps) < 0) == (line_q < 0):
            return q  # f(q) is already the value after it (the jump's point, rounded)
    return _bisect(f, p, fp, q)


def _bisect(f: Fn, a: float, fa: float, b: float) -> float:
    """Plain bisection (a jump, or a piece this module does not know of)."""
    while b - a > BISECT_XTOL * max(1.0, abs(a)):
        m = (a + b) / 2
        fm = f(m)
        if fm == 0:
            return m
        if (fa < 0) != (fm < 0):
            b = m
        else:
            a, fa = m, fm
    return (a + b) / 2


def _int_range(lo: float, hi: float) -> range:
    return range(max(0, math.floor(lo) - 1), math.ceil(hi) + 2)


@lru_cache(maxsize=8192, typed=True)  # a pure function of numbers that many workloads share
def hours_breakpoints(
    stretch: float, active_days: float, days_per_week: int, duration_hours: float, min_term_hours: float,
    setup_hours: float, lo: float, hi: float,
) -> tuple[float, ...]:
    """Where one offer's decision cost may bend or jump as hours per day run over [lo, hi]."""
    if stretch <= 0 or active_days <= 0:
        return ()
    out = [24.0 / stretch]
    slope = active_days * stretch
    if days_per_week == 7:  # no days off: the calendar is continuous, one lease bend of each kind
        out += [duration_hours / slope, (min_term_hours - setup_hours) / slope]
        return tuple(sorted({x for x in out if lo < x < hi}))
    k_lo = lo * active_days * stretch / 24 / days_per_week
    k_hi = hi * active_days * stretch / 24 / days_per_week
    gap = 24.0 * (7 - days_per_week)
    ks = _int_range(k_lo, k_hi)
    out += [24.0 * k * days_per_week / slope for k in ks]
    out += [(duration_hours - gap * k) / slope for k in ks]
    out += [(min_term_hours - setup_hours - gap * k) / slope for k in ks]
    return tuple(sorted({x for x in out if lo < x < hi}))


@lru_cache(maxsize=8192, typed=True)  # the same
def duration_breakpoints(
    stretch: float, hours_per_day: float, days_per_week: int, min_term_hours: float, setup_hours: float,
    lo: float, hi: float,
) -> tuple[float, ...]:
    """Where one offer's decision cost may bend or jump as the duration runs over [lo, hi] hours."""
    out = [min_term_hours - setup_hours]
    if days_per_week < 7:  # with no days off the schedule has no week boundaries to bend at
        weeks = _int_range(lo / 168, hi / 168)
        out += [168.0 * w for w in weeks]
        out += [24.0 * (7 * w + days_per_week) for w in weeks]
    c = hours_per_day * stretch / 24
    if c > 1 and days_per_week < 7:  # stretched days: the calendar jumps where c x active days passes whole weeks
        for k in _int_range(lo / 24 / 7 * days_per_week * c, hi / 24 / 7 * days_per_week * c):
            x = k * days_per_week / c  # active days
            w = math.floor(x / days_per_week)
            out.append(24.0 * (7 * w + x - w * days_per_week))
    return tuple(sorted({x for x in out if lo < x < hi}))


# ---------------------------------------------------------------- the two searches of the verdict

# The grids the verdict has always scanned (the first sign change over them is the answer)
HOURS_GRID = [1e-6, *[24.0 * k / 12 for k in range(1, 13)]]


def duration_grid(hi: float, n: int = 20) -> list[float]:
    """n points from 1 h to `hi`, evenly spaced in log."""
    # numpy's geomspace without numpy (compare never loads it): hi ** (k / (n - 1)), ends exact
    return [1.0, *(hi ** (k / (n - 1)) for k in range(1, n - 1)), float(hi)]


def _stretch(w: Workload, o: Offer, cat: Catalog) -> float:
    """Slowdown x GPU speed factor of `w` on `o`."""
    sd = offer_slowdown(w, o, cat)
    return sd.total * sd.gpu_speed_factor


def break_even_hours(w: Workload, ct: Offer, bm: Offer, s: Scenario, cat: Catalog) -> float | None:
    """Hours per day in (0, 24] where `ct` and `bm` cost the same decision cost."""

    ct_cost = decision_over(w, ct, s, cat, "hours_per_day")  # option_cost(..., hours_per_day=h).decision
    bm_cost = decision_over(w, bm, s, cat, "hours_per_day")

    def diff(h: float) -> float:
        return ct_cost(h) - bm_cost(h)

    act = active_days(w.duration_hours, w.days_per_week)
    kinks = [x for o in (ct, bm) for x in hours_breakpoints(
        _stretch(w, o, cat), act, w.days_per_week, w.duration_hours, o.min_term_hours, o.setup_hours,
        HOURS_GRID[0], HOURS_GRID[-1])]
    return first_crossing(diff, HOURS_GRID, kinks, complete=True)


def flip_duration(w: Workload, winner: Offer, runner: Offer, s: Scenario, cat: Catalog) -> float | None:
    """The duration in hours at which `runner` would cost less than `winner` (first sign change)."""

    runner_cost = decision_over(w, runner, s, cat, "duration_hours")  # option_cost(..., duration_hours=d)
    winner_cost = decision_over(w, winner, s, cat, "duration_hours")

    def diff(d: float) -> float:
        return runner_cost(d) - winner_cost(d)

    grid = duration_grid(max(w.duration_hours * 4, 24 * 365.0))
    stretch = [_stretch(w, o, cat) for o in (winner, runner)]
    kinks = [x for o, st in zip((winner, runner), stretch, strict=True) for x in duration_breakpoints(
        st, w.hours_per_day, w.days_per_week, o.min_term_hours, o.setup_hours, grid[0], grid[-1])]
    # the week boundaries, the calendar's jumps and the min terms are every bend, but where a lease's
    # stretched day is over 24 h (then its calendar may outrun the duration at a point not listed)
    complete = all(o.mode == "container" or w.hours_per_day * st <= 24
                   for o, st in zip((winner, runner), stretch, strict=True))
    return first_crossing(diff, grid, kinks, complete=complete)

"""Replaying a job trace through a reserved pool of R GPUs that spills to an elastic pool.

Exact semantics (both implementations follow them; tests compare them on real traces)
----------------------------------------------------------------------------------
Jobs are ordered by (submit time, position in the file). GPUs are counted in thousandths of a card
(a job's GPUs x 1000, rounded, at least 1), so pool arithmetic is exact.

At each instant t (an arrival, a completion on the reserved pool, or a queued job's deadline):

1. completions: every reserved job ending at t frees its GPUs;
2. arrivals: jobs submitted at t are appended to the FIFO queue in order, except a job that can
   never fit in the pool (more than R GPUs; with node packing, more whole nodes than the pool has),
   which bursts at once;
3. a start pass;
4. every queued job whose deadline (submit + wait) is <= t bursts (`--wait inf`: never);
5. a start pass again.

A start pass with `strict-fifo` starts jobs from the head of the queue while the head fits. With
`best-effort-fifo` it does the same and then, if the head does not fit, starts every later queued
job that fits, in queue order (Kueue's StrictFIFO and BestEffortFIFO). A started job holds its GPUs
from t to t + duration. A burst job runs at once on the elastic pool, for its duration times the
container slowdown. A job's wait is its start (or burst) time minus its submit time.

Packing
-------
- `gpu`: the R GPUs are one pool; a job fits when its GPUs <= the free GPUs.
- `node` (`--gpus-per-node G`): R must be a whole number of nodes; the pool is R/G nodes numbered
  0.. . A job of at most G GPUs fits when one node has that many GPUs free and is placed first-fit:
  on the lowest-numbered node with enough free GPUs (fractional jobs share nodes). A job of more
  than G GPUs needs ceil(GPUs / G) entirely free nodes and takes the lowest-numbered ones, whole (the
  rest of its last node stays idle while it runs). A job needing more nodes than the pool has bursts
  on arrival.

Implementations
---------------
`replay_reference` follows the text above literally with `heapq` and Python lists: the oracle, and
the fallback. `replay` is the one compiled event loop (`_ckernel.c`, a C extension `pip install`
builds): the same instants and rules, with min-segment trees over the queue (queue order = trace
order, since jobs are queued in arrival order) so that a best-effort pass finds the next job that
fits in O(log n) instead of scanning the queue. The two agree exactly (property tests run both).
Where the extension could not be built (no C compiler or Python headers), `replay` runs the
reference: the same answers, slower (measured on the openb trace x10, 62,030 jobs: strict FIFO
0.15-0.3 CPU s, best-effort 0.5 s; a best-effort pass scans the whole queue, so deep best-effort
queues grow with its length squared).

The same pairing holds before and after the loop: `Jobs.from_trace` (numpy over the readers' `Trace`)
and `_ckernel.prepare_jobs` (over the C reader's columns, `read_jobs`) prepare the same jobs;
`summary_reference` (numpy) and `_ckernel.summary` compute the same numbers, bit for bit. With the
extension a plain CSV trace is read, replayed and summed without numpy.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from gpuplan.constants import DEFAULT_QUEUEING
from gpuplan.lazy import np
from gpuplan.sim.cost import price_replay, run_object
from gpuplan.sim.pool import UNITS_PER_GPU, check_level, layout
from gpuplan.sim.pool import parse_reserved as parse_reserved  # where callers found it before

if TYPE_CHECKING:
    import numpy as np

    from gpuplan.engines.pricing import PoolPricing
    from gpuplan.models.tariff import Tariff
    from gpuplan.sim.spot import SpotParams, SpotPool, SpotRuns
    from gpuplan.sim.traces import Trace

_SKIP_REASONS = {  # the reasons `_ckernel.prepare_jobs` counts, in its order (the readers' order)
    0: ("no_gpu", "non_positive_duration"),
    1: ("no_gpu", "never_ran", "missing_time", "non_positive_duration"),
}


@overload
def buffer_view(data: Any, fmt: Literal["d"]) -> memoryview[float]: ...
@overload
def buffer_view(data: Any, fmt: Literal["q"]) -> memoryview[int]: ...
@overload
def buffer_view(data: Any, fmt: Literal["?"]) -> memoryview[bool]: ...
def buffer_view(data: Any, fmt: Any) -> memoryview[Any]:
    """A flat view of `data` (a bytearray, an array.array, a contiguous numpy array) with the struct
    format `fmt` (`d` float64, `q` int64, `?` bool): no copy."""
    return memoryview(data).cast("B").cast(fmt)


@dataclass(frozen=True)
class Jobs:
    """A trace sorted for replay: by (submit, position in the file), with what the trace said of itself.

    The columns are flat buffers (memoryviews): the C loop and summary read them as they are, and
    numpy code views them without a copy (`np.asarray(jobs.submit)`), so a replay needs no numpy where
    the extension is built (`read_jobs`). `gpu_hours`: GPUs x duration summed over the jobs in file
    order (numpy's sum), / 3600."""

    submit: memoryview[float]  # float64 s
    duration: memoryview[float]  # float64 s
    gpus: memoryview[float]  # float64
    units: memoryview[int]  # int64 thousandths of a GPU: max(rint(gpus x 1000), 1)
    skipped: dict[str, int]
    format: str = "generic"
    records: int = 0
    gpu_hours: float = 0.0

    @classmethod
    def from_trace(cls, trace: Trace) -> Jobs:
        """The plain reference of `read_jobs`'s compiled preparation (numpy over a `Trace`)."""
        submit, duration, gpus = trace.submit, trace.duration, trace.gpus
        if not bool(np.all(submit[1:] >= submit[:-1])):  # most traces are written in submit order already
            order = np.argsort(submit, kind="stable")
            submit, duration, gpus = submit[order], duration[order], gpus[order]
        units = np.maximum(np.rint(gpus * UNITS_PER_GPU), 1).astype(np.int64)
        return cls(
            submit=buffer_view(np.ascontiguousarray(submit, dtype=np.float64), "d"),
            duration=buffer_view(np.ascontiguousarray(duration, dtype=np.float64), "d"),
            gpus=buffer_view(np.ascontiguousarray(gpus, dtype=np.float64), "d"),
            units=buffer_view(units, "q"),
            skipped=dict(trace.skipped),
            format=trace.format,
            records=trace.records,
            gpu_hours=trace.gpu_hours,
        )

    def __len__(self) -> int:
        return len(self.submit)


def read_jobs(path: str | Path, fmt: str = "auto") -> Jobs:
    """The jobs of a trace file for a replay, past the row limit (`sim.limits.MAX_TRACE_ROWS`) exit 2.

    A plain generic, tiresias or openb CSV goes through the C extension end to end, without numpy: the
    reader counts the rows (the limit) and reads the needed columns (`plain_csv.read_plain_columns`), and
    `_ckernel.prepare_jobs` applies the readers' rules to them (the checks, the skips, GPUs and
    durations, the sort, the units). Anything else (another format, quotes, a value the readers refuse,
    no extension) is read by `read_trace` and prepared by `Jobs.from_trace`, the plain reference: the
    same jobs (tests compare them), or the reader's error naming the line and field."""
    from gpuplan.sim.limits import MAX_TRACE_ROWS, check_trace_rows  # read now: tests lower the limit
    from gpuplan.sim.plain_csv import read_plain_columns

    plain = read_plain_columns(path, fmt, MAX_TRACE_ROWS)
    prepare = _compiled("prepare_jobs")
    if plain is not None and prepare is not None:
        found, rows, columns = plain
        kind = 1 if found == "alibaba-2023" else 0
        got = prepare(kind, columns)
        if got is not None:
            counts, gpu_hours, submit, duration, gpus, units = got
            skipped = {why: int(k) for why, k in zip(_SKIP_REASONS[kind], counts, strict=False) if k}
            return Jobs(submit=buffer_view(submit, "d"), duration=buffer_view(duration, "d"),
                        gpus=buffer_view(gpus, "d"), units=buffer_view(units, "q"), skipped=skipped,
                        format=found, records=rows, gpu_hours=gpu_hours)
    from gpuplan.sim.traces import read_trace  # the general readers: only where the C reader cannot

    check_trace_rows(path)
    return Jobs.from_trace(read_trace(path, fmt, gpu_types=False))


@dataclass(frozen=True)
class ReplayResult:
    """Per job (in replay order): start or burst time, and whether it burst, as flat buffers
    (memoryviews of float64 and bool; `np.asarray` views them). With a spot tier (`sim.spot`), also
    where it finished, its spot seconds, work left for on demand, end and reclaims."""

    start: memoryview[float]  # float64 s
    burst: memoryview[bool]  # bool
    spot: SpotRuns | None = None


# ---------------------------------------------------------------- the plain reference


def replay_reference(
    jobs: Jobs,
    reserved: int,
    wait_s: float,
    queueing: str = DEFAULT_QUEUEING,
    packing: str = "gpu",
    gpus_per_node: int = 8,
    spot: SpotPool | None = None,
) -> ReplayResult:
    """The semantics of the module docstring, literally: heapq for completions, a list for the queue;
    with `spot`, the spot tier of `sim.spot` where a job would burst."""
    check_level(reserved, queueing, packing, gpus_per_node)
    s = list(jobs.submit)
    d = list(jobs.duration)
    u = list(jobs.units)
    n = len(s)
    start = [math.nan] * n
    burst = [False] * n
    best_effort = queueing == "best-effort-fifo"
    node_mode = packing == "node"
    nodes, node_cap = layout(reserved, packing, gpus_per_node)
    pool_cap = reserved * UNITS_PER_GPU
    free = [pool_cap]  # pooled GPUs (packing gpu)
    node_free = [node_cap] * nodes if node_mode else []
    placed: dict[int, list[int]] = {}
    running: list[tuple[float, int]] = []
    queue: list[int] = []
    elastic, spot_events, runs = _spot_reference(spot, d, u, start, burst)

    def need_nodes(j: int) -> int:
        return 0 if u[j] <= node_cap else -(-u[j] // node_cap)

    def fits_ever(j: int) -> bool:
        if reserved == 0:
            return False
        if not node_mode:
            return u[j] <= pool_cap
        k = need_nodes(j)
        return nodes >= 1 if k == 0 else k <= nodes

    def place(j: int) -> list[int] | None:
        if not node_mode:
            return [] if u[j] <= free[0] else None
        k = need_nodes(j)
        if k == 0:
            for x in range(nodes):
                if node_free[x] >= u[j]:
                    return [x]
            return None
        empty = [x for x in range(nodes) if node_free[x] == node_cap]
        return empty[:k] if len(empty) >= k else None

    def try_start(j: int, t: float) -> bool:
        where = place(j)
        if where is None:
            return False
        if not node_mode:
            free[0] -= u[j]
        elif need_nodes(j) == 0:
            node_free[where[0]] -= u[j]
        else:
            for x in where:
                node_free[x] = 0
        placed[j] = where
        start[j] = t
        heapq.heappush(running, (t + d[j], j))
        return True

    def release(j: int) -> None:
        where = placed.pop(j)
        if not node_mode:
            free[0] += u[j]
        elif need_nodes(j) == 0:
            node_free[where[0]] += u[j]
        else:
            for x in where:
                node_free[x] = node_cap

    def start_pass(t: float) -> None:
        nonlocal queue
        k = 0
        while k < len(queue) and try_start(queue[k], t):
            k += 1
        del queue[:k]
        if best_effort and queue:
            rest = [queue[0]]
            for j in queue[1:]:
                if not try_start(j, t):
                    rest.append(j)
            queue = rest

    i = 0
    while i < n or queue or running or spot_events:
        t = math.inf
        if i < n:
            t = s[i]
        if running and running[0][0] < t:
            t = running[0][0]
        if queue and s[queue[0]] + wait_s < t:  # the head has the earliest deadline (FIFO by submit)
            t = s[queue[0]] + wait_s
        if spot_events and spot_events[0][0] < t:
            t = spot_events[0][0]
        if t == math.inf:
            break
        while spot_events and spot_events[0][0] <= t:
            runs.event(*heapq.heappop(spot_events))
        while running and running[0][0] <= t:
            release(heapq.heappop(running)[1])
        while i < n and s[i] <= t:
            if fits_ever(i):
                queue.append(i)
            else:
                elastic(i, t)
            i += 1
        start_pass(t)
        k = 0
        while k < len(queue) and s[queue[k]] + wait_s <= t:
            elastic(queue[k], t)
            k += 1
        if k:
            del queue[:k]
            start_pass(t)
    return ReplayResult(start=buffer_view(array("d", start), "d"), burst=buffer_view(bytes(burst), "?"),
                        spot=runs.result() if spot is not None else None)


class _SpotReference:
    """`sim.spot`'s tier, literally: a heapq of spot runs' ends and reclaims by (time, job)."""

    def __init__(self, spot: SpotPool, d: list[float], u: list[int]) -> None:
        self.sp, self.u = spot, u
        n = len(d)
        self.delay = spot.delay.reshape(-1).tolist()
        self.free = spot.gpus * UNITS_PER_GPU
        self.rem = list(d)
        self.tries = [0] * n
        self.tier = [0] * n
        self.spot_s = [0.0] * n
        self.end = [math.nan] * n
        self.reclaims = [0] * n
        self.runx = [0.0] * n  # the running run's reclaim delay (inf: it finishes)
        self.runpre = [0.0] * n
        self.events: list[tuple[float, int]] = []

    def on_demand(self, j: int, t: float, prefix: float) -> None:
        self.tier[j] = 2
        self.end[j] = t + (prefix + self.rem[j] * self.sp.on_demand_slowdown)

    def attempt(self, j: int, t: float, prefix: float) -> None:
        sp = self.sp
        if self.tries[j] >= sp.attempts or self.u[j] > self.free:
            self.on_demand(j, t, prefix)
            return
        x = self.delay[j * sp.attempts + self.tries[j]]
        self.tries[j] += 1
        self.free -= self.u[j]
        length = prefix + self.rem[j] * sp.slowdown
        self.runpre[j] = prefix
        if x < length:
            self.runx[j] = x
            self.spot_s[j] += x
            heapq.heappush(self.events, (t + x, j))
        else:
            self.runx[j] = math.inf
            self.spot_s[j] += length
            heapq.heappush(self.events, (t + length, j))

    def event(self, t: float, j: int) -> None:
        sp = self.sp
        self.free += self.u[j]
        x = self.runx[j]
        if x == math.inf:
            self.tier[j] = 1
            self.rem[j] = 0.0
            self.end[j] = t
            return
        self.reclaims[j] += 1
        progress = x - self.runpre[j]
        if progress > 0 and sp.checkpoint_s < math.inf:
            kept = float(math.floor(progress / sp.checkpoint_s)) * sp.checkpoint_s
            self.rem[j] -= kept / sp.slowdown
            if self.rem[j] < 0:
                self.rem[j] = 0.0
        if sp.requeue:
            self.attempt(j, t, sp.restart_s)
        else:
            self.on_demand(j, t, sp.restart_s)

    def result(self) -> SpotRuns:
        from gpuplan.sim.spot import SpotRuns

        return SpotRuns(tier=np.array(self.tier, dtype=np.uint8), spot_s=np.array(self.spot_s, dtype=np.float64),
                        left_s=np.array(self.rem, dtype=np.float64), end=np.array(self.end, dtype=np.float64),
                        reclaims=np.array(self.reclaims, dtype=np.int64))


def _spot_reference(spot: SpotPool | None, d: list[float], u: list[int], start: list[float],
                    burst: list[bool]) -> tuple[Callable[[int, float], None], list[tuple[float, int]], Any]:
    """(what a burst does: on demand, or the spot tier first; the spot events' heap; the tier)."""
    runs = _SpotReference(spot, d, u) if spot is not None else None

    def elastic(j: int, t: float) -> None:
        start[j] = t
        burst[j] = True
        if runs is not None:
            runs.attempt(j, t, 0.0)

    return elastic, runs.events if runs is not None else [], runs


# ---------------------------------------------------------------- the compiled replay

def _compiled(name: str) -> Any:
    """A function of the C extension (`replay`, `prepare_jobs`, `summary`, `zeros`), or None where `pip install`
    could not build it."""
    try:
        from gpuplan.sim._ckernel import prepare_jobs, replay, summary, zeros
    except ImportError:
        return None
    return {"replay": replay, "prepare_jobs": prepare_jobs, "summary": summary, "zeros": zeros}[name]


def _ckernel() -> Callable[..., None] | None:
    """The C loop, or None where `pip install` could not build it."""
    kernel: Callable[..., None] | None = _compiled("replay")
    return kernel


def kernel_name() -> str:
    """Which loop `replay` runs: `c` (the extension `pip install` builds) or `reference` (no compiler)."""
    return "reference" if _ckernel() is None else "c"


def replay(
    jobs: Jobs,
    reserved: int,
    wait_s: float,
    queueing: str = DEFAULT_QUEUEING,
    packing: str = "gpu",
    gpus_per_node: int = 8,
    spot: SpotPool | None = None,
) -> ReplayResult:
    """The same semantics as `replay_reference`, by the C loop (the reference where it was not built)."""
    kernel = _ckernel()
    if kernel is None:
        return replay_reference(jobs, reserved, wait_s, queueing, packing, gpus_per_node, spot)
    return run_kernel(kernel, jobs, reserved, wait_s, queueing, packing, gpus_per_node, spot)


def run_kernel(
    kernel: Callable[..., None],
    jobs: Jobs,
    reserved: int,
    wait_s: float,
    queueing: str = DEFAULT_QUEUEING,
    packing: str = "gpu",
    gpus_per_node: int = 8,
    spot: SpotPool | None = None,
) -> ReplayResult:
    """`replay` with the given compiled loop (`_ckernel.replay`)."""
    check_level(reserved, queueing, packing, gpus_per_node)
    n = len(jobs)
    if reserved == 0 and spot is None:  # every job bursts on arrival
        return ReplayResult(start=buffer_view(bytearray(jobs.submit), "d"), burst=buffer_view(b"\x01" * n, "?"))
    zeros = _compiled("zeros")  # bytearray(k), on huge pages: a fresh 4 KiB page faults for ~2 us
    start = buffer_view(zeros(8 * n), "d")
    burst = buffer_view(zeros(n), "?")
    nodes, node_cap = layout(reserved, packing, gpus_per_node) if reserved > 0 else (0, 1)
    args: list[Any] = [
        jobs.submit,
        jobs.duration,
        jobs.units,
        nodes,
        node_cap,
        float(wait_s),
        queueing == "best-effort-fifo",
        start,
        burst,
    ]
    runs = None
    if spot is not None:
        from gpuplan.sim.spot import SpotRuns

        runs = SpotRuns(tier=np.zeros(n, dtype=np.uint8), spot_s=np.zeros(n, dtype=np.float64),
                        left_s=np.array(np.asarray(jobs.duration), dtype=np.float64), end=np.full(n, math.nan),
                        reclaims=np.zeros(n, dtype=np.int64))
        args.append((spot.gpus * UNITS_PER_GPU, np.ascontiguousarray(spot.delay, dtype=np.float64),
                     spot.attempts, float(spot.checkpoint_s), float(spot.restart_s), float(spot.slowdown),
                     float(spot.on_demand_slowdown), bool(spot.requeue), runs.tier, runs.spot_s, runs.left_s,
                     runs.end, runs.reclaims))
    kernel(*args)
    return ReplayResult(start=start, burst=burst, spot=runs)


# ---------------------------------------------------------------- results


def summarize(
    jobs: Jobs,
    result: ReplayResult,
    reserved: int,
    *,
    slowdown: float = 1.0,
    prices: PoolPricing | None = None,
    spot: SpotPool | None = None,
    spot_tariff: Tariff | None = None,
) -> dict[str, Any]:
    """One object of the `-o json` contract: the numbers of `summary_reference` (by `_ckernel.summary`,
    the same numbers computed the same way, where the extension is built) priced and laid out by
    `cost.run_object`. With a spot tier: `_summarize_spot`."""
    if spot is not None and result.spot is not None:
        return _summarize_spot(jobs, result, reserved, spot, prices, spot_tariff)
    compiled = _compiled("summary")
    if compiled is not None:
        numbers = compiled(jobs.submit, jobs.duration, jobs.gpus, result.start, result.burst, float(slowdown))
    else:
        numbers = summary_reference(jobs, result, slowdown)
    total_h, reserved_h, burst_h, mean, p50, p95, wmax, span_h, calendar_h, bursts = numbers
    # money divides by the trace's calendar span, as submitted: never one the slowdown or queueing stretched
    return run_object(int(reserved), len(jobs), jobs.skipped, int(bursts), (total_h, reserved_h, burst_h),
                      (mean, p50, p95, wmax), span_h,
                      None if prices is None else price_replay(prices, reserved, calendar_h, burst_h))


def summary_reference(
    jobs: Jobs, result: ReplayResult, slowdown: float = 1.0
) -> tuple[float, float, float, float, float, float, float, float, float, int]:
    """The numbers of one replay, by numpy: (total, reserved and burst GPU-hours, wait mean, p50, p95 and
    max in hours, span and calendar span in hours, burst jobs). `_ckernel.summary` computes each the same
    way (numpy's pairwise sums, numpy's linear percentiles); tests hold them equal to the last bit.

    GPU-hours: gpus x duration / 3600 per job, summed over reserved jobs, burst jobs (x slowdown) and
    all; waits: start - submit, in hours; span: first submit to the last end; calendar span: first
    submit to the last end as submitted (`inputs.demand.calendar_span_hours`, what money divides by).
    Written with in-place steps and one temporary array at a time (a few at millions of jobs), each
    value computed exactly as the plain expression would."""
    from gpuplan.inputs.demand import calendar_span_hours

    submit, duration = np.asarray(jobs.submit), np.asarray(jobs.duration)
    start, b = np.asarray(result.start), np.asarray(result.burst)
    gh = np.asarray(jobs.gpus) * duration
    gh /= 3600.0
    reserved_h = float(gh[~b].sum())
    burst_h = float(gh[b].sum() * slowdown)
    part = gh * slowdown  # np.where(b, gh * slowdown, gh)
    np.copyto(part, gh, where=~b)
    del gh
    total_h = float(np.sum(part))
    wait_h = np.subtract(start, submit, out=part)  # (start - submit) / 3600
    wait_h /= 3600.0
    waits = (float(wait_h.mean()), 0.0, 0.0, float(wait_h.max())) if wait_h.size else (0.0, 0.0, 0.0, 0.0)
    if wait_h.size:  # the last use of wait_h: the percentiles may reorder it
        p50, p95 = (float(x) for x in np.percentile(wait_h, [50, 95], overwrite_input=True))
        waits = (waits[0], p50, p95, waits[3])
    ends = np.multiply(duration, slowdown, out=part)  # start + np.where(b, duration * slowdown, duration)
    np.copyto(ends, duration, where=~b)
    ends += start
    span_h = float((ends.max() - submit.min()) / 3600.0) if len(jobs) else 0.0
    del part, wait_h, ends
    return (total_h, reserved_h, burst_h, *waits, span_h, calendar_span_hours(submit, duration), int(b.sum()))


def _summarize_spot(jobs: Jobs, result: ReplayResult, reserved: int, spot: SpotPool, prices: PoolPricing | None,
                    spot_tariff: Tariff | None) -> dict[str, Any]:
    """`summarize` with a spot tier (`sim.spot`'s formulas): GPU-hours on spot (lost work included), on
    demand (stretched, restarts after a reclaim included), the reclaims and the GPU-hours they lost."""
    from gpuplan.inputs.demand import calendar_span_hours
    from gpuplan.sim.cost import price_spot

    runs = result.spot
    assert runs is not None
    g, submit, duration = np.asarray(jobs.gpus), np.asarray(jobs.submit), np.asarray(jobs.duration)
    b = np.asarray(result.burst)
    on_demand = runs.tier == 2
    restarted = on_demand & (runs.reclaims > 0)
    reserved_h = float((g * duration / 3600.0)[~b].sum())
    spot_h = float(np.sum(g * runs.spot_s) / 3600.0)
    od_run = runs.left_s * spot.on_demand_slowdown + np.where(restarted, spot.restart_s, 0.0)
    burst_h = float(np.sum(np.where(on_demand, g * od_run, 0.0)) / 3600.0)
    lost_spot_h = float(np.sum(g * (runs.spot_s - (duration - runs.left_s) * spot.slowdown)) / 3600.0)
    lost_od_h = float(np.sum(np.where(restarted, g * spot.restart_s, 0.0)) / 3600.0)
    total_h = reserved_h + burst_h + spot_h
    wait_h = (np.asarray(result.start) - submit) / 3600.0
    waits = (0.0, 0.0, 0.0, 0.0)
    if wait_h.size:
        p50, p95 = (float(x) for x in np.percentile(wait_h, [50, 95]))
        waits = (float(wait_h.mean()), p50, p95, float(wait_h.max()))
    ends = np.where(runs.tier == 0, np.asarray(result.start) + duration, runs.end)
    span_h = float((ends.max() - submit.min()) / 3600.0) if len(jobs) else 0.0
    calendar_h = calendar_span_hours(submit, duration)
    cost = None
    if prices is not None:
        cost = price_replay(prices, reserved, calendar_h, burst_h)
        if spot_tariff is not None:
            cost = price_spot(cost, prices, spot_tariff, calendar_h, spot_h, lost_spot_h, lost_od_h)
    out = run_object(int(reserved), len(jobs), jobs.skipped, int(b.sum()), (total_h, reserved_h, burst_h), waits,
                     span_h, cost)
    out["gpu_hours"]["spot"] = spot_h
    out["spot_gpus"] = int(spot.gpus)
    out["spot_jobs"] = int(np.count_nonzero(runs.tier == 1))
    out["on_demand_jobs"] = int(np.count_nonzero(on_demand))
    out["preemptions"] = int(runs.reclaims.sum())
    out["lost_gpu_hours"] = lost_spot_h + lost_od_h
    return out


def simulate(
    trace: Trace | Jobs,
    reserved: Sequence[int],
    wait_hours: float,
    *,
    queueing: str = DEFAULT_QUEUEING,
    packing: str = "gpu",
    gpus_per_node: int = 8,
    prices: PoolPricing | None = None,
    implementation: str = "fast",
    progress: Callable[[int, int], None] | None = None,
    spot_gpus: int = 0,
    spot: SpotParams | None = None,
    spot_tariff: Tariff | None = None,
) -> list[dict[str, Any]]:
    """Replay `trace` once per R in `reserved`; one contract object per R. The trace is sorted once.
    `spot_gpus` S > 0 with `spot`: the spot tier of `sim.spot` (its reclaim delays drawn once, from the
    seed, so every R sees the same draws); S = 0 replays exactly as without it."""
    jobs = trace if isinstance(trace, Jobs) else Jobs.from_trace(trace)
    for r in reserved:
        check_level(int(r), queueing, packing, gpus_per_node)
        if prices is not None and prices.lease is not None:
            prices.lease.check_pool_size(int(r))
    run = replay if implementation == "fast" else replay_reference
    wait_s = wait_hours * 3600.0
    slowdown = prices.container_slowdown if prices is not None else 1.0
    pool = None
    if spot is not None and spot_gpus > 0:
        from gpuplan.sim.spot import spot_pool

        pool = spot_pool(spot_gpus, np.asarray(jobs.gpus), spot)
    out = []
    for k, r in enumerate(reserved):
        res = run(jobs, int(r), wait_s, queueing, packing, gpus_per_node, pool)
        out.append(summarize(jobs, res, int(r), slowdown=slowdown, prices=prices, spot=pool, spot_tariff=spot_tariff))
        if progress is not None:
            progress(k + 1, len(reserved))
    return out

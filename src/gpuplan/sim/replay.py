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
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuplan.constants import DEFAULT_QUEUEING
from gpuplan.inputs.demand import calendar_span_hours
from gpuplan.sim.cost import price_replay, run_object
from gpuplan.sim.pool import UNITS_PER_GPU, check_level, layout
from gpuplan.sim.pool import parse_reserved as parse_reserved  # where callers found it before
from gpuplan.sim.traces import Trace

if TYPE_CHECKING:
    from gpuplan.engines.pricing import PoolPricing

@dataclass(frozen=True)
class Jobs:
    """A trace sorted for replay: by (submit, position in the file)."""

    submit: np.ndarray  # float64 s
    duration: np.ndarray  # float64 s
    gpus: np.ndarray  # float64
    units: np.ndarray  # int64 thousandths of a GPU
    skipped: dict[str, int]

    @classmethod
    def from_trace(cls, trace: Trace) -> Jobs:
        submit, duration, gpus = trace.submit, trace.duration, trace.gpus
        if not bool(np.all(submit[1:] >= submit[:-1])):  # most traces are written in submit order already
            order = np.argsort(submit, kind="stable")
            submit, duration, gpus = submit[order], duration[order], gpus[order]
        units = np.maximum(np.rint(gpus * UNITS_PER_GPU), 1).astype(np.int64)
        return cls(
            submit=np.ascontiguousarray(submit, dtype=np.float64),
            duration=np.ascontiguousarray(duration, dtype=np.float64),
            gpus=np.ascontiguousarray(gpus, dtype=np.float64),
            units=units,
            skipped=dict(trace.skipped),
        )

    def __len__(self) -> int:
        return int(self.submit.shape[0])


@dataclass(frozen=True)
class ReplayResult:
    """Per job (in replay order): start or burst time, and whether it burst."""

    start: np.ndarray  # float64 s
    burst: np.ndarray  # bool


# ---------------------------------------------------------------- the plain reference


def replay_reference(
    jobs: Jobs,
    reserved: int,
    wait_s: float,
    queueing: str = DEFAULT_QUEUEING,
    packing: str = "gpu",
    gpus_per_node: int = 8,
) -> ReplayResult:
    """The semantics of the module docstring, literally: heapq for completions, a list for the queue."""
    check_level(reserved, queueing, packing, gpus_per_node)
    s = jobs.submit.tolist()
    d = jobs.duration.tolist()
    u = jobs.units.tolist()
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
    while i < n or queue or running:
        t = math.inf
        if i < n:
            t = s[i]
        if running and running[0][0] < t:
            t = running[0][0]
        if queue and s[queue[0]] + wait_s < t:  # the head has the earliest deadline (FIFO by submit)
            t = s[queue[0]] + wait_s
        if t == math.inf:
            break
        while running and running[0][0] <= t:
            release(heapq.heappop(running)[1])
        while i < n and s[i] <= t:
            if fits_ever(i):
                queue.append(i)
            else:
                start[i] = t
                burst[i] = True
            i += 1
        start_pass(t)
        k = 0
        while k < len(queue) and s[queue[k]] + wait_s <= t:
            start[queue[k]] = t
            burst[queue[k]] = True
            k += 1
        if k:
            del queue[:k]
            start_pass(t)
    return ReplayResult(start=np.array(start, dtype=np.float64), burst=np.array(burst, dtype=bool))


# ---------------------------------------------------------------- the compiled replay

def _ckernel() -> Callable[..., None] | None:
    """The C loop, or None where `pip install` could not build it."""
    try:
        from gpuplan.sim._ckernel import replay as ckernel
    except ImportError:
        return None
    return ckernel


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
) -> ReplayResult:
    """The same semantics as `replay_reference`, by the C loop (the reference where it was not built)."""
    kernel = _ckernel()
    if kernel is None:
        return replay_reference(jobs, reserved, wait_s, queueing, packing, gpus_per_node)
    return run_kernel(kernel, jobs, reserved, wait_s, queueing, packing, gpus_per_node)


def run_kernel(
    kernel: Callable[..., None],
    jobs: Jobs,
    reserved: int,
    wait_s: float,
    queueing: str = DEFAULT_QUEUEING,
    packing: str = "gpu",
    gpus_per_node: int = 8,
) -> ReplayResult:
    """`replay` with the given compiled loop (`_ckernel.replay`)."""
    check_level(reserved, queueing, packing, gpus_per_node)
    n = len(jobs)
    start = np.empty(n, dtype=np.float64)
    burst = np.zeros(n, dtype=np.bool_)
    if reserved == 0:
        start[:] = jobs.submit
        burst[:] = True
        return ReplayResult(start=start, burst=burst)
    nodes, node_cap = layout(reserved, packing, gpus_per_node)
    kernel(
        np.ascontiguousarray(jobs.submit, dtype=np.float64),
        np.ascontiguousarray(jobs.duration, dtype=np.float64),
        np.ascontiguousarray(jobs.units, dtype=np.int64),
        nodes,
        node_cap,
        float(wait_s),
        queueing == "best-effort-fifo",
        start,
        burst,
    )
    return ReplayResult(start=start, burst=burst)


# ---------------------------------------------------------------- results


def summarize(
    jobs: Jobs,
    result: ReplayResult,
    reserved: int,
    *,
    slowdown: float = 1.0,
    prices: PoolPricing | None = None,
) -> dict[str, Any]:
    """One object of the `-o json` contract.

    GPU-hours: gpus x duration / 3600 per job, summed over reserved jobs, burst jobs (x slowdown) and
    all; waits: start - submit, in hours (mean, p50, p95, max); span: first submit to the last end.
    Written with in-place steps and one temporary array at a time (a few at millions of jobs), each
    value computed exactly as the plain expression would."""
    gh = jobs.gpus * jobs.duration
    gh /= 3600.0
    b = result.burst
    reserved_h = float(gh[~b].sum())
    burst_h = float(gh[b].sum() * slowdown)
    part = gh * slowdown  # np.where(b, gh * slowdown, gh)
    np.copyto(part, gh, where=~b)
    del gh
    total_h = float(np.sum(part))
    wait_h = np.subtract(result.start, jobs.submit, out=part)  # (start - submit) / 3600
    wait_h /= 3600.0
    waits = (float(wait_h.mean()), 0.0, 0.0, float(wait_h.max())) if wait_h.size else (0.0, 0.0, 0.0, 0.0)
    if wait_h.size:  # the last use of wait_h: the percentiles may reorder it
        p50, p95 = (float(x) for x in np.percentile(wait_h, [50, 95], overwrite_input=True))
        waits = (waits[0], p50, p95, waits[3])
    ends = np.multiply(jobs.duration, slowdown, out=part)  # start + np.where(b, duration * slowdown, duration)
    np.copyto(ends, jobs.duration, where=~b)
    ends += result.start
    span_h = float((ends.max() - jobs.submit.min()) / 3600.0) if len(jobs) else 0.0
    del part, wait_h, ends
    # money divides by the trace's calendar span, as submitted: never one the slowdown or queueing stretched
    calendar_h = calendar_span_hours(jobs.submit, jobs.duration)
    return run_object(int(reserved), len(jobs), jobs.skipped, int(b.sum()), (total_h, reserved_h, burst_h), waits,
                      span_h, None if prices is None else price_replay(prices, reserved, calendar_h, burst_h))


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
) -> list[dict[str, Any]]:
    """Replay `trace` once per R in `reserved`; one contract object per R. The trace is sorted once."""
    jobs = trace if isinstance(trace, Jobs) else Jobs.from_trace(trace)
    for r in reserved:
        check_level(int(r), queueing, packing, gpus_per_node)
        if prices is not None and prices.lease is not None:
            prices.lease.check_pool_size(int(r))
    run = replay if implementation == "fast" else replay_reference
    wait_s = wait_hours * 3600.0
    slowdown = prices.container_slowdown if prices is not None else 1.0
    out = []
    for k, r in enumerate(reserved):
        res = run(jobs, int(r), wait_s, queueing, packing, gpus_per_node)
        out.append(summarize(jobs, res, int(r), slowdown=slowdown, prices=prices))
        if progress is not None:
            progress(k + 1, len(reserved))
    return out

"""The replay of a plain CSV trace without numpy: what `gpuplan simulate TRACE -r R -o json` runs.

A replay of a few thousand jobs takes milliseconds; importing numpy to hold them takes a tenth of a
second. For the traces the C extension reads (generic, Tiresias and Alibaba openb CSV with plain
numbers), the whole replay runs here on byte buffers, each step in C with the rules and the order of
floating-point operations of the numpy path:

    read_columns (only the columns needed) -> select_jobs (the reader's skip rules, traces.py)
    -> prepare (stable sort by submit, GPUs in thousandths: replay.Jobs.from_trace)
    -> replay (the compiled loop)   -> summarize (replay.summarize's numbers, numpy's summation)

`simulate_document` returns the same `gpuplan.simulate/1` document as `api.simulate(...).to_json()`
and the trace's heading as `.meta()` has it
(tests/unit/test_sim_lean.py compares them on the shared trace), or None whenever this path cannot
say the same: no C extension, another format, text the C reader refuses, a value the readers
refuse, no usable job, more rows than the limit. The caller then runs the full command, which
gives the answer or names the error. Unpriced only: a scenario's prices need the scenario reader.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gpuplan.constants import DEFAULT_QUEUEING
from gpuplan.sim.pool import check_level, layout

# per format: the columns read (in the order select_jobs takes them), select_jobs' kind, and the skip
# reasons its counts stand for; traces.py applies the same rules with numpy
_PLAIN_FORMATS: dict[str, tuple[tuple[str, ...], int, tuple[str, ...]]] = {
    "generic": (("submit_time", "duration", "gpus"), 0, ("no_gpu", "non_positive_duration")),
    "tiresias": (("submit_time", "duration", "num_gpu"), 0, ("no_gpu", "non_positive_duration")),
    "alibaba-2023": (
        ("num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"),
        1,
        ("no_gpu", "never_ran", "missing_time", "non_positive_duration"),
    ),
}
_REQUIRED = {  # the columns the readers require (traces._require); openb's `name` is not needed
    "generic": ("submit_time", "duration", "gpus"),
    "tiresias": ("job_id", "num_gpu", "submit_time", "duration"),
    "alibaba-2023": ("num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"),
}

Progress = Callable[[Sequence[int], int], tuple[Callable[[int, int], None] | None, Callable[[], None]]]


def simulate_text(
    trace: str | Path,
    reserved: str,
    wait: str = "0",
    *,
    queueing: str = DEFAULT_QUEUEING,
    packing: str = "gpu",
    gpus_per_node: int = 8,
    trace_format: str = "auto",
    max_wait: list[str] | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """`simulate_document` for the options as typed (`-r 0:64:8`, `-w 2h`, `--max-wait p95=2h`), checked
    against the same limits as `api.simulate`; bad values raise its `GpuplanError`s."""
    from gpuplan.inputs.units import parse_duration
    from gpuplan.sim import limits
    from gpuplan.sim.cost import parse_max_wait
    from gpuplan.sim.pool import parse_reserved

    budget = parse_max_wait(max_wait)
    limits.count_reserved(reserved)
    levels = parse_reserved(reserved)
    limits.check_levels(levels)
    return simulate_document(trace, levels, parse_duration(wait, allow_inf=True), queueing=queueing,
                             packing=packing, gpus_per_node=gpus_per_node, trace_format=trace_format,
                             max_wait=budget, progress=progress)


def simulate_document(
    trace: str | Path,
    levels: Sequence[int],
    wait_hours: float,
    *,
    queueing: str = DEFAULT_QUEUEING,
    packing: str = "gpu",
    gpus_per_node: int = 8,
    trace_format: str = "auto",
    max_wait: dict[str, float] | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The unpriced `simulate -o json` document for `levels` and what the table's heading says of the
    trace and the replay (`format`, `records` read, `gpu_hours` of the jobs kept, `wait_hours`,
    `gpus_per_node`), or None when only the full path
    can answer."""
    try:
        from gpuplan.sim import _ckernel as k
    except ImportError:
        return None
    from gpuplan.sim.limits import MAX_TRACE_ROWS
    from gpuplan.sim.trace_formats import detect_format, first_line

    for r in levels:
        check_level(int(r), queueing, packing, gpus_per_node)
    p = Path(trace)
    if not p.is_file():
        return None
    fmt = detect_format(p) if trace_format == "auto" else trace_format
    if fmt not in _PLAIN_FORMATS:
        return None
    names, kind, reasons = _PLAIN_FORMATS[fmt]
    header = [c.strip().strip('"').lower() for c in first_line(p).lstrip("\ufeff").split(",")]
    if len(set(header)) != len(header) or not set(_REQUIRED[fmt]) <= set(header):
        return None
    got = k.read_columns(str(p), names, MAX_TRACE_ROWS)  # past the limit: None, and the full path says so
    if got is None or got[0] == 0:
        return None
    selected = k.select_jobs(kind, got[1])
    if selected is None:
        return None
    submit, duration, gpus, counts, gpu_hours = selected
    n = len(submit) // 8
    if n == 0:
        return None
    skipped = {reason: c for reason, c in zip(reasons, counts, strict=True) if c}
    units = k.prepare([submit, duration, gpus])
    wait_s = wait_hours * 3600.0
    best_effort = queueing == "best-effort-fifo"
    update, stop = progress(levels, n) if progress is not None else (None, lambda: None)
    runs = []
    try:
        for step, r in enumerate(levels):
            start: bytes | bytearray
            burst: bytes | bytearray
            if r == 0:
                start, burst = bytes(submit), b"\x01" * n
            else:
                start, burst = bytearray(8 * n), bytearray(n)
                nodes, node_cap = layout(int(r), packing, gpus_per_node)
                k.replay(submit, duration, units, nodes, node_cap, float(wait_s), best_effort, start, burst)
            runs.append(_run(int(r), n, skipped, k.summarize([submit, duration, gpus, start, burst], 1.0)))
            if update is not None:
                update(step + 1, len(levels))
    finally:
        stop()
    from gpuplan.sim.cost import SCHEMA, recommend

    budget = dict(max_wait or {})
    rec = recommend(runs, budget, 0.0, 30.0)
    doc = {
        "schema": SCHEMA,
        "max_wait_hours": budget,
        "researcher_hour_cost": None,
        "runs": runs,
        "recommended": rec.get("recommended"),
        "no_recommendation": rec.get("no_recommendation"),
        "cheapest": rec.get("cheapest"),
    }
    heading = {"format": fmt, "records": got[0], "gpu_hours": gpu_hours, "wait_hours": wait_hours,
               "gpus_per_node": gpus_per_node}
    return doc, heading


def _run(reserved: int, jobs: int, skipped: dict[str, int], s: tuple[Any, ...]) -> dict[str, Any]:
    """One unpriced run object from `summarize`'s numbers, as replay.summarize builds it."""
    from gpuplan.sim.cost import run_object

    burst_jobs, total_h, reserved_h, burst_h, mean, p50, p95, wmax, span_h, _calendar_h = s
    return run_object(reserved, jobs, skipped, burst_jobs, (total_h, reserved_h, burst_h), (mean, p50, p95, wmax),
                      span_h, None)

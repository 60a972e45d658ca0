"""The replay's documented limits (docs/simulate.md, "Limits"), checked before any work starts.

Past a limit the command stops at once with exit 2 and a message naming the flag or file: a sweep of
100 million pool sizes would otherwise run for hours and grow past 10 GB before saying anything.
The scenario's own bounds (GPUs per workload, workloads per scenario) live with the scenario reader.
"""

from __future__ import annotations

from pathlib import Path

from gpuplan import limits as _table
from gpuplan.errors import TraceError, UsageError
from gpuplan.lazy import np

MAX_POOL_SIZES = _table.MAX_POOL_SIZES
"""Reserved levels R in one sweep (`--reserved A:B:STEP` or a list)."""
MAX_RESERVED_GPUS = _table.MAX_RESERVED_GPUS
"""The largest R: ten times the largest workload a scenario may hold (100,000 GPUs)."""
MAX_TRACE_ROWS = _table.MAX_TRACE_ROWS
"""Lines of a CSV trace (header included); a Philly JSON log is not counted by lines."""

_CHUNK = 4 << 20
_NEWLINE = ord("\n")


def count_reserved(text: str) -> int:
    """How many levels `--reserved TEXT` names, counted without expanding ranges; exit 2 past the limits.

    Well-formed parts are checked here; malformed ones are left to `sim.replay.parse_reserved`'s error."""
    total = 0
    hint = (f"a sweep holds at most {MAX_POOL_SIZES:,} pool sizes of at most {MAX_RESERVED_GPUS:,} GPUs; "
            "use a coarser STEP, e.g. --reserved 0:1000:8, then refine around the answer.")
    for part in str(text).split(","):
        pieces = part.strip().split(":")
        try:
            nums = [int(p) for p in pieces]
        except ValueError:
            continue
        if len(nums) == 3 and nums[2] > 0 and nums[1] >= nums[0]:
            total += (nums[1] - nums[0]) // nums[2] + 1
            top = nums[0] + (nums[1] - nums[0]) // nums[2] * nums[2]
        elif len(nums) == 1:
            total += 1
            top = nums[0]
        else:
            continue
        if total > MAX_POOL_SIZES:
            raise UsageError(f"{total:,} pool sizes in one sweep is past the limit of {MAX_POOL_SIZES:,}",
                             field="--reserved", hint=hint)
        if top > MAX_RESERVED_GPUS:
            raise UsageError(f"R = {top:,} GPUs is past the limit of {MAX_RESERVED_GPUS:,}",
                             field="--reserved", hint=hint)
    return total


def check_levels(levels: list[int]) -> None:
    """The same limits for levels given as numbers (the API's `reserved=[...]`)."""
    if len(levels) > MAX_POOL_SIZES:
        raise UsageError(f"{len(levels):,} pool sizes in one sweep is past the limit of {MAX_POOL_SIZES:,}",
                         field="--reserved")
    if levels and max(levels) > MAX_RESERVED_GPUS:
        raise UsageError(f"R = {max(levels):,} GPUs is past the limit of {MAX_RESERVED_GPUS:,}",
                         field="--reserved")


def check_trace_rows(path: str | Path, limit: int | None = None) -> None:
    """Exit 2 when a CSV trace has more than `limit` (MAX_TRACE_ROWS) rows below its header, counted
    in 4 MiB blocks read into one buffer and stopping early. numpy counts the newlines (about twice
    the speed of `bytes.count`). A replay of a plain CSV needs no such pass: its C reader counts the
    rows before it reads any (`sim.replay.read_jobs`); this one serves the other readers."""
    limit = MAX_TRACE_ROWS if limit is None else limit
    p = Path(path)
    if not p.is_file():
        return  # the reader names the missing file
    lines = 0
    buf = bytearray(_CHUNK)
    view = np.frombuffer(buf, dtype=np.uint8)
    with p.open("rb", buffering=0) as fh:
        n = fh.readinto(buf)
        if bytes(buf[:n]).lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"[", b"{")):
            return  # a JSON log (Philly): entries are not lines
        while n:
            lines += int(np.count_nonzero(view[:n] == _NEWLINE))
            if lines > limit + 1:
                raise trace_rows_error(p, limit)
            n = fh.readinto(buf)


def trace_rows_error(path: str | Path, limit: int) -> TraceError:
    """The error of a trace past `limit` rows (the replay's C reader counts them as it reads)."""
    return TraceError(
        f"more than {limit:,} rows: past the limit of rows per trace",
        file=Path(path),
        hint="replay a sample (e.g. one month) or split the trace; docs/simulate.md lists the limits.",
    )

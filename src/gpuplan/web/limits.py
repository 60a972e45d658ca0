"""The server's own input limits, checked before any engine runs: past one, the request gets 422 at once.

They are set no lower than the command line's documented bounds (docs/web.md lists them): a request within
them still meets the server's time and memory bounds (`--heavy-timeout`, the heavy workers' memory cap).
"""

from __future__ import annotations

import re
from typing import Any

from gpuplan.errors import GpuplanError

MAX_GPUS_PER_WORKLOAD = 100_000
MAX_WORKLOADS = 10_000
MAX_SWEEP_LEVELS = 1_000
MAX_RESERVED_GPUS = 1_000_000  # as the command line (ten times the largest workload)
MAX_DEMAND_GPUS = 100_000  # GPUs of one row (one hour, one GPU type) of a demand CSV
MAX_DEMAND_ROWS = 1_000_000

# A scenario within the limits needs no check: fewer than 10,000 workloads fit in this many characters only
# if none is over ~10 characters (which no valid workload is), and a number over 100,000 needs 6 digits, an
# exponent, an underscore, a base prefix (0x, 0o, 0b), a sexagesimal `30:00:00` or an alias to spell it.
_SHORT = 100_000
_DIGITS = bytes.maketrans(b"012345678", b"999999999")
_SPELLED = (b"999999", b"9_9", b"9:9", b"9e", b"9E", b"9.e", b"9.E", b"*", b"&", b".inf", b".Inf", b".INF")
_BASE = re.compile(rb"0[xXoObB]")


def _suspect(text: str) -> bool:
    """Whether `text` may spell a number past a limit (or hide one behind an alias). Byte operations: a
    regular expression with these alternatives costs ~100 ns a character, this ~1 ns."""
    raw = text.encode("utf-8", "surrogatepass")
    digits = raw.translate(_DIGITS)
    if any(s in digits for s in _SPELLED):
        return True
    return any(m.start() == 0 or not (raw[m.start() - 1:m.start()].isalnum() or raw[m.start() - 1] == 95)
               for m in _BASE.finditer(raw))


class LimitError(GpuplanError):
    """An input past one of the server's limits (answered 422 before any engine runs)."""

    kind = "limit"


def check_scenario(text: str, name: str = "scenario.yaml") -> None:
    """Refuse a scenario with more than `MAX_WORKLOADS` workloads or a workload over `MAX_GPUS_PER_WORKLOAD`
    GPUs. A text that cannot break them is not parsed here; one that does not parse is left to the engine."""
    if len(text) < _SHORT and not _suspect(text):
        return
    from gpuplan.inputs.scenario import parse_scenario_text

    try:
        data, _ = parse_scenario_text(text, name)
    except GpuplanError:
        return  # the engine reports it with its line
    workloads = data.get("workloads")
    if not isinstance(workloads, list):
        return
    if len(workloads) > MAX_WORKLOADS:
        raise LimitError(f"{len(workloads):,} workloads: this server takes at most {MAX_WORKLOADS:,} per scenario",
                         file=name, field="workloads", hint="split the scenario, or run the command line.")
    for i, w in enumerate(workloads):
        gpus = w.get("gpus") if isinstance(w, dict) else None
        if isinstance(gpus, int | float) and not isinstance(gpus, bool) and gpus > MAX_GPUS_PER_WORKLOAD:
            raise LimitError(f"gpus: {_num(gpus)} is over the limit of {MAX_GPUS_PER_WORKLOAD:,} GPUs per workload",
                             file=name, field=f"workloads[{i}].gpus",
                             hint=f"a workload uses at most {MAX_GPUS_PER_WORKLOAD:,} GPUs.")


def check_reserved(text: str) -> None:
    """Refuse a sweep of more than `MAX_SWEEP_LEVELS` pool sizes, or a size over `MAX_RESERVED_GPUS`, counted
    without building the list (`0:100000000:1` is refused in microseconds). Malformed text is the engine's."""
    levels = 0
    for part in text.split(","):
        part = part.strip()
        try:
            if ":" in part:
                a, b, step = (int(x) for x in part.split(":"))
                if step <= 0 or b < a:
                    return
                levels += (b - a) // step + 1
                top = b
            else:
                top = int(part)
                levels += 1
        except ValueError:
            return
        if top > MAX_RESERVED_GPUS:
            raise LimitError(f"reserved: {_num(top)} GPUs is over the limit of {MAX_RESERVED_GPUS:,}",
                             field="reserved", hint=f"pool sizes go up to {MAX_RESERVED_GPUS:,} GPUs.")
    if levels > MAX_SWEEP_LEVELS:
        raise LimitError(f"reserved: {levels:,} pool sizes; a sweep replays at most {MAX_SWEEP_LEVELS:,}",
                         field="reserved", hint="use a larger STEP, e.g. 0:512:8.")


def check_demand_csv(text: str) -> None:
    """Refuse a demand CSV of more than `MAX_DEMAND_ROWS` rows or a row over `MAX_DEMAND_GPUS` GPUs."""
    lines = text.count("\n")
    if lines > MAX_DEMAND_ROWS + 1:
        raise LimitError(f"the demand has {lines:,} rows; this server reads at most {MAX_DEMAND_ROWS:,}",
                         file="demand.csv", field="demand_csv",
                         hint="aggregate it to hours (one row per hour and GPU).")
    if not re.search(r"\d{6}|\d\s*[eE]\s*[+]?\d|inf", text, re.IGNORECASE):
        return
    import csv
    import io

    reader = csv.reader(io.StringIO(text))
    header = [h.strip().lower() for h in next(reader, [])]
    if "gpus" not in header:
        return
    col = header.index("gpus")
    for n, row in enumerate(reader, start=2):
        try:
            gpus = float(row[col])
        except (ValueError, IndexError, OverflowError):
            continue  # the engine names the bad row
        if gpus > MAX_DEMAND_GPUS:
            raise LimitError(f"gpus: {_num(gpus)} in one hour is over the limit of {MAX_DEMAND_GPUS:,}",
                             file="demand.csv", line=n, field="gpus",
                             hint="check the demand's units (GPUs, not GPU-seconds).")


def _num(x: Any) -> str:
    if isinstance(x, int):
        return f"{x:,}" if x < 10**15 else f"a {len(str(x))}-digit number"
    return f"{x:.4g}"

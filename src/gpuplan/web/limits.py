"""The server's own input limits, checked before any engine runs: past one, the request gets 422 at once.

They are set no lower than the command line's documented bounds (docs/web.md lists them): a request within
them still meets the server's time and memory bounds (`--heavy-timeout`, the heavy workers' memory cap).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpuplan import limits as _table
from gpuplan.limits import LimitError as LimitError

# The values are gpuplan.limits' (one table for the command line and the web, docs/limits.md).
MAX_GPUS_PER_WORKLOAD = _table.MAX_GPUS_PER_WORKLOAD
MAX_WORKLOADS = _table.MAX_WORKLOADS
MAX_SWEEP_LEVELS = _table.MAX_POOL_SIZES
MAX_RESERVED_GPUS = _table.MAX_RESERVED_GPUS
MAX_DEMAND_GPUS = _table.MAX_DEMAND_GPUS  # GPUs of one row (one hour, one GPU type) of a demand CSV
MAX_DEMAND_ROWS = _table.MAX_DEMAND_ROWS
MAX_COMMIT_PATHS = _table.MAX_WEB_COMMIT_PATHS  # the command line takes up to 1,000,000
MAX_COMMIT_SEED = 2**32 - 1
MAX_QUOTE_ROWS = _table.MAX_WEB_QUOTE_ROWS  # lines of one quotes import

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


def check_scenario(text: str, name: str = "scenario.yaml") -> None:
    """Refuse a scenario with more than `MAX_WORKLOADS` workloads or a workload over `MAX_GPUS_PER_WORKLOAD`
    GPUs. A text that cannot break them is not parsed here; one that does not parse is left to the engine."""
    if len(text) < _SHORT and not _suspect(text):
        return
    for i, count, gpus in _workloads(text):
        if count > MAX_WORKLOADS:
            raise LimitError(f"more than {MAX_WORKLOADS:,} workloads: this server takes at most {MAX_WORKLOADS:,} "
                             "per scenario", file=name, field="workloads",
                             hint="split the scenario, or run the command line.")
        if gpus is not None and gpus > MAX_GPUS_PER_WORKLOAD:
            raise LimitError(f"gpus: {_num(gpus)} is over the limit of {MAX_GPUS_PER_WORKLOAD:,} GPUs per workload",
                             file=name, field=f"workloads[{i}].gpus",
                             hint=f"a workload uses at most {MAX_GPUS_PER_WORKLOAD:,} GPUs.")


def _workloads(text: str) -> Iterator[tuple[int, int, int | float | None]]:
    """(index, how many workloads so far, its `gpus` when written as a number) for each item of the top-level
    `workloads` list, from libyaml's events: ~10x faster than building the document (0.3 s against 2.3 s
    for 10,000 workloads), and an alias is one event, never an expansion. Text that is not YAML yields
    nothing (the engine reports it with its line)."""
    import yaml

    events = yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    depth = 0  # 1: the document's mapping; 2: the workloads list; 3: one workload
    key_next = False  # at depth 1 or 3, the next scalar is a key
    in_workloads = False
    want: str | None = None  # the key whose value comes next
    index = -1
    try:
        for ev in events:
            if isinstance(ev, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                if depth == 1 and want == "workloads" and isinstance(ev, yaml.SequenceStartEvent):
                    in_workloads = True
                elif in_workloads and depth == 2:
                    index += 1
                    yield index, index + 1, None
                depth += 1
                key_next = isinstance(ev, yaml.MappingStartEvent) and depth in (1, 3)
                want = None
            elif isinstance(ev, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                depth -= 1
                if depth == 1:
                    in_workloads = False
                key_next = depth in (1, 3) and not (depth == 3 and not in_workloads)
                want = None
            elif isinstance(ev, yaml.ScalarEvent | yaml.AliasEvent):
                if in_workloads and depth == 2:
                    index += 1
                    yield index, index + 1, None
                elif depth in (1, 3) and key_next and isinstance(ev, yaml.ScalarEvent):
                    want, key_next = ev.value, False
                elif depth in (1, 3):
                    if depth == 3 and in_workloads and want == "gpus" and isinstance(ev, yaml.ScalarEvent):
                        yield index, index + 1, _number(ev.value)
                    want, key_next = None, True
    except yaml.YAMLError:
        return


def _number(value: str) -> int | float | None:
    """A YAML 1.1 number as the scenario reader would read it (ints in any base, 1:30 sexagesimal, floats)."""
    if value.isdigit() and len(value) < 16 and (value[0] != "0" or value == "0"):  # 010 is octal in YAML 1.1
        return int(value)  # the common case, without a YAML parser per workload
    import yaml

    try:
        v = yaml.safe_load(value)
    except yaml.YAMLError:
        return None
    return v if isinstance(v, int | float) and not isinstance(v, bool) else None


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


def check_commit(paths: int, seed: int) -> None:
    """Refuse more than `MAX_COMMIT_PATHS` paths (fewer than 1 is the engine's usage error) or a seed outside
    0..2^32-1 (numpy's seeds; the command line passes any integer on)."""
    if paths > MAX_COMMIT_PATHS:
        raise LimitError(f"paths: {_num(paths)} is over this server's limit of {MAX_COMMIT_PATHS:,}",
                         field="paths", hint=f"use at most {MAX_COMMIT_PATHS:,} paths here, or run "
                         "`gpuplan commit --paths N` on the command line.")
    if paths < 1:
        raise LimitError(f"paths: expected at least 1, got {paths}", field="paths",
                         hint="10,000 paths (the default) give figures stable to about 1%.")
    if not 0 <= seed <= MAX_COMMIT_SEED:
        raise LimitError(f"seed: expected 0 to {MAX_COMMIT_SEED:,}, got {_num(seed)}", field="seed",
                         hint="any whole number in that range; the same seed gives the same answer.")


def check_quotes_file(data: bytes, name: str) -> None:
    """Refuse a quotes file of more than `MAX_QUOTE_ROWS` lines."""
    lines = data.count(b"\n")
    if lines > MAX_QUOTE_ROWS + 1:
        raise LimitError(f"the file has {lines:,} lines; this server imports at most {MAX_QUOTE_ROWS:,} quotes "
                         "at once", file=name, field="file",
                         hint="split it, or run `gpuplan quotes import` on the command line.")

"""The C reader's front for a replay: which numeric columns each plain format needs, and reading them
(`_ckernel.read_columns`) without numpy or the general readers (`sim.traces`), which run only where
the C reader cannot (another format, quotes, a value the readers refuse, no extension).
"""

from __future__ import annotations

from pathlib import Path

from gpuplan.sim.trace_formats import HEADERS, detect_format, first_line

PLAIN_COLUMNS: dict[str, tuple[str, ...]] = {
    "generic": ("submit_time", "duration", "gpus"),
    "tiresias": ("submit_time", "duration", "num_gpu"),
    "alibaba-2023": ("num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"),
}
"""The numeric columns a replay reads of each plain format, in the order `_ckernel.prepare_jobs` takes."""


def plain_columns(
    p: Path, first: str, names: tuple[str, ...], max_rows: int = -1
) -> tuple[int, list[memoryview], tuple[str, ...]] | None:
    """(rows, one memoryview of float64 per name, the header) by the C reader, when the extension is
    built and the file is plain numeric CSV (no quotes, every line the header's number of fields, plain
    numbers); else None. Past `max_rows` rows (>= 0): the limit's error, counted before any column is
    allocated."""
    try:
        from gpuplan.sim._ckernel import read_columns
    except ImportError:
        return None
    header = tuple(c.strip().strip('"').lower() for c in first.lstrip("\ufeff").split(","))
    if len(set(header)) != len(header) or not set(names) <= set(header):
        return None
    got = read_columns(str(p), names, max_rows)
    if got is not None and got[1] is None:
        from gpuplan.sim.limits import trace_rows_error

        raise trace_rows_error(p, max_rows)
    if got is None or got[0] == 0 or got[1] is None:
        return None  # the general reader names what is wrong
    return got[0], got[1], header


def read_plain_columns(path: str | Path, fmt: str, max_rows: int) -> tuple[str, int, list[memoryview]] | None:
    """For a replay, without numpy: (the format, rows, the `PLAIN_COLUMNS` of it as memoryviews of
    float64) when the C reader can read the file (a plain generic, tiresias or openb CSV with every
    column its format requires); None otherwise (the general reader then reads it, or names what is
    wrong). `fmt` `auto` is told from the header (an unknown header raises as `read_trace` does);
    more than `max_rows` rows raise the limit's error (exit 2) before the columns are read."""
    p = Path(path)
    if not p.is_file():
        return None
    if fmt == "auto":
        fmt = detect_format(p)
    names = PLAIN_COLUMNS.get(fmt)
    if names is None:
        return None
    first = first_line(p)
    required = HEADERS[fmt][1:] if fmt == "alibaba-2023" else HEADERS[fmt]  # `name` is not needed for a replay
    if not set(required) <= {c.strip().strip('"').lower() for c in first.lstrip("\ufeff").split(",")}:
        return None
    got = plain_columns(p, first, names, max_rows)
    return None if got is None else (fmt, got[0], got[1])

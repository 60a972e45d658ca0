"""Job-trace readers: each public trace format becomes one plain `Trace`.

A `Trace` is parallel numpy arrays in file order (submit seconds, duration seconds, GPUs as a float,
optional GPU type) plus the count of skipped records by reason. The format is chosen from the header
(`format="auto"`) or named (`generic`, `alibaba-2023`, `alibaba-pai-2020`, `philly`, `helios`,
`tiresias`). Input that is wrong (a missing column, text in a number, a negative duration, an empty
file) raises `TraceError` naming the file, the line and the field, with a hint; records that are
fine but unusable for a replay (no GPU, never ran, zero run time) are skipped and counted.

Per format (job; submit; run time; GPUs):
- generic: a row `submit_time,duration,gpus[,gpu]`; submit_time (s); duration (s); gpus (fractional ok).
- alibaba-2023: a pod of `openb_pod_list_*.csv`; creation_time; deletion_time - scheduled_time;
  num_gpu, or gpu_milli/1000 when num_gpu == 1 (the trace README's rules).
- alibaba-pai-2020: a job_name of `pai_task_table`; the earliest task start_time (the job table's
  start_time when `pai_job_table.csv` lies beside it); latest task end - earliest task start;
  the sum over tasks of inst_num x plan_gpu/100.
- philly: an entry of `cluster_job_log`; submitted_time; the sum over attempts of end - start;
  the GPUs of the last attempt.
- helios: a row of `cluster_log.csv`; submit_time; duration (or end_time - start_time); gpu_num.
- tiresias: a row `job_id,num_gpu,submit_time,...,duration`; submit_time; duration; num_gpu.
Written times (philly, helios) are UTC unless they carry an offset; the machine's zone never applies.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuplan.errors import TraceError
from gpuplan.lazy import np
from gpuplan.sim.plain_csv import plain_columns
from gpuplan.sim.trace_formats import FORMATS as FORMATS  # where callers found them before
from gpuplan.sim.trace_formats import HEADERS, PAI_JOB_COLUMNS, PAI_TASK_COLUMNS, first_line
from gpuplan.sim.trace_formats import detect_format as detect_format

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

# Trace times are wall-clock text. They are read as UTC unless the text carries its own offset (or Z):
# never in the zone of the machine running the replay, which would shift jobs and stretch or shrink
# any that span a daylight-saving change.
HELIOS_TIME = "%Y-%m-%d %H:%M:%S"
HELIOS_TIME_WITH_OFFSET = "%Y-%m-%d %H:%M:%S%#z"  # %#z: +08:00, +0800, " +08:00" or Z
PHILLY_TIME = re.compile(r"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)\s*(Z|[+-]\d{2}(?::?\d{2})?)?")


@dataclass(frozen=True)
class Trace:
    """Jobs in file order. `gpu_type` is None when the format does not say."""

    submit: np.ndarray  # float64 seconds
    duration: np.ndarray  # float64 seconds, > 0
    gpus: np.ndarray  # float64, > 0
    gpu_type: np.ndarray | None = None  # object array of str | None
    skipped: dict[str, int] = field(default_factory=dict)
    source: str = ""
    format: str = "generic"
    records: int = 0  # records read (rows, pods, JSON entries)

    def __len__(self) -> int:
        return int(self.submit.shape[0])

    @property
    def gpu_hours(self) -> float:
        return float(np.sum(self.gpus * self.duration) / 3600.0)


# ---------------------------------------------------------------- entry point


def read_trace(path: str | Path, fmt: str = "auto", *, gpu_types: bool = True) -> Trace:
    """Read `path` as `fmt` (one of FORMATS, or `auto` to choose from the header).

    `gpu_types=False`: the caller needs no GPU type (a replay), so a plain numeric CSV (generic,
    tiresias, openb) is read by the C reader, only the columns the replay needs, without polars."""
    p = Path(path)
    if not p.is_file():
        raise TraceError("no such trace file", file=p, hint="give the path of a job trace file.")
    if fmt == "auto":
        fmt = detect_format(p)
    if fmt not in FORMATS:
        raise TraceError(
            f"unknown trace format {fmt!r}",
            file=p,
            field="--trace-format",
            hint=f"use auto or one of {', '.join(FORMATS)}.",
        )
    if fmt == "generic":
        trace = _read_generic(p, gpu_types)
    elif fmt == "alibaba-2023":
        trace = _read_openb(p, gpu_types)
    elif fmt == "tiresias":
        trace = _read_tiresias(p, gpu_types)
    else:
        trace = {"alibaba-pai-2020": _read_pai, "philly": _read_philly, "helios": _read_helios}[fmt](p)
    if len(trace) == 0:
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(trace.skipped.items())) or "none"
        raise TraceError(
            f"no usable jobs ({trace.records} records read; skipped: {detail})",
            file=p,
            hint="a replay needs at least one job that uses GPUs and has a positive run time.",
        )
    return trace


# ---------------------------------------------------------------- CSV plumbing


@dataclass(frozen=True)
class _Plain:
    """Numeric columns read by the C reader (`_ckernel.read_columns`): float64, NaN where empty."""

    height: int
    data: dict[str, np.ndarray]
    header: tuple[str, ...]  # every column the file has (as `_require` checks them)

    @property
    def columns(self) -> list[str]:
        return list(self.header)


def _read_plain(p: Path, first: str, names: tuple[str, ...]) -> _Plain | None:
    """Only `names`, by the C reader (`plain_csv.plain_columns`), as numpy arrays over its buffers; else None."""
    got = plain_columns(p, first, names)
    if got is None:
        return None
    rows, arrays, header = got
    data = {n: np.frombuffer(a, dtype=np.float64) for n, a in zip(names, arrays, strict=True)}
    return _Plain(rows, data, header)


def _read_numeric(
    p: Path, fmt: str, numeric: tuple[str, ...], keep: tuple[str, ...], plain: bool
) -> pl.DataFrame | _Plain:
    """`plain` (the caller needs only the `numeric` columns): the C reader where it can; else `_read_csv`."""
    if plain:
        fast = _read_plain(p, first_line(p), numeric)
        if fast is not None:
            return fast
    return _read_csv(p, fmt, numeric=numeric, keep=keep)


def _read_csv(
    p: Path,
    fmt: str,
    columns: tuple[str, ...] | None = None,
    numeric: tuple[str, ...] = (),
    keep: tuple[str, ...] = (),
) -> pl.DataFrame:
    """The CSV as a DataFrame with lower-cased column names.

    Fast path (a header and `numeric` given): read only the `numeric` + `keep` columns, numbers typed
    as Float64 by polars' parallel parser. When that fails (text in a number, ragged lines), read every
    column as text so that `_numbers` can name the line and field of the first bad value."""
    import polars as pl

    first = first_line(p)  # empty file -> TraceError
    df = None
    if columns is None and numeric:
        names = {c.strip().strip('"').lower(): c.strip('"') for c in first.lstrip("\ufeff").split(",")}
        wanted = [names[c] for c in (*numeric, *keep) if c in names]
        if len(names) == len(first.split(",")) and wanted:
            try:
                df = pl.read_csv(
                    p,
                    columns=wanted,
                    schema_overrides={names[c]: pl.Float64 for c in numeric if c in names},
                    infer_schema_length=0,
                )
            except Exception:
                df = None
    try:
        if df is not None:
            pass
        elif columns is None:
            df = pl.read_csv(p, infer_schema_length=0, truncate_ragged_lines=False)
        else:
            df = pl.read_csv(p, infer_schema_length=0, has_header=False, new_columns=list(columns))
    except Exception as exc:  # polars' own parse errors (ragged lines, bad quoting)
        raise TraceError(
            f"not a readable CSV file: {str(exc).splitlines()[0]}",
            file=p,
            hint=f"check the file is a comma-separated {fmt} trace.",
        ) from exc
    df = df.rename({c: c.strip().strip('"').lower() for c in df.columns})
    if df.height == 0:
        raise TraceError(
            "the file has a header but no job rows",
            file=p,
            line=2,
            hint="a trace needs at least one job row.",
        )
    return df


def _require(df: pl.DataFrame | _Plain, p: Path, fmt: str, needed: tuple[str, ...]) -> None:
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise TraceError(
            f"missing column {missing[0]!r} for the {fmt} format",
            file=p,
            line=1,
            field=missing[0],
            hint=f"the header must include {','.join(needed)}; it has {','.join(df.columns)}.",
        )


def _numbers(
    df: pl.DataFrame | _Plain, col: str, p: Path, *, header: bool = True, required: bool = True
) -> np.ndarray:
    """Column `col` as float64 (NaN where empty); text that is not a number raises with its line."""
    if isinstance(df, _Plain):
        arr = df.data[col]
        if required:
            _no_empty(arr, p, col, header)
        return arr
    import polars as pl

    column = df.get_column(col)
    if column.dtype == pl.Float64:  # typed by the fast path: already numbers, nulls where empty
        num = column
        bad = None
    else:
        raw = column.str.strip_chars()
        num = raw.cast(pl.Float64, strict=False)
        bad = num.is_null() & raw.is_not_null() & (raw != "")
    if bad is not None and bad.any():
        i = int(bad.arg_max())  # type: ignore[arg-type]
        raise TraceError(
            f"expected a number, got {raw[i]!r}",
            file=p,
            line=i + (2 if header else 1),
            field=col,
            hint=f"{col} must be a plain number in every row.",
        )
    arr = num.fill_null(np.nan).to_numpy().astype(np.float64, copy=False)
    if required:
        _no_empty(arr, p, col, header)
    return arr


def _no_empty(arr: np.ndarray, p: Path, col: str, header: bool) -> None:
    empty = np.isnan(arr)
    if empty.any():
        i = int(np.argmax(empty))
        raise TraceError(
            "empty value",
            file=p,
            line=i + (2 if header else 1),
            field=col,
            hint=f"{col} must be given in every row.",
        )


def _no_negative(arr: np.ndarray, p: Path, col: str, what: str, *, header: bool = True) -> None:
    neg = arr < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise TraceError(
            f"negative {what}: {arr[i]:g}",
            file=p,
            line=i + (2 if header else 1),
            field=col,
            hint=f"{col} must be >= 0; check the column order and units (seconds).",
        )


def _build(
    p: Path,
    fmt: str,
    submit: np.ndarray,
    duration: np.ndarray,
    gpus: np.ndarray,
    gpu_type: np.ndarray | None,
    reasons: list[tuple[str, np.ndarray]],
    records: int,
    *,
    in_place: bool = False,
) -> Trace:
    """Apply the skip masks in order (each record counted once, under the first reason that holds).

    `in_place`: the three float64 arrays are the reader's own and used nowhere else, so the kept
    records are moved to their front instead of copied (at millions of jobs, a third less memory).

    An infinite time, duration or GPU count (`inf`, `1e999`) is refused, not skipped: it is no missing
    value but a number no job has, and a replay or a demand curve over it would never end."""
    for name, arr in (("submit time", submit), ("duration", duration), ("GPU count", gpus)):
        inf = np.isinf(arr)
        if inf.any():
            i = int(np.argmax(inf))
            raise TraceError(f"job {i + 1:,} has an infinite {name} ({arr[i]})", file=p,
                             field=f"[{i}]" if fmt == "philly" else None,
                             hint="times, durations and GPU counts are finite numbers; an unknown one is left empty.")
    keep = np.ones(submit.shape[0], dtype=bool)
    skipped: dict[str, int] = {}
    for reason, mask in reasons:
        hit = mask & keep
        n = int(hit.sum())
        if n:
            skipped[reason] = n
        keep &= ~hit
    if in_place:
        submit, duration, gpus = (_compact(a, keep) for a in (submit, duration, gpus))
    else:
        submit, duration, gpus = submit[keep], duration[keep], gpus[keep]
    return Trace(
        submit=np.ascontiguousarray(submit, dtype=np.float64),
        duration=np.ascontiguousarray(duration, dtype=np.float64),
        gpus=np.ascontiguousarray(gpus, dtype=np.float64),
        gpu_type=None if gpu_type is None else gpu_type[keep],
        skipped=skipped,
        source=str(p),
        format=fmt,
        records=records,
    )


def _compact(a: np.ndarray, keep: np.ndarray, block: int = 1 << 20) -> np.ndarray:
    """`a[keep]` written over the front of `a` (a view of it), a block at a time: each block's kept
    values are copied out before they are written at or before the block's start."""
    pos = 0
    for lo in range(0, a.shape[0], block):
        vals = a[lo : lo + block][keep[lo : lo + block]]
        a[pos : pos + vals.shape[0]] = vals
        pos += vals.shape[0]
    return a[:pos]


def _strings(df: pl.DataFrame | _Plain, col: str) -> np.ndarray | None:
    if isinstance(df, _Plain) or col not in df.columns:
        return None
    import polars as pl

    vals = df.get_column(col).cast(pl.String).str.strip_chars()
    vals = pl.select(pl.when(vals == "").then(None).otherwise(vals)).to_series()
    return vals.to_numpy().astype(object)


# ---------------------------------------------------------------- formats


def _read_generic(p: Path, gpu_types: bool = True) -> Trace:
    df = _read_numeric(p, "generic", ("submit_time", "duration", "gpus"), ("gpu",), not gpu_types)
    _require(df, p, "generic", HEADERS["generic"])
    submit = _numbers(df, "submit_time", p)
    duration = _numbers(df, "duration", p)
    gpus = _numbers(df, "gpus", p)
    _no_negative(duration, p, "duration", "duration")
    _no_negative(gpus, p, "gpus", "GPU count")
    return _build(
        p,
        "generic",
        submit,
        duration,
        gpus,
        _strings(df, "gpu"),
        [("no_gpu", gpus <= 0), ("non_positive_duration", duration <= 0)],
        df.height,
    )


def _read_tiresias(p: Path, gpu_types: bool = True) -> Trace:
    df = _read_numeric(p, "tiresias", ("submit_time", "duration", "num_gpu"), ("job_id",), not gpu_types)
    _require(df, p, "tiresias", HEADERS["tiresias"])
    submit = _numbers(df, "submit_time", p)
    duration = _numbers(df, "duration", p)
    gpus = _numbers(df, "num_gpu", p)
    _no_negative(duration, p, "duration", "duration")
    _no_negative(gpus, p, "num_gpu", "GPU count")
    return _build(
        p,
        "tiresias",
        submit,
        duration,
        gpus,
        None,
        [("no_gpu", gpus <= 0), ("non_positive_duration", duration <= 0)],
        df.height,
    )


def _read_openb(p: Path, gpu_types: bool = True) -> Trace:
    """Alibaba 2023 openb pods, by the trace README's rules: skip num_gpu == 0 and pods without
    scheduled_time; submit = creation_time; run time = deletion_time - scheduled_time (skip when <= 0);
    GPUs = num_gpu, or gpu_milli/1000 when num_gpu == 1."""
    df = _read_numeric(
        p,
        "alibaba-2023",
        ("num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"),
        ("gpu_spec",),
        not gpu_types,
    )
    _require(df, p, "alibaba-2023", HEADERS["alibaba-2023"][1:])  # `name` is not needed for a replay
    num_gpu = _numbers(df, "num_gpu", p)
    milli = _numbers(df, "gpu_milli", p, required=False)
    created = _numbers(df, "creation_time", p)
    scheduled = _numbers(df, "scheduled_time", p, required=False)
    deleted = _numbers(df, "deletion_time", p, required=False)
    _no_negative(num_gpu, p, "num_gpu", "GPU count")
    neg_milli = ~np.isnan(milli) & (milli < 0)
    if neg_milli.any():
        i = int(np.argmax(neg_milli))
        raise TraceError(
            f"negative GPU share: {milli[i]:g}",
            file=p,
            line=i + 2,
            field="gpu_milli",
            hint="gpu_milli is the share of one GPU in 1/1000, from 0 to 1000.",
        )
    use_milli = (num_gpu == 1) & ~np.isnan(milli)
    never_ran = np.isnan(scheduled)
    no_end = ~never_ran & np.isnan(deleted)
    if isinstance(df, _Plain):  # the C reader's own buffers, read once: reused in place (memory at millions)
        gpus = np.divide(milli, 1000.0, out=milli)
        np.copyto(gpus, num_gpu, where=~use_milli)
        with np.errstate(invalid="ignore"):
            duration = np.subtract(deleted, scheduled, out=deleted)
    else:
        gpus = np.where(use_milli, milli / 1000.0, num_gpu)
        with np.errstate(invalid="ignore"):
            duration = deleted - scheduled
    gpu_type = _strings(df, "gpu_spec")
    return _build(
        p,
        "alibaba-2023",
        created,
        duration,
        gpus,
        gpu_type,
        [
            ("no_gpu", (num_gpu == 0) | (gpus <= 0)),
            ("never_ran", never_ran),
            ("missing_time", no_end),
            ("non_positive_duration", ~(duration > 0)),
        ],
        df.height,
        in_place=isinstance(df, _Plain),
    )


def _read_helios(p: Path) -> Trace:
    import polars as pl

    df = _read_csv(p, "helios")
    _require(df, p, "helios", HEADERS["helios"])
    gpus = _numbers(df, "gpu_num", p)
    _no_negative(gpus, p, "gpu_num", "GPU count")

    def times(col: str, required: bool) -> np.ndarray:
        raw = df.get_column(col).str.strip_chars()
        # polars reads naive times as UTC (never the local zone); one with an offset converts to UTC
        naive = raw.str.to_datetime(HELIOS_TIME, strict=False, time_unit="ms").cast(pl.Int64)
        offset = raw.str.to_datetime(HELIOS_TIME_WITH_OFFSET, strict=False, time_unit="ms").cast(pl.Int64)
        parsed = naive.fill_null(offset)
        bad = parsed.is_null() & raw.is_not_null() & (raw != "") & (raw.str.to_lowercase() != "none")
        if bad.any():
            i = int(bad.arg_max())  # type: ignore[arg-type]
            raise TraceError(
                f"expected a time like 2020-04-01 00:00:15, got {raw[i]!r}",
                file=p,
                line=i + 2,
                field=col,
                hint=f"{col} must be written YYYY-MM-DD HH:MM:SS (UTC unless an offset such as +08:00 follows).",
            )
        sec = parsed.cast(pl.Float64) / 1000.0
        arr = sec.to_numpy().astype(np.float64)
        if required and np.isnan(arr).any():
            i = int(np.argmax(np.isnan(arr)))
            raise TraceError(
                "empty value", file=p, line=i + 2, field=col, hint=f"{col} must be given in every row."
            )
        return arr

    submit = times("submit_time", True)
    start = times("start_time", False)
    if "duration" in df.columns:
        duration = _numbers(df, "duration", p, required=False)
        neg = ~np.isnan(duration) & (duration < 0)
        if neg.any():
            i = int(np.argmax(neg))
            raise TraceError(
                f"negative duration: {duration[i]:g}",
                file=p,
                line=i + 2,
                field="duration",
                hint="duration is the run time in seconds, >= 0.",
            )
    elif "end_time" in df.columns:
        end = times("end_time", False)
        duration = end - start
    else:
        raise TraceError(
            "missing column 'duration' (or 'end_time') for the helios format",
            file=p,
            line=1,
            field="duration",
            hint="Helios cluster_log.csv has duration and end_time columns.",
        )
    return _build(
        p,
        "helios",
        submit,
        duration,
        gpus,
        None,
        [("no_gpu", gpus <= 0), ("never_ran", np.isnan(start)), ("non_positive_duration", ~(duration > 0))],
        df.height,
    )


def _pai_has_header(p: Path) -> bool:
    first = first_line(p).lower()
    return "job_name" in first


def _read_pai(p: Path) -> Trace:
    """PAI 2020: one job per job_name of the task table (tasks of a job run together).

    Given the job table, the task table must lie beside it as pai_task_table.csv; given the task
    table, a pai_job_table.csv beside it (if any) supplies the submission times."""

    header = _pai_has_header(p)
    if header:
        df = _read_csv(p, "alibaba-pai-2020")
    else:
        n = len(first_line(p).split(","))
        df = _read_csv(
            p, "alibaba-pai-2020", PAI_TASK_COLUMNS if n == len(PAI_TASK_COLUMNS) else PAI_JOB_COLUMNS
        )
    cols = set(df.columns)
    if "plan_gpu" not in cols and set(PAI_JOB_COLUMNS) <= cols:  # the job table: look for the tasks
        task_path = p.with_name("pai_task_table.csv")
        if not task_path.is_file():
            raise TraceError(
                "the PAI job table has no GPU counts",
                file=p,
                field="plan_gpu",
                hint="give pai_task_table.csv (or put it beside the job table).",
            )
        return _read_pai_tasks(task_path, job_table=p)
    return _read_pai_tasks(p, job_table=p.with_name("pai_job_table.csv"), df=df, header=header)


def _read_pai_tasks(
    p: Path, job_table: Path | None, df: pl.DataFrame | None = None, header: bool | None = None
) -> Trace:
    import polars as pl

    if df is None:
        header = _pai_has_header(p)
        df = _read_csv(p, "alibaba-pai-2020", None if header else PAI_TASK_COLUMNS)
    h = bool(header)
    _require(df, p, "alibaba-pai-2020", HEADERS["alibaba-pai-2020"])
    inst = _numbers(df, "inst_num", p, header=h, required=False)
    plan = _numbers(df, "plan_gpu", p, header=h, required=False)
    start = _numbers(df, "start_time", p, header=h, required=False)
    end = _numbers(df, "end_time", p, header=h, required=False)
    for arr, col in ((inst, "inst_num"), (plan, "plan_gpu")):
        neg = ~np.isnan(arr) & (arr < 0)
        if neg.any():
            i = int(np.argmax(neg))
            raise TraceError(
                f"negative value: {arr[i]:g}",
                file=p,
                line=i + (2 if h else 1),
                field=col,
                hint=f"{col} must be >= 0.",
            )
    gpu_type = df.get_column("gpu_type").str.strip_chars() if "gpu_type" in df.columns else None
    tasks = pl.DataFrame(
        {
            "job": df.get_column("job_name"),
            "gpus": np.nan_to_num(inst, nan=1.0) * np.nan_to_num(plan, nan=0.0) / 100.0,
            "start": start,
            "end": end,
            "gtype": gpu_type if gpu_type is not None else pl.Series([None] * df.height, dtype=pl.String),
        }
    ).with_columns(pl.col("start").fill_nan(None), pl.col("end").fill_nan(None))
    jobs = tasks.group_by("job", maintain_order=True).agg(
        pl.col("gpus").sum(),
        pl.col("start").min().alias("start"),
        pl.col("end").max().alias("end"),
        (pl.col("start").is_null() | pl.col("end").is_null()).any().alias("missing"),
        pl.col("gtype").filter(pl.col("gpus") > 0).first().alias("gtype"),
    )
    submit = jobs.get_column("start").cast(pl.Float64).fill_null(np.nan).to_numpy().astype(np.float64)
    if job_table is not None and job_table.is_file() and job_table != p:
        jh = _pai_has_header(job_table)
        jdf = _read_csv(job_table, "alibaba-pai-2020", None if jh else PAI_JOB_COLUMNS)
        jsub = _numbers(jdf, "start_time", job_table, header=jh, required=False)
        table = pl.DataFrame({"job": jdf.get_column("job_name"), "submit": jsub})
        table = table.unique("job", keep="first", maintain_order=True)
        joined = jobs.select("job").join(table, on="job", how="left", maintain_order="left")
        js = joined.get_column("submit").fill_null(np.nan).to_numpy().astype(np.float64)
        submit = np.where(np.isnan(js), submit, js)
    endv = jobs.get_column("end").cast(pl.Float64).fill_null(np.nan).to_numpy().astype(np.float64)
    startv = jobs.get_column("start").cast(pl.Float64).fill_null(np.nan).to_numpy().astype(np.float64)
    duration = endv - startv
    gpus = jobs.get_column("gpus").to_numpy().astype(np.float64)
    gtypes = np.array(jobs.get_column("gtype").to_list(), dtype=object)
    missing = jobs.get_column("missing").to_numpy().astype(bool)
    return _build(
        p,
        "alibaba-pai-2020",
        submit,
        duration,
        gpus,
        gtypes,
        [
            ("no_gpu", gpus <= 0),
            ("missing_time", missing | np.isnan(submit)),
            ("non_positive_duration", ~(duration > 0)),
        ],
        jobs.height,
    )


def _philly_time(value: Any, where: str, p: Path) -> float | None:
    if value is None or value == "None" or value == "":
        return None
    if not isinstance(value, str):
        raise TraceError(
            f"expected a time string, got {value!r}",
            file=p,
            field=where,
            hint="Philly times are written YYYY-MM-DD HH:MM:SS.",
        )
    shape = PHILLY_TIME.fullmatch(value.strip())
    when = None
    if shape:
        stamp, offset = shape.groups()
        # the right shape can still name no such date or time (2017-02-30, 25:00:00): then None
        with contextlib.suppress(ValueError):
            when = datetime.fromisoformat(stamp + (offset or ""))
    if when is None:
        raise TraceError(
            f"expected a time like 2017-10-07 01:12:09, got {value!r}",
            file=p,
            field=where,
            hint="Philly times are written YYYY-MM-DD HH:MM:SS (UTC unless an offset such as -07:00 follows).",
        )
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # UTC, not the local zone: see the note at PHILLY_TIME
    return when.timestamp()


def _read_philly(p: Path) -> Trace:
    """Philly cluster_job_log: submit = submitted_time; run time = the sum over attempts of
    end - start (attempts without both times are left out); GPUs = the GPUs of the last attempt."""
    first_line(p)
    from gpuplan.limits import load_json

    data = load_json(p, hint="the Philly trace is a JSON list of jobs (cluster_job_log).", error=TraceError)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise TraceError("expected a JSON list of jobs", file=p, hint="the Philly trace is cluster_job_log.")
    n = len(data)
    submit = np.full(n, np.nan)
    duration = np.zeros(n)
    gpus = np.zeros(n)
    reason = [""] * n
    for i, job in enumerate(data):
        if not isinstance(job, dict):
            raise TraceError("expected an object", file=p, field=f"[{i}]", hint="each job is a JSON object.")
        if "submitted_time" not in job:
            raise TraceError(
                "missing key 'submitted_time'",
                file=p,
                field=f"[{i}].submitted_time",
                hint="each Philly job has submitted_time and attempts.",
            )
        sub = _philly_time(job["submitted_time"], f"[{i}].submitted_time", p)
        attempts = job.get("attempts") or []
        if sub is None:
            reason[i] = "missing_time"
            continue
        submit[i] = sub
        if not attempts:
            reason[i] = "no_attempts"
            continue
        total = 0.0
        for k, att in enumerate(attempts):
            st = _philly_time(att.get("start_time"), f"[{i}].attempts[{k}].start_time", p)
            en = _philly_time(att.get("end_time"), f"[{i}].attempts[{k}].end_time", p)
            if st is not None and en is not None:
                if en < st:
                    raise TraceError(
                        "an attempt ends before it starts",
                        file=p,
                        field=f"[{i}].attempts[{k}].end_time",
                        hint="end_time must not be earlier than start_time.",
                    )
                total += en - st
            elif st is not None and en is None and k == len(attempts) - 1:
                reason[i] = "still_running"
        last = attempts[-1].get("detail") or []
        gpus[i] = float(sum(len(d.get("gpus") or []) for d in last))
        duration[i] = total
    why = np.array(reason, dtype=object)
    return _build(
        p,
        "philly",
        np.nan_to_num(submit),
        duration,
        gpus,
        None,
        [
            ("missing_time", why == "missing_time"),
            ("no_attempts", why == "no_attempts"),
            ("still_running", why == "still_running"),
            ("no_gpu", gpus <= 0),
            ("non_positive_duration", duration <= 0),
        ],
        n,
    )


def skipped_total(trace: Trace) -> int:
    return sum(Counter(trace.skipped).values())

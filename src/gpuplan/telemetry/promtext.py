"""dcgm-exporter `/metrics` scrapes saved to a file: a series of Prometheus text-format snapshots.

What people save is usually a loop such as

    while true; do date -u +%s; curl -s localhost:9400/metrics; sleep 15; done >> scrapes.txt

so each snapshot's time comes from, in order of preference:
- the sample's own timestamp (the exposition format's optional third field, milliseconds), else
- the last time line above it: a line that is only a time, optionally after `#` — Unix seconds or
  milliseconds (`date +%s`, `date +%s%3N`), ISO 8601 (`date -u -Is`, `2024-03-01T12:00:00Z`) or
  `date`'s default `Mon Mar  4 13:00:00 UTC 2024`.
A file with samples but no time at all is refused (a single snapshot says nothing about time).

The metrics, labels and rules are those of the Prometheus JSON reader (`promfile`): utilisation from
`DCGM_FI_DEV_GPU_UTIL` (percent), else `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (ratio); the node is the
`Hostname` label (else `hostname`, `instance`, else the file name), the GPU the `gpu` label (else
`UUID`). Every other metric is skipped; lines that are neither samples, comments nor times are
counted as malformed. Lines are classified with vectorised polars string operations, so a week of
15-second scrapes (millions of lines) reads in seconds.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from pathlib import Path

from gpuplan.errors import TelemetryError
from gpuplan.telemetry.promfile import EXTRA_METRICS, UTIL_METRICS, Series, add_series
from gpuplan.telemetry.samples import Collector

_SAMPLE = r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+(-?[0-9]+))?$"
_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')
_SNIFF = re.compile(rb"^(?:# (?:HELP|TYPE) [A-Za-z_:]|DCGM_FI_[A-Z0-9_]+[{ ])", re.MULTILINE)
UNIX_MS_FROM = 1e11
LATEST_MS = 1e14  # year 5138: a larger number on a time line is no time


def looks_like_scrape(head: bytes) -> bool:
    """Whether the start of a file looks like Prometheus text format (HELP/TYPE lines or DCGM samples)."""
    return _SNIFF.search(head) is not None


def marker_time(text: str) -> int | None:
    """The time (Unix ms) a time line gives, or None when the line is not one."""
    t = text.strip().lstrip("#").strip()
    if not t:
        return None
    try:
        v = float(t)
    except ValueError:
        v = math.nan
    if math.isfinite(v):
        ms = v if v >= UNIX_MS_FROM else v * 1000.0
        if not 0 <= ms < LATEST_MS:  # not a time (1e300 would overflow the Int64 column)
            return None
        return int(round(ms))
    try:
        dt = datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        try:
            dt = datetime.strptime(" ".join(t.split()), "%a %b %d %H:%M:%S %Z %Y")
        except ValueError:
            return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(round(dt.timestamp() * 1000))


def read_promtext(path: Path, collector: Collector) -> None:
    import polars as pl

    from gpuplan.telemetry.nvsmi import _lines

    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise TelemetryError(f"cannot read the file: {exc.strerror}", file=path) from None
    lines = _lines(text)
    lines = lines.with_columns(line=pl.int_range(1, lines.height + 1, dtype=pl.UInt32), s=pl.col("s").str.strip_chars())
    lines = lines.filter(pl.col("s") != "")
    lines = lines.with_columns(
        name=pl.col("s").str.extract(_SAMPLE, 1),
        labels=pl.col("s").str.extract(_SAMPLE, 2),
        value=pl.col("s").str.extract(_SAMPLE, 3),
        ts_text=pl.col("s").str.extract(_SAMPLE, 4),
    )
    lines = lines.with_columns(ts=pl.col("ts_text").cast(pl.Int64, strict=False))
    helptype = pl.col("s").str.contains(r"^#\s*(HELP|TYPE)\s")
    # Time lines: not samples, not HELP/TYPE (few: one per snapshot), parsed one by one.
    others = lines.filter(pl.col("name").is_null() & ~helptype)
    marks: list[tuple[int, int]] = []
    bad_lines: list[int] = []
    for s, ln in zip(others["s"].to_list(), others["line"].to_list(), strict=True):
        ms = marker_time(s)
        if ms is not None:
            marks.append((ln, ms))
        elif not s.startswith("#"):
            bad_lines.append(ln)  # neither a sample, a comment nor a time
    wanted = [*UTIL_METRICS, *EXTRA_METRICS]
    samples = lines.filter(pl.col("name").is_in(wanted))
    # a sample's own timestamp that is no Unix time in ms (past int64, negative, after year 5138): malformed
    untimely = pl.col("ts_text").is_not_null() & (
        pl.col("ts").is_null() | (pl.col("ts") < 0) | (pl.col("ts") >= int(LATEST_MS)))
    bad_ts = samples.filter(untimely)
    if bad_ts.height:
        bad_lines += bad_ts["line"].to_list()
        bad_lines.sort()
        samples = samples.filter(~untimely)
    marks_df = pl.DataFrame(
        {"line": [m[0] for m in marks], "mark": [m[1] for m in marks]},
        schema={"line": pl.UInt32, "mark": pl.Int64},
    )
    samples = (
        samples.join_asof(marks_df.sort("line"), on="line", strategy="backward")
        if marks
        else samples.with_columns(mark=pl.lit(None, dtype=pl.Int64))
    )
    samples = samples.with_columns(t=pl.coalesce("ts", "mark"))
    src_name = str(path)
    collector.rows += len(bad_lines)
    if bad_lines:
        collector.bad.add("malformed", len(bad_lines), [f"{src_name}:{ln}" for ln in bad_lines[:5]])
    if samples.height == 0:
        found = lines.filter(pl.col("name").is_not_null())["name"].unique(maintain_order=True).head(6).to_list()
        if found:  # a scrape, but of other metrics: say what was looked for
            raise TelemetryError(
                f"the scrape has no GPU utilisation metric: looked for {' or '.join(UTIL_METRICS)}; "
                f"it has {', '.join(found)}{', ...' if len(found) == 6 else ''}",
                file=path,
                hint="enable DCGM_FI_DEV_GPU_UTIL (or DCGM_FI_PROF_GR_ENGINE_ACTIVE) in dcgm-exporter's "
                "metrics CSV (-f / DCGM_EXPORTER_COLLECTORS) and scrape again",
            )
        return  # read_into stops: no usable row
    untimed = samples.filter(pl.col("t").is_null())
    if untimed.height == samples.height:
        raise TelemetryError(
            "the scrape has DCGM samples but no time: a single /metrics snapshot says nothing about time",
            file=path,
            line=int(untimed["line"][0]),
            hint="save a time line before each snapshot, e.g. "
            "while true; do date -u +%s; curl -s localhost:9400/metrics; sleep 15; done >> scrapes.txt",
        )
    if untimed.height:  # samples above the first time line
        collector.rows += untimed.height
        collector.bad.add(
            "malformed", untimed.height, [f"{src_name}:{ln}" for ln in untimed["line"].head(5).to_list()]
        )
    samples = samples.filter(pl.col("t").is_not_null())
    series: list[Series] = []
    grouped = samples.group_by("name", "labels", maintain_order=True).agg("t", "value", "line")
    for name, label_text, ts, values, where in grouped.iter_rows():
        labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL.findall(label_text or "")}
        if not (labels.get("Hostname") or labels.get("hostname") or labels.get("instance")):
            labels["Hostname"] = path.stem
        points = [(t / 1000.0, str(v)) for t, v in zip(ts, values, strict=True)]
        series.append(Series(str(name), labels, points, src_name, list(where)))
    add_series(series, collector, source=src_name)

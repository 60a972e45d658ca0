"""Units parsed once: durations, price periods, ops rates.

Durations are written `90m`, `12h`, `30d`, `2w`, `4y` (also `45s`) and become hours (float); a year is
365 days (8,760 h), the length depreciation schedules use (a server's `life: 4y`).
Prices are normalised to money per GPU-hour; a node price divides by the GPUs per node.
"""

from __future__ import annotations

import math
import re

HOURS_PER = {"s": 1 / 3600, "m": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0, "y": 8760.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdwy])\s*$")

PRICE_PERIODS = ("gpu-hour", "gpu-day", "gpu-month", "node-hour", "node-day", "node-month")
OPS_UNITS = ("node-month", "gpu-month", "month")


class UnitError(ValueError):
    """A value that does not parse; the message says what was expected."""


def parse_duration(value: object, *, allow_inf: bool = False) -> float:
    """`30d` -> 720.0 hours, `4y` -> 35,040 hours. Numbers are rejected: a bare 30 could be days or hours."""
    if isinstance(value, str):
        text = value.strip().lower()
        if allow_inf and text in ("inf", "infinite", "infinity"):
            return math.inf
        if text == "0":
            return 0.0
        m = _DURATION.match(text)
        if m:
            return float(m.group(1)) * HOURS_PER[m.group(2)]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return 0.0
    raise UnitError(
        f"expected a duration such as 90m, 12h, 30d or 2w{' (or inf)' if allow_inf else ''}, got {value!r}"
    )


def format_duration(hours: float) -> str:
    if math.isinf(hours):
        return "inf"
    if hours >= 48 and abs(hours / 24 - round(hours / 24)) < 1e-9:
        return f"{round(hours / 24)}d"
    if hours >= 1 and abs(hours - round(hours)) < 1e-9:
        return f"{round(hours)}h"
    return f"{hours * 60:g}m"


def per_gpu_hour(amount: float, per: str, *, gpus_per_node: int, days_per_month: float) -> float:
    """Money per GPU-hour for a price `amount` per `per` (one of PRICE_PERIODS)."""
    unit, _, period = per.partition("-")
    hours = {"hour": 1.0, "day": 24.0, "month": 24.0 * days_per_month}[period]
    gpus = gpus_per_node if unit == "node" else 1
    return amount / hours / gpus


_OPS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*h\s*/\s*(node-month|gpu-month|month)\s*$")


def parse_ops(value: object) -> tuple[float, str]:
    """`20h/node-month` -> (20.0, 'node-month')."""
    if isinstance(value, str):
        m = _OPS.match(value.strip().lower())
        if m:
            return float(m.group(1)), m.group(2)
    raise UnitError(
        f"expected engineer hours per period such as 20h/node-month, 2h/gpu-month or 8h/month, got {value!r}")


def parse_rate_price(text: str) -> tuple[float, str]:
    """`8/gpu-hour` -> (8.0, 'gpu-hour') for command-line flags."""
    amount, sep, per = text.partition("/")
    try:
        value = float(amount)
    except ValueError:
        value = math.nan
    if not sep or per not in PRICE_PERIODS or not math.isfinite(value) or value < 0:
        raise UnitError(f"expected a price such as 8/gpu-hour (per one of {', '.join(PRICE_PERIODS)}), got {text!r}")
    return value, per


def parse_time(text: str, now: float, field: str) -> float:
    """`7d` (that long before now), an ISO 8601 time (UTC if no zone), or unix seconds."""
    from datetime import UTC, datetime

    from gpuplan.errors import UsageError

    value = text.strip()
    if value.lower() == "now":
        return now
    try:
        return now - parse_duration(value) * 3600.0
    except UnitError:
        pass
    try:
        return float(value)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"expected a duration before now (7d), an ISO time or unix seconds, got {text!r}",
            field=field,
            hint="for example --since 7d --until now, or --since 2024-03-01T00:00:00Z",
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()

"""Working days and calendar days of a weekly schedule that starts on a Monday (no numpy: `compare` uses it)."""

from __future__ import annotations

import math


def active_days(duration_hours: float, days_per_week: int) -> float:
    """Working days in a schedule of `duration_hours` from a Monday: the first `days_per_week` of each week."""
    days = duration_hours / 24
    weeks = math.floor(days / 7 + 1e-12)
    return weeks * days_per_week + min(max(days - 7 * weeks, 0.0), float(days_per_week))


def calendar_days(working_days: float, days_per_week: int) -> float:
    """Calendar days from a Monday until `working_days` are done (the inverse of `active_days`).

    Work that ends on the last working day of a week ends there, not after the days off that follow.
    """
    if working_days <= 0:
        return 0.0
    weeks = math.floor(working_days / days_per_week + 1e-12)
    rest = max(working_days - weeks * days_per_week, 0.0)
    if rest <= 1e-12:
        return 7 * (weeks - 1) + days_per_week
    return 7 * weeks + rest

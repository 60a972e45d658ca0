"""Reproducible output: the build time from SOURCE_DATE_EPOCH, read and checked in one place.

https://reproducible-builds.org/specs/source-date-epoch/ : the variable holds whole seconds since
1970-01-01 UTC, written as `date +%s` writes them. Every file gpuplan stamps with a time (plan JSON,
exports) takes it from here, so a bad value is one clear usage error rather than a traceback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from gpuplan.errors import UsageError

VARIABLE = "SOURCE_DATE_EPOCH"
STAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

# `date +%s` output: an optional minus and decimal digits. int() alone would also take "+5", "1_000"
# and non-ASCII digits, which no other tool reading the variable accepts.
_WHOLE_SECONDS = re.compile(r"-?[0-9]+")


def build_time(env: Mapping[str, str] | None = None) -> datetime | None:
    """SOURCE_DATE_EPOCH as an aware UTC time; None when unset or empty (then callers use their own).

    Raises UsageError (exit 2) naming the variable when the value is not whole seconds in range.
    """
    environ = os.environ if env is None else env
    raw = environ.get(VARIABLE)
    if raw is None or not raw.strip():
        return None  # empty counts as unset, as in other tools honouring the variable
    text = raw.strip()
    hint = f"Set it to whole seconds since 1970-01-01 UTC, e.g. {VARIABLE}=$(date +%s), or unset it."
    if not _WHOLE_SECONDS.fullmatch(text):
        raise UsageError(f"expected whole seconds since the epoch, got {raw!r}", field=VARIABLE, hint=hint)
    try:
        return datetime.fromtimestamp(int(text), UTC)
    except (OverflowError, OSError, ValueError):  # beyond what datetime (or the platform) can hold
        raise UsageError(
            f"expected whole seconds since the epoch within years 1-9999, got {raw!r}", field=VARIABLE, hint=hint
        ) from None


def stamp(when: datetime) -> str:
    """The one text form of a time in gpuplan's outputs: UTC, whole seconds, trailing Z."""
    return when.astimezone(UTC).strftime(STAMP_FORMAT)


def generated_at(env: Mapping[str, str] | None = None) -> str:
    """The stamp for a file made now: SOURCE_DATE_EPOCH when set, else the current time."""
    return stamp(build_time(env) or datetime.now(UTC))

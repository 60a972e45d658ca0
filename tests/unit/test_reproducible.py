"""SOURCE_DATE_EPOCH is read once, in gpuplan.reproducible; a bad value is a usage error (exit 2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from gpuplan import reproducible
from gpuplan.errors import UsageError
from gpuplan.export.common import ExportOptions, timestamp
from gpuplan.export.model import Plan


def test_unset_or_empty_is_none() -> None:
    assert reproducible.build_time({}) is None
    assert reproducible.build_time({"SOURCE_DATE_EPOCH": ""}) is None
    assert reproducible.build_time({"SOURCE_DATE_EPOCH": "  "}) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", datetime(1970, 1, 1, tzinfo=UTC)),
        ("1764374400", datetime(2025, 11, 29, tzinfo=UTC)),
        (" 1764374400\n", datetime(2025, 11, 29, tzinfo=UTC)),  # a trailing newline from $(cat file)
        ("-86400", datetime(1969, 12, 31, tzinfo=UTC)),  # `date +%s` prints negatives before 1970
    ],
)
def test_whole_seconds(value: str, expected: datetime) -> None:
    when = reproducible.build_time({"SOURCE_DATE_EPOCH": value})
    assert when == expected
    assert when is not None and when.tzinfo is not None


@pytest.mark.parametrize("value", ["abc", "1.5", "1e9", "+5", "1_000", "١٢٣", "0x10", "99999999999999999999"])
def test_bad_value_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError) as info:
        reproducible.build_time({"SOURCE_DATE_EPOCH": value})
    err = info.value
    assert err.exit_code == 2
    assert err.field == "SOURCE_DATE_EPOCH"
    assert "whole seconds" in err.message and repr(value) in err.message
    assert err.hint and "date +%s" in err.hint
    assert "\n" not in str(err)


def test_reads_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    assert reproducible.generated_at() == "1970-01-02T00:00:00Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "abc")
    with pytest.raises(UsageError):
        reproducible.generated_at()
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert reproducible.generated_at().endswith("Z")


def test_stamp_is_utc() -> None:
    eastern = timezone(timedelta(hours=-5))
    assert reproducible.stamp(datetime(2026, 3, 8, 3, 0, tzinfo=eastern)) == "2026-03-08T08:00:00Z"


def test_export_timestamp_uses_it() -> None:
    plan = Plan(
        source="p.json", scenario=None, generated_at="2026-01-01T00:00:00Z", currency="USD", queueing="fifo", pools=()
    )
    options = ExportOptions()
    assert timestamp(plan, options, {"SOURCE_DATE_EPOCH": "0"}) == "1970-01-01T00:00:00Z"
    assert timestamp(plan, options, {}) == "2026-01-01T00:00:00Z"
    assert timestamp(plan, ExportOptions(generated_at="x"), {"SOURCE_DATE_EPOCH": "abc"}) == "x"
    with pytest.raises(UsageError, match="SOURCE_DATE_EPOCH"):
        timestamp(plan, options, {"SOURCE_DATE_EPOCH": "abc"})

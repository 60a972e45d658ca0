import math

import pytest

from gpuplan.inputs.units import UnitError, format_duration, parse_duration, parse_ops, parse_rate_price, per_gpu_hour


@pytest.mark.parametrize(("text", "hours"), [("90m", 1.5), ("12h", 12), ("30d", 720), ("2w", 336), ("45s", 0.0125),
                                             ("0", 0), ("1.5d", 36),
                                             ("4y", 4 * 365 * 24), ("0.5y", 4380)])
def test_durations(text: str, hours: float) -> None:
    assert parse_duration(text) == pytest.approx(hours)


@pytest.mark.parametrize("bad", ["30", 30, "3 days", "-1d", "d", "", None, True])
def test_bad_durations(bad: object) -> None:
    with pytest.raises(UnitError, match="expected a duration"):
        parse_duration(bad)


def test_inf_only_when_allowed() -> None:
    assert math.isinf(parse_duration("inf", allow_inf=True))
    with pytest.raises(UnitError):
        parse_duration("inf")


def test_format_duration_round_trips() -> None:
    for text in ("30d", "12h", "90m"):
        assert parse_duration(format_duration(parse_duration(text))) == parse_duration(text)


def test_price_normalisation() -> None:
    assert per_gpu_hour(220, "gpu-day", gpus_per_node=8, days_per_month=30) == pytest.approx(220 / 24)
    assert per_gpu_hour(8314, "node-month", gpus_per_node=8, days_per_month=30) == pytest.approx(8314 / 720 / 8)
    assert per_gpu_hour(8314, "node-month", gpus_per_node=8, days_per_month=30.4) == pytest.approx(8314 / 729.6 / 8)
    assert per_gpu_hour(10, "gpu-hour", gpus_per_node=8, days_per_month=30) == 10


def test_ops_and_rate() -> None:
    assert parse_ops("20h/node-month") == (20.0, "node-month")
    assert parse_ops(" 2 h / gpu-month ") == (2.0, "gpu-month")
    with pytest.raises(UnitError):
        parse_ops("20/node-month")
    assert parse_rate_price("8/gpu-hour") == (8.0, "gpu-hour")
    for bad in ("8", "x/gpu-hour", "8/gpu-week", "-1/gpu-hour"):
        with pytest.raises(UnitError):
            parse_rate_price(bad)


def test_parse_time_reads_durations_iso_times_and_unix_seconds() -> None:
    from gpuplan.errors import UsageError
    from gpuplan.inputs.units import parse_time

    now = 1_700_000_000.0
    assert parse_time("now", now, "--until") == now
    assert parse_time("7d", now, "--since") == now - 7 * 86400  # a week before now
    assert parse_time("1700000000", now, "--since") == 1_700_000_000.0
    # 2024-03-01T00:00:00Z is 19783 days after the epoch (54 years with 13 leap days, and Jan+Feb 2024)
    assert parse_time("2024-03-01T00:00:00", now, "--since") == 19783 * 86400
    with pytest.raises(UsageError) as err:
        parse_time("yesterday", now, "--since")
    assert err.value.field == "--since"

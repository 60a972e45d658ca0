"""The demand CSV readers agree: the byte-level one (`_rows_bytes`), the text one (`_rows_split`) and
the row-by-row csv module one (`_rows_careful`) give the same rows, bit for bit, on every file the
faster ones accept; a file the byte-level reader declines is read by the others as before."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from gpuplan.errors import GpuplanError
from gpuplan.inputs import demand as dm

GPUS = ["h100-sxm", "ascend-910b", "l4", "a100-80g-sxm4-xy"]  # the last: 16 bytes, the longest name read as bytes


def _same(a: dm._Rows, b: dm._Rows) -> None:
    assert a[0].dtype == b[0].dtype == np.float64 and a[3].dtype == b[3].dtype == np.float64
    assert a[0].tobytes() == b[0].tobytes()  # bit for bit (0.0 and -0.0 differ too)
    assert a[1].tolist() == b[1].tolist() and a[2] == b[2]
    assert a[3].tobytes() == b[3].tobytes()


def _file(rows: list[tuple[str, str, str]], header: str = "time,gpu,gpus", nl: str = "\n") -> bytes:
    return (header + nl + "".join(f"{a},{b},{c}{nl}" for a, b, c in rows)).encode()


def _check_all_agree(tmp_path: Path, raw: bytes, *, bytes_path: bool = True) -> None:
    fast = dm._rows_bytes(raw)
    assert (fast is not None) == bytes_path
    split = dm._rows_split(raw)
    p = tmp_path / "d.csv"
    p.write_bytes(raw)
    careful = dm._rows_careful(p)
    if fast is not None:
        assert split is not None
        _same(fast, split)
        _same(fast, careful)


def _numbers(rng: np.random.Generator, n: int) -> list[str]:
    """The forms `audit --demand-out` writes (`{:g}`) and others float() reads the same way."""
    v = rng.random(n) * 10.0 ** rng.integers(-7, 7, n)
    forms = [f"{x:g}" for x in v[: n // 4]] + [repr(float(x)) for x in np.round(v[n // 4: n // 2], 4)]
    forms += [f"{x:.6e}" for x in v[n // 2: 5 * n // 8]] + [str(int(x)) for x in v[5 * n // 8: 3 * n // 4]]
    forms += [f"{x:.3f}" for x in v[3 * n // 4:]]
    forms += ["0", "007", "5.", ".5", "0.0", "1E3", "1.5e+02", "2e-0", "9007199254740992", "0.1", "4.35", "1e22",
              "1e-22", "3.14159265358979", "1.e3"]
    return forms


@pytest.mark.parametrize("order", ["by_gpu", "by_hour"])
def test_a_year_like_file_reads_the_same_three_ways(tmp_path: Path, order: str) -> None:
    rng = np.random.default_rng(3)
    t0 = datetime(2024, 2, 26, tzinfo=UTC)  # across a leap day and the turn of months
    hours = 24 * 9
    nums = iter(_numbers(rng, hours * len(GPUS)) * 2)
    rows = [((t0 + timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%SZ"), g, next(nums))
            for g in GPUS for h in range(hours)]
    if order == "by_hour":  # as `audit --demand-out` writes it
        rows.sort(key=lambda r: (r[0], r[1]))
    _check_all_agree(tmp_path, _file(rows))
    # without the Z, with CRLF line ends and a byte-order mark, with the columns in another order
    _check_all_agree(tmp_path, _file([(a[:-1], b, c) for a, b, c in rows]))
    _check_all_agree(tmp_path, b"\xef\xbb\xbf" + _file(rows, nl="\r\n"))
    _check_all_agree(tmp_path, ("gpus,gpu,time,note\n" + "".join(f"{c},{b},{a},x\n" for a, b, c in rows)).encode())


def test_every_number_form_is_float_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    nums = _numbers(rng, 4000)
    rows = [(f"2026-03-{1 + i % 28:02d}T{i % 24:02d}:00:00Z", "l4", x) for i, x in enumerate(nums)]
    fast = dm._rows_bytes(_file(rows))
    assert fast is not None
    assert fast[3].tolist() == [float(x) for x in nums]


def test_dates_are_numpy_datetimes(tmp_path: Path) -> None:
    days = np.arange(np.datetime64("1900-01-01"), np.datetime64("2200-01-01"), 7)
    stamps = [f"{d}T{(i * 7) % 24:02d}:{(i * 13) % 60:02d}:{(i * 17) % 60:02d}" for i, d in enumerate(days)]
    stamps += ["2000-02-29T00:00:00", "2100-02-28T23:59:59", "1970-01-01T00:00:00", "1969-12-31T23:00:00"]
    fast = dm._rows_bytes(_file([(s + "Z", "l4", "1") for s in stamps]))
    assert fast is not None
    want = np.array(stamps, dtype="datetime64[us]").astype(np.int64) / 1e6
    assert fast[0].tobytes() == want.tobytes()


@pytest.mark.parametrize("bad", [
    ("2025-02-29T00:00:00Z", "l4", "1"),  # no such day: the careful path names the line
    ("2025-01-01T24:00:00Z", "l4", "1"),
    ("2025-13-01T00:00:00Z", "l4", "1"),
    ("2025-01-01T00:00:60Z", "l4", "1"),
    ("2025-01-01T00:00:00Z", "l4", "-1"),
    ("2025-01-01T00:00:00Z", "l4", "lots"),
    ("2025-01-01T00:00:00Z", "l4", "1.2.3"),
    ("2025-01-01T00:00:00Z", "l4", "1e"),
    ("2025-01-01T00:00:00Z", "l4", "."),
    ("2025-01-01T00:00:00Z", "l4", "nan"),
])
def test_bad_values_still_name_their_line(tmp_path: Path, bad: tuple[str, str, str]) -> None:
    raw = _file([("2025-01-01T00:00:00Z", "l4", "2"), bad])
    assert dm._rows_bytes(raw) is None
    p = tmp_path / "bad.csv"
    p.write_bytes(raw)
    with pytest.raises(GpuplanError) as err:
        dm.from_csv(p)
    assert err.value.line == 3


@pytest.mark.parametrize("rows", [
    [("2025-01-01T00:00:00Z", " l4 ", "1")],  # a name to strip
    [("2025-01-01T00:00:00Z", "a-name-of-17-byte", "1")],
    [("2025-01-01T00:00:00Z", "显卡", "1")],  # not ASCII
    [("2025-01-01 00:00:00", "l4", "1")],  # a space for the T
    [("2025-01-01T00:00Z", "l4", "1")],  # no seconds
    [("2025-01-01T00:00:00+00:00", "l4", "1")],  # a zone offset
    [("1735689600", "l4", "1")],  # epoch seconds
    [("2025-01-01T00:00:00Z", "l4", " 1")],  # a space before the number
    [("2025-01-01T00:00:00Z", "l4", "+1")],
    [("2025-01-01T00:00:00Z", "l4", "1_000")],
    [("2025-01-01T00:00:00Z", "l4", "1e-23")],  # two roundings: the text path decides
    [("2025-01-01T00:00:00Z", "l4", "0.0000000000000000001")],
    [("2025-01-01T00:00:00Z", "l4", "9007199254740993.0")],  # above 2**53
    [("2025-01-01T00:00:00Z", "l4", "0.30000000000000004")],
    [("2025-01-01T00:00:00Z", "l4", "inf")],
    [("2025-01-01T00:00:00.5Z", "l4", "1")],
    [("2200-01-01T00:00:00Z", "l4", "1")],  # years past 2199 and before 1900
    [("1899-12-31T23:00:00Z", "l4", "1")],
])
def test_other_forms_are_read_as_text_as_before(tmp_path: Path, rows: list[tuple[str, str, str]]) -> None:
    raw = _file([*rows, ("2025-01-01T01:00:00Z", "l4", "2")])
    assert dm._rows_bytes(raw) is None
    p = tmp_path / "d.csv"
    p.write_bytes(raw)
    fast, split = dm._rows_fast(raw), dm._rows_split(raw)
    assert (fast is None) == (split is None)
    if fast is not None and split is not None:
        _same(fast, split)
        _same(fast, dm._rows_careful(p))


def test_interleaved_names_beyond_the_limit_are_read_as_text(tmp_path: Path) -> None:
    names = [f"gpu-{i}" for i in range(70)]
    rows = [(f"2025-01-{1 + h // 24:02d}T{h % 24:02d}:00:00Z", g, f"{h % 5}") for h in range(72) for g in names]
    raw = _file(rows)
    assert dm._rows_bytes(raw) is None  # more than 64 names, hour by hour
    grouped = _file(sorted(rows, key=lambda r: r[1]))
    _check_all_agree(tmp_path, grouped)  # grouped by name: one name per run, any number of names
    assert dm._rows_split(raw) is not None

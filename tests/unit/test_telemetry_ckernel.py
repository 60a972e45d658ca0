"""The audit's C loops (`_ctelemetry`, built by `pip install`) equal their plain references, both run
for real: parse_block against the careful (polars) reader of nvsmi.py on generated lines (ordinary,
odd and broken: every line C accepts, the careful reader reads to the same GPU, time and utilisation,
and ordinary lines are accepted), accumulate against `_loops.accumulate_reference` bit for bit on
generated samples (clock jumps, duplicates, gaps, times before 1970, state carried across slices),
and the whole audit of the truth logs with and without the extension. Skipped where the extension
was not built (no C compiler or Python headers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telemetry_truth import write_logs

from gpuplan.contracts.audit_document import to_json
from gpuplan.telemetry import Collector, _loops, analyze, demand_curve, read_into
from gpuplan.telemetry.nvsmi import _compiled_layout, _parse_block, parse_header
from gpuplan.telemetry.stream import BUSY_CUT, IDLE_CUT, MIN_GAP_S, NEAR_IDLE_CUT, _new_si

c = pytest.importorskip(
    "gpuplan.telemetry._ctelemetry", reason="the C extension was not built (needs a C compiler and Python headers)"
)


# ---- parse_block

HEADER = "timestamp, index, utilization.gpu [%], memory.used [MiB]"
TIME_VALUES = [
    "2024/01/01 00:00:00.000",
    "2024/01/01 00:59:59.999",  # the same date and hour, other minutes: read from the cached hour
    "2024/01/01 00:60:00.000",
    "2024/01/01 00:00:60.000",
    "2024/01/01 00:00:0x.000",
    "2024/01/01 00:00:00:000",
    "2024/01/01 00:00.00.000",
    "2024/01/01 01:00:00.000",
    "2024-01-01 00:00:00.000",  # the same digits, the other format
    "2024/02/29 23:59:59.999",
    "2023/02/29 00:00:00.000",
    "1969/12/31 23:59:59.999",
    "0000/03/01 00:00:00.000",
    "2024-03-01T12:00:00.500",
    "2024-03-01 12:00:00.500",
    " 2024/01/01 00:00:00.000 ",
    "2024/01/01 24:00:00.000",
    "2024/13/01 00:00:00.000",
    "2024/01/01 00:00:00",
    "2024/01/01T00:00:00.000",
    "",
]
TIMES = st.sampled_from(TIME_VALUES)
INDEXES = st.sampled_from(["0", "1", " 12", "01", "x", "", "123456789", "1234567890", "-1", "3 "])
UTILS = st.sampled_from(
    [
        "7",
        "7 %",
        " 99 %",
        "100 %",
        "100.0 %",
        "0",
        "12.5 %",
        "12.123456 %",
        "12.1234567 %",
        "101 %",
        "-1 %",
        "[N/A]",
        "07 %",
        "1e1 %",
        "",
        "5%%",
        "5.%",
        "1234567890 %",
    ]
)
NEWLINES = ("\n", "\r\n")
MEMS = st.sampled_from(["5 MiB", "5 GiB", "5", " 6 MiB", "MiB", "iB"])


def _header():  # type: ignore[no-untyped-def]
    h = parse_header(HEADER, Path("n1.csv"), 1)
    assert h is not None
    return h


def _layout() -> tuple:
    layout = _compiled_layout(_header())
    assert layout is not None
    return layout


def _c_rows(data: bytes, layout: tuple) -> dict[int, tuple[str, int, float]]:
    """line number -> (GPU, t ms, u) of every line the C parser accepts, carrying on after each refused
    line as nvsmi does."""
    buf = np.frombuffer(data, dtype=np.uint8)
    cap = data.count(b"\n") + 2
    t, g, u, ls = (np.full(cap, 7, dtype=np.int64), np.full(cap, 7, dtype=np.int64),
                   np.full(cap, 7, dtype=np.float32), np.full(cap, 7, dtype=np.int64))
    pos, out = 0, {}
    while pos < len(data):
        r = c.parse_block(buf, pos, *layout, t, g, u, ls)
        ok = r if r >= 0 else -1 - r
        for row in range(ok):
            line = data.count(b"\n", 0, int(ls[row])) + 1
            out[line] = (str(int(g[row])), int(t[row]), float(u[row]))
        if r >= 0:
            break
        end = data.find(b"\n", int(ls[ok]))
        pos = len(data) if end < 0 else end + 1
    return out


def _careful_rows(data: bytes) -> dict[int, tuple[str, int, float]]:
    """line number -> (GPU, t ms, u) of every line the careful reader (the reference) keeps."""
    col = Collector(stream=False)
    src = col.add_source("n1.csv", lambda loc: f"n1.csv:{loc}")
    _parse_block(data.decode("utf-8", errors="replace"), 1, _header(), 0, Path("n1.csv"), "n1", src, col)
    out = {}
    for part in col.parts:
        for k, t, u, loc in zip(part["key"].to_list(), part["t"].to_list(), part["u"].to_list(),
                                part["loc"].to_list(), strict=True):
            out[int(loc)] = (col.registry.keys[k][1], int(t), float(u))
    return out


def _parse_both(data: bytes, layout: tuple) -> None:
    got = _c_rows(data, layout)
    want = _careful_rows(data)
    assert {line: want.get(line) for line in got} == got  # C accepts only what the reference reads alike
    ordinary = [n + 1 for n, line in enumerate(data.split(b"\n")) if ORDINARY.fullmatch(line)]
    assert set(ordinary) <= set(got)  # and it does accept the ordinary lines


ORDINARY = re.compile(rb"2024/01/01 00:[0-5][0-9]:[0-5][0-9]\.[0-9]{3}, (3|12), (50 %|7), 5 MiB")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(  # mostly ordinary fields, so that odd times meet a cached hour
            TIMES,
            st.one_of(st.just("3"), st.just("12"), INDEXES),
            st.one_of(st.just("50 %"), st.just("7"), UTILS),
            st.one_of(st.just("5 MiB"), MEMS),
            st.one_of(st.just("\n"), st.sampled_from(["\n", "\r\n", "\r", '"', "\x00"])),
        ),
        min_size=1,
        max_size=30,
    ),
    st.booleans(),
)
def test_parse_block_c_equals_the_careful_reader(rows: list, last_newline: bool) -> None:
    text = "".join(f"{t}, {i}, {u}, {m}{end if end in NEWLINES else end + chr(10)}" for t, i, u, m, end in rows)
    if not last_newline:
        text = text.rstrip("\r\n")
    layout = _layout()
    _parse_both(text.encode(), layout)


def test_parse_block_c_equals_the_careful_reader_after_a_cached_hour() -> None:
    for prev in TIME_VALUES:
        for cur in TIME_VALUES:
            text = f"{prev}, 1, 50 %, 5 MiB\n{cur}, 2, 60 %, 6 MiB\n{cur}, 3, 70 %, 7 MiB\n"
            _parse_both(text.encode(), _layout())


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_parse_block_c_equals_the_careful_reader_on_any_bytes(data: bytes) -> None:
    layout = _layout()
    _parse_both(b"2024/01/01 00:00:00.000, 1, 50 %, 3 MiB\n" + data, layout)


# ---- accumulate

STEPS = st.one_of(
    st.just(1000),
    st.integers(-5000, 0),  # clock jumps and duplicates
    st.integers(1, 40_000),
    st.integers(59_000, 61_000),
    st.integers(100_000, 9_000_000),  # gaps, hours crossed
)


def _fold(fn, key, t, u, cuts, n_keys):  # type: ignore[no-untyped-def]
    si = _new_si(n_keys)
    sf = np.zeros((n_keys, _loops.N_SF))
    out = []
    pos, i = 0, 0
    while pos < len(key):
        step = cuts[i % len(cuts)]
        k, tt, uu = key[pos : pos + step], t[pos : pos + step], u[pos : pos + step]
        n = len(k)
        m = n + 1
        o = [
            np.zeros((m, 3), np.int64),
            np.zeros((m, 3), np.int64),
            np.zeros(m),
            np.zeros((m, 2), np.int64),
            np.zeros((m, 3)),
            np.zeros((2 * m, 4), np.int64),
            np.zeros(2 * m),
        ]
        bad = np.zeros(n, np.int8)
        counts = fn(k, tt, uu, si, sf, bad, *o, int(MIN_GAP_S * 1000), IDLE_CUT, BUSY_CUT, NEAR_IDLE_CUT)
        out.append((tuple(int(x) for x in counts), bad.tobytes(), [a.tobytes() for a in o]))
        pos += step
        i += 1
    return out, si.tobytes(), sf.tobytes()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), STEPS, st.integers(0, 100)), min_size=1, max_size=300),
    st.lists(st.integers(1, 60), min_size=1, max_size=5),
    st.sampled_from([1_700_000_000_000, -3_600_000 * 5 - 1234]),  # times before 1970: floor division
)
def test_accumulate_c_equals_the_reference(samples: list, cuts: list[int], start: int) -> None:
    clock = [start] * 4
    key, t, u = [], [], []
    for k, step, pct in samples:
        clock[k] += step
        key.append(k)
        t.append(clock[k])
        u.append(pct)
    karr = np.array(key, dtype=np.int64)
    tarr = np.array(t, dtype=np.int64)
    uarr = (np.array(u) / 100.0).astype(np.float32)
    assert _fold(c.accumulate, karr, tarr, uarr, cuts, 4) == _fold(
        _loops.accumulate_reference, karr, tarr, uarr, cuts, 4
    )


# ---- the whole audit


def _audit(files: list[Path]) -> str:
    col = Collector()
    read_into(files, col)
    s = col.finish()
    demand = [r.__dict__ for r in demand_curve(s, "util")] + [r.__dict__ for r in demand_curve(s, "busy")]
    return json.dumps([to_json(analyze(s)), demand], sort_keys=True)


def test_audit_of_truth_logs_same_without_the_extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = write_logs(tmp_path)
    files = [f for f in logs.files if f.suffix == ".csv"]
    assert files
    monkeypatch.setattr(_loops, "_module", [])
    with_c = _audit(files)
    assert _loops.implementation() == "c"
    monkeypatch.setattr(_loops, "_module", [None])  # as where `pip install` could not build it
    assert _loops.implementation() == "reference"
    assert _audit(files) == with_c


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 20), min_size=1, max_size=50),
    st.integers(0, 9000),
    st.lists(st.sampled_from([0, 7, 21, 99, 65_535, 65_536, 999_999_999]), max_size=3),
)
def test_unique_first_equals_numpy_unique(head: list[int], filler: int, late: list[int]) -> None:
    from gpuplan.telemetry.nvsmi import _unique_first

    g = np.array(head + [head[0]] * filler + late, dtype=np.int64)  # GPUs first seen after the head too
    want = np.unique(g, return_index=True)
    got = _unique_first(g)
    assert got[0].tolist() == want[0].tolist()
    assert got[1].tolist() == want[1].tolist()

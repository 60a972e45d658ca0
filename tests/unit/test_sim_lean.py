"""The lean replay (gpuplan.sim.lean) against the numpy path: the same document, or None (step
aside). Its C helpers mirror numpy expressions bit for bit.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan import api
from gpuplan.cli import main
from gpuplan.sim import lean
from gpuplan.sim.traces import read_trace

k = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension is not built (no compiler)")

OPENB = Path(__file__).resolve().parents[3] / "shared" / "traces" / "alibaba-gpu-v2023" / "openb_pod_list_default.csv"


def full_json(*args: object, **kw: object) -> str:
    return json.dumps(api.simulate(*args, **kw).to_json(), ensure_ascii=False, indent=2) + "\n"  # type: ignore[arg-type]


def lean_json(*args: object, **kw: object) -> str:
    got = lean.simulate_text(*args, **kw)  # type: ignore[arg-type]
    assert got is not None, "the lean path stepped aside"
    return json.dumps(got[0], ensure_ascii=False, indent=2) + "\n"


# ---------------------------------------------------------------- the C helpers, bit for bit


def numpy_summary(s: np.ndarray, d: np.ndarray, g: np.ndarray, st_: np.ndarray, b: np.ndarray, sl: float) -> tuple:
    """replay.summarize's expressions."""
    gh = g * d / 3600.0
    w = (st_ - s) / 3600.0
    p50, p95 = (float(x) for x in np.percentile(w, [50, 95]))
    ends = st_ + np.where(b, d * sl, d)
    return (int(b.sum()), float(np.sum(np.where(b, gh * sl, gh))), float(gh[~b].sum()), float(gh[b].sum() * sl),
            float(w.mean()), p50, p95, float(w.max()), float((ends.max() - s.min()) / 3600.0),
            float((np.max(s + d) - np.min(s)) / 3600.0))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 127, 128, 129, 1000, 4097, 70001])
def test_summarize_is_numpys_to_the_bit(n: int) -> None:
    rng = np.random.default_rng(n)
    s = np.sort(rng.uniform(-5, 1e6, n))
    d = rng.exponential(18000, n) + 1
    g = rng.choice([0.1, 0.25, 1, 2, 8], n)
    b = rng.random(n) < 0.3
    start = s + np.where(rng.random(n) < 0.6, 0.0, rng.exponential(5000, n))
    for sl in (1.0, 1.2345):
        assert k.summarize([s, d, g, start, b], sl) == numpy_summary(s, d, g, start, b, sl)


finite = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(finite, st.floats(1e-3, 1e7), st.sampled_from([0.05, 0.5, 1.0, 3.0]), finite,
                          st.booleans()), min_size=1, max_size=300))
def test_summarize_property(rows: list[tuple[float, float, float, float, bool]]) -> None:
    s, d, g, wait, b = (np.array(c) for c in zip(*rows, strict=True))
    s = np.sort(s)
    start = s + wait
    b = b.astype(bool)
    assert k.summarize([s, d, g, start, b], 1.0) == numpy_summary(s, d, g, start, b, 1.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.floats(0, 1), st.sampled_from([0.0004, 0.0005, 0.0015, 0.1, 2.5])),
                min_size=1, max_size=400))
def test_prepare_sorts_stably_and_counts_thousandths(rows: list[tuple[int, float, float]]) -> None:
    s, d, g = (np.array(c, dtype=np.float64) for c in zip(*rows, strict=True))
    order = np.argsort(s, kind="stable")
    cols = [bytearray(s.tobytes()), bytearray(d.tobytes()), bytearray(g.tobytes())]
    units = k.prepare(cols)
    for got, want in zip(cols, (s[order], d[order], g[order]), strict=True):
        assert np.frombuffer(got).tolist() == want.tolist()
    assert np.frombuffer(units, dtype=np.int64).tolist() == np.maximum(np.rint(g[order] * 1000), 1).astype(
        np.int64).tolist()


# ---------------------------------------------------------------- whole documents


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


OPENB_ROWS = """\
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
a,1000,100,1,500,V100,LS,Succeeded,100,4000,110
b,1000,100,0,0,,LS,Succeeded,120,900,130
c,1000,100,2,1000,T4,LS,Succeeded,90,8000,200
d,1000,100,1,,,LS,Failed,150,,
e,1000,100,8,1000,A10,LS,Running,160,,170
f,1000,100,4,1000,,LS,Succeeded,50,60,60
g,1000,100,1,250,P100,LS,Succeeded,170,9000,175
h,1000,100,3,1000,,LS,Succeeded,100,5000,140
"""


def test_openb_rows_with_every_skip_reason(tmp_path: Path) -> None:
    p = write(tmp_path / "openb.csv", OPENB_ROWS)
    tr = read_trace(p, gpu_types=False)
    assert tr.skipped == {"no_gpu": 1, "never_ran": 1, "missing_time": 1, "non_positive_duration": 1}
    for r in ("0", "1", "2,3", "0:6:1"):
        for wait in ("0", "30m", "inf"):
            for queueing in ("strict-fifo", "best-effort-fifo"):
                assert lean_json(p, r, wait, queueing=queueing) == full_json(p, r, wait=wait, queueing=queueing)


def test_generic_and_tiresias_unsorted(tmp_path: Path) -> None:
    g = write(tmp_path / "g.csv", "submit_time,duration,gpus\n50,100,2\n10,3600,1\n10,0,4\n30,7200,0.5\n5,10,0\n")
    t = write(tmp_path / "t.csv", "job_id,num_gpu,submit_time,duration\n1,2,50,100\n2,1,10,3600\n3,4,10,20\n")
    for p in (g, t):
        for r in ("0,1,2,4", "2"):
            assert lean_json(p, r, "1h", max_wait=["p95=1h"]) == full_json(p, r, wait="1h", max_wait="p95=1h")
    assert lean_json(g, "0:8:4", packing="node", gpus_per_node=4) == full_json(g, "0:8:4", packing="node",
                                                                                gpus_per_node=4)


@pytest.mark.skipif(not OPENB.is_file(), reason="needs ../shared/traces (the openb pod list)")
@pytest.mark.parametrize(("reserved", "wait", "queueing", "packing"), [
    ("0:64:8", "1h", "strict-fifo", "gpu"),
    ("8,24,100", "0", "best-effort-fifo", "gpu"),
    ("16:48:16", "inf", "strict-fifo", "node"),
    ("8", "2h", "best-effort-fifo", "node"),
])
def test_the_shared_trace(reserved: str, wait: str, queueing: str, packing: str) -> None:
    assert lean_json(OPENB, reserved, wait, queueing=queueing, packing=packing) == full_json(
        OPENB, reserved, wait=wait, queueing=queueing, packing=packing)


@pytest.mark.parametrize("text", [
    "submit_time,duration,gpus\n1,-5,1\n",  # negative duration: the reader's error
    "submit_time,duration,gpus\n1,,1\n",  # empty value
    "submit_time,duration,gpus\n1,5,0\n",  # no usable job
    'submit_time,duration,gpus\n"1",5,1\n',  # quoted: not plain
    "submit_time,duration,gpu\n1,5,A100\n",  # a missing column (read as generic)
    "submit_time,gpus,duration,gpus\n1,1,5,1\n",  # a repeated column
])
def test_steps_aside_for_what_only_the_full_path_can_say(tmp_path: Path, text: str) -> None:
    assert lean.simulate_text(write(tmp_path / "x.csv", text), "8", trace_format="generic") is None


def test_steps_aside_for_formats_it_does_not_read(tmp_path: Path) -> None:
    helios = write(tmp_path / "h.csv", "job_id,gpu_num,submit_time,start_time,end_time,duration\n"
                                       "1,1,2020-01-01 00:00:00,2020-01-01 00:00:00,2020-01-01 01:00:00,3600\n")
    assert lean.simulate_text(helios, "8") is None


# ---------------------------------------------------------------- the C reader

_number = st.one_of(
    st.integers(-10**18, 10**18).map(str),
    st.integers(0, 999).map(lambda i: f"+{i}"),
    st.floats(-1e12, 1e12, allow_nan=False).map(repr),
    st.just(""),
    st.just(" 42 "),
)
_text = st.text(st.characters(codec="ascii", exclude_characters=',"\r\n'), max_size=40)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_text, _number, _text, _number), min_size=1, max_size=60), st.booleans(),
       st.booleans())
def test_read_columns_reads_what_float_reads(tmp_path_factory: pytest.TempPathFactory,
                                             rows: list[tuple[str, str, str, str]], crlf: bool,
                                             last_newline: bool) -> None:
    """The wanted columns as Python's float reads them (NaN where empty), whatever the other columns
    hold; the eight-byte comma search never reads past a line."""
    nl = "\r\n" if crlf else "\n"
    body = nl.join(",".join(r) for r in rows) + (nl if last_newline else "")
    p = tmp_path_factory.mktemp("csv") / "t.csv"
    p.write_text(f"name,a,note,b{nl}{body}", newline="")
    got = k.read_columns(str(p), ("a", "b"))
    assert got is not None and got[0] == len(rows)
    for col, idx in ((got[1][0], 1), (got[1][1], 3)):
        want = [float(r[idx]) if r[idx].strip() else float("nan") for r in rows]
        assert np.array_equal(np.frombuffer(col), np.array(want), equal_nan=True)
        assert [np.signbit(x) for x in np.frombuffer(col)] == [np.signbit(x) for x in want]


def test_past_the_row_limit_it_allocates_nothing_and_the_full_command_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplan.sim import limits

    p = write(tmp_path / "g.csv", "submit_time,duration,gpus\n" + "".join(f"{i},60,1\n" for i in range(5)))
    assert k.read_columns(str(p), ("gpus",), 4) is None
    assert k.read_columns(str(p), ("gpus",), 5) is not None
    monkeypatch.setattr(limits, "MAX_TRACE_ROWS", 4)
    assert lean.simulate_text(p, "8") is None
    assert main(["simulate", str(p), "-r", "8", "-o", "json"]) == 2
    assert "more than 4 rows" in capsys.readouterr().err

"""Streaming aggregation equals the whole-frame computation; the compiled parser equals the careful one.

The reference below is the audit's original whole-frame formulas (every sample in memory, sorted by
GPU and time): the streamed, block-wise fold must give the same per-GPU numbers however the input is
cut into blocks, while keeping only a small state for a steady GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telemetry_truth import write_logs

from gpuplan.contracts.audit_document import to_json
from gpuplan.errors import TelemetryError
from gpuplan.telemetry import Collector, analyze, demand_curve, read_into
from gpuplan.telemetry import nvsmi as nvsmi_mod
from gpuplan.telemetry.stream import (
    BUSY_CUT,
    GAP_FACTOR,
    IDLE_CUT,
    MIN_GAP_S,
    NEAR_IDLE_CUT,
    StreamAccumulator,
)


def _reference(key: np.ndarray, t: np.ndarray, u32: np.ndarray, n_keys: int) -> dict[str, np.ndarray]:
    """The whole-frame computation: samples sorted by (key, t), no duplicates."""
    u = u32.astype(np.float64)
    n = len(key)
    same_next = np.r_[key[1:] == key[:-1], False]
    dt = np.r_[(t[1:] - t[:-1]) / 1000.0, 0.0]
    dt[~same_next] = np.nan
    median = np.full(n_keys, 60.0)
    for k in range(n_keys):
        d = dt[(key == k) & ~np.isnan(dt)]
        if len(d):
            median[k] = float(np.median(d))
    med_s = median[key]
    is_gap = same_next & (dt > np.maximum(GAP_FACTOR * med_s, MIN_GAP_S))
    w = np.where(same_next & ~is_gap, dt, med_s)

    def seg_sum(v: np.ndarray) -> np.ndarray:
        return np.bincount(key, weights=v, minlength=n_keys)

    out = {
        "samples": np.bincount(key, minlength=n_keys),
        "observed_s": seg_sum(w),
        "util_s": seg_sum(w * u),
        "idle_s": seg_sum(w * (u < IDLE_CUT)),
        "busy_s": seg_sum(w * (u >= BUSY_CUT)),
        "fed_s": seg_sum(w * u * (u >= BUSY_CUT)),
        "gap_s": seg_sum(np.where(is_gap, dt - med_s, 0.0)),
        "gaps": np.bincount(key[is_gap], minlength=n_keys),
        "interval_s": median,
    }
    # stretches
    new_seg = np.r_[True, (key[1:] != key[:-1]) | is_gap[:-1]]
    seg = np.cumsum(new_seg)
    state = np.where(u >= BUSY_CUT, 1, np.where(u < NEAR_IDLE_CUT, 0, 2))
    keep = state != 2
    k2, s2, w2, g2 = key[keep], state[keep], w[keep], seg[keep]
    switches = np.zeros(n_keys)
    med_run = np.full(n_keys, np.nan)
    lb = np.zeros(n_keys)
    li = np.zeros(n_keys)
    if len(k2):
        new_run = np.r_[True, (g2[1:] != g2[:-1]) | (s2[1:] != s2[:-1])]
        switch = np.r_[False, (g2[1:] == g2[:-1]) & (s2[1:] != s2[:-1])]
        run_id = np.cumsum(new_run) - 1
        run_len = np.bincount(run_id, weights=w2)
        rk, rs = k2[new_run], s2[new_run]
        switches = np.bincount(k2[switch], minlength=n_keys).astype(float)
        for k in range(n_keys):
            lens = run_len[rk == k]
            if len(lens):
                med_run[k] = float(np.median(lens)) / 60.0
                lb[k] = float(run_len[(rk == k) & (rs == 1)].max(initial=0.0)) / 3600.0
                li[k] = float(run_len[(rk == k) & (rs == 0)].max(initial=0.0)) / 3600.0
    out |= {"switches": switches, "median_run_min": med_run, "longest_busy_h": lb, "longest_idle_h": li}
    hours: dict[tuple[int, int], tuple[float, float, float]] = {}
    cols = zip(key.tolist(), (t // 3_600_000).tolist(), (w * u).tolist(), (w * (u >= IDLE_CUT)).tolist(),
               w.tolist(), strict=True)
    for k, h, wu, inuse, obs in cols:  # an interval counts in the hour in which it starts
        a, b, c = hours.get((k, h), (0.0, 0.0, 0.0))
        hours[(k, h)] = (a + wu, b + inuse, c + obs)
    out["hourly"] = hours  # type: ignore[assignment]
    del n
    return out


STEPS = st.one_of(
    st.just(1000),
    st.just(10_000),
    st.integers(59_000, 61_000),  # a slow, jittery logger: every interval > MIN_GAP_S
    st.integers(1, 40_000),
    st.integers(100_000, 5_000_000),  # gaps
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(STEPS, st.integers(0, 100)), min_size=1, max_size=120), min_size=1, max_size=3
    ),
    st.lists(st.integers(1, 50), min_size=1, max_size=8),
)
def test_streamed_fold_equals_whole_frame(gpus: list[list[tuple[int, int]]], cuts: list[int]) -> None:
    rows = []  # (t, key, u) in input order: by time, like a log
    for k, seq in enumerate(gpus):
        t = 1_700_000_000_000
        for step, pct in seq:
            t += step
            rows.append((t, k, pct))
    rows.sort()
    t = np.array([r[0] for r in rows], dtype=np.int64)
    key = np.array([r[1] for r in rows], dtype=np.int64)
    u = (np.array([r[2] for r in rows]) / 100.0).astype(np.float32)
    acc = StreamAccumulator()
    pos, i = 0, 0
    while pos < len(t):  # blocks of varying sizes
        step = cuts[i % len(cuts)]
        bad = acc.add(key[pos : pos + step], t[pos : pos + step], u[pos : pos + step])
        assert not bad.any()
        pos += step
        i += 1
    agg = acc.finalize(len(gpus))
    order = np.lexsort((t, key))
    ref = _reference(key[order], t[order], u[order], len(gpus))
    for name, want in ref.items():
        if name == "hourly":
            got = {
                (int(k), int(h)): v
                for k, h, *v in agg.hourly.select("key", "hour", "util_s", "inuse_s", "obs_s").iter_rows()
            }
            assert set(got) == set(want)
            for kh, v in want.items():
                assert got[kh] == pytest.approx(list(v), rel=1e-9, abs=1e-9)
            continue
        np.testing.assert_allclose(getattr(agg, name), want, rtol=1e-9, atol=1e-9, err_msg=name)


def test_clock_jumps_and_duplicates_flagged_across_blocks() -> None:
    acc = StreamAccumulator()
    k = np.zeros(3, dtype=np.int64)
    u = np.full(3, 0.5, dtype=np.float32)
    assert acc.add(k, np.array([1000, 2000, 3000]), u).tolist() == [0, 0, 0]
    assert acc.add(k, np.array([3000, 2500, 4000]), u).tolist() == [2, 1, 0]
    agg = acc.finalize(1)
    assert agg.samples.tolist() == [4]


def test_state_stays_small_for_a_steady_gpu() -> None:
    acc = StreamAccumulator()
    n = 400_000
    t = 1_700_000_000_000 + np.arange(n, dtype=np.int64) * 1000
    for a in range(0, n, 50_000):  # a busy GPU sampled every second, in 8 blocks
        acc.add(np.zeros(50_000, dtype=np.int64), t[a : a + 50_000], np.full(50_000, 0.9, dtype=np.float32))
    assert sum(len(r[0]) for r in acc.recs) < 20  # one stretch, cut at slice boundaries at most
    assert not acc.pend
    assert sum(p.height for p in acc.dt_parts) <= 1
    agg = acc.finalize(1)
    assert agg.observed_s[0] == pytest.approx(n)
    assert agg.longest_busy_h[0] == pytest.approx(n / 3600)


# ---- the compiled parser only takes blocks the careful path reads the same way


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory):
    return write_logs(tmp_path_factory.mktemp("logs"))


def _audit_json(files: list[Path], stream: bool = True) -> str:
    col = Collector(stream=stream)
    try:
        read_into(files, col)
    except TelemetryError as exc:  # a file with no usable row stops the audit: both paths alike
        return f"error: {exc}"
    s = col.finish()
    demand = [r.__dict__ for r in demand_curve(s, "util")] + [r.__dict__ for r in demand_curve(s, "busy")]
    return json.dumps([to_json(analyze(s)), demand], sort_keys=True)


def _careful_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvsmi_mod, "_compiled_layout", lambda h: None)


@pytest.mark.parametrize("block_bytes", [nvsmi_mod.BLOCK_BYTES, 4096])
def test_compiled_and_careful_paths_agree_on_truth_logs(
    logs, monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    original = nvsmi_mod.read_nvsmi
    used: list[int] = []
    commit = nvsmi_mod._commit

    def read(path, col, bb=block_bytes, src=None):  # type: ignore[no-untyped-def]
        return original(path, col, bb, src=src)

    def counting(*a, **k):  # type: ignore[no-untyped-def]
        used.append(len(a[6]))
        return commit(*a, **k)

    monkeypatch.setattr(nvsmi_mod, "read_nvsmi", read)
    monkeypatch.setattr(nvsmi_mod, "_commit", counting)
    fast = _audit_json(logs.files)
    assert sum(used) > 5000  # most of nodeA.csv's lines went through the compiled parser
    assert fast == _audit_json(logs.files, stream=False)  # whole-frame path: same answer
    _careful_only(monkeypatch)
    assert fast == _audit_json(logs.files)


VALUES = st.sampled_from(
    ["7", "7 %", " 99 %", "100 %", "0", "12.5 %", "101 %", "-1 %", "[N/A]", "7 MiB", "07 %", "1e1 %", "", "5%%"]
)
INDEXES = st.sampled_from(["0", "1", " 2", "01", "x", "", "3"])
TIMES = st.sampled_from(["", "2024/02/30 00:00:00.000", "2024/01/01 24:00:00.000", "2024-01-01 00:00:00.000"])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 30), INDEXES, VALUES, st.sampled_from(["5 MiB", "5 GiB", "5", " 6 MiB"])),
        min_size=1,
        max_size=40,
    ),
    st.lists(st.tuples(st.integers(0, 39), TIMES), max_size=2),
)
def test_compiled_parser_accepts_only_what_the_careful_path_reads_alike(
    tmp_path_factory: pytest.TempPathFactory, rows: list, odd_times: list
) -> None:
    lines = []
    for i, (dt, idx, util, mem) in enumerate(rows):
        lines.append(f"2024/01/01 00:{i // 2:02d}:{dt % 60:02d}.{i:03d}, {idx}, {util}, {mem}")
    for pos, ts in odd_times:
        if pos < len(lines):
            lines[pos] = ts + lines[pos][23:]
    p = tmp_path_factory.mktemp("odd") / "n1.csv"
    p.write_text("timestamp, index, utilization.gpu [%], memory.used [MiB]\n" + "\n".join(lines) + "\n")
    fast = _audit_json([p])
    with pytest.MonkeyPatch.context() as mp:
        _careful_only(mp)
        assert fast == _audit_json([p])


def test_gpu_in_two_files_reread_whole(tmp_path: Path) -> None:
    """Two logs of one host interleaved in time: the GPU's samples must be merged before the interval
    analysis, so the collector re-reads the streamed files and takes the whole-frame path."""
    for f in range(2):
        lines = ["timestamp, hostname, index, utilization.gpu [%]"]
        for i in range(300):
            ms = (2 * i + f) * 5000
            lines.append(f"2024/01/01 {ms // 3_600_000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}.000, "
                         f"hx, {i % 2}, {(i * 37 + f * 11) % 101} %")
        lines.insert(100, lines[99])  # a duplicate inside one file
        (tmp_path / f"h{f}.csv").write_text("\n".join(lines) + "\n")
    files = [tmp_path / "h0.csv", tmp_path / "h1.csv"]
    got = _audit_json(files)
    assert got == _audit_json(files, stream=False)
    res = json.loads(got)[0]
    assert res["input"]["bad_by_kind"] == {"duplicate": 2}  # one in each file
    assert [g["samples"] for g in res["gpus"]] == [300, 300]


def test_crlf_and_new_layout_in_a_later_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A logger restarted with other columns: the new header holds for every later block; CRLF lines
    read like LF lines."""
    head1 = "timestamp, index, utilization.gpu [%], memory.used [MiB]"
    head2 = "utilization.gpu [%], index, timestamp"
    lines = [head1] + [f"2024/01/01 00:{i:02d}:00.000, 0, {i} %, 5 MiB" for i in range(30)]
    lines += [head2] + [f"{i} %, 0, 2024/01/01 01:{i:02d}:00.000" for i in range(30)]
    p = tmp_path / "r.csv"
    p.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    col = Collector()
    nvsmi_mod.read_nvsmi(p, col, block_bytes=256)  # the second header is far from the first block
    res = analyze(col.finish())
    assert res.bad_rows == 0 and res.rows == 60
    assert res.gpus[0].samples == 60
    fast = _audit_json([p])
    _careful_only(monkeypatch)
    assert fast == _audit_json([p])


def test_the_telemetry_and_sim_modules_are_in_no_import_cycle() -> None:
    """Imports inside functions count (an import moved into a function still ties two modules), and
    `from gpuplan.telemetry import x` ties a module to the package's __init__."""
    import ast

    src = Path(__file__).resolve().parents[2] / "src"
    graph: dict[str, set[str]] = {}
    for pkg in ("telemetry", "sim"):
        for f in sorted((src / "gpuplan" / pkg).glob("*.py")):
            mod = ".".join(f.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
            deps = graph.setdefault(mod, set())
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    deps.add(node.module)
                    deps.update(f"{node.module}.{a.name}" for a in node.names)
                elif isinstance(node, ast.Import):
                    deps.update(a.name for a in node.names)
    graph = {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}

    def reaches(a: str, b: str) -> bool:
        seen, todo = set(), [a]
        while todo:
            m = todo.pop()
            for d in graph[m] - seen:
                if d == b:
                    return True
                seen.add(d)
                todo.append(d)
        return False

    cycles = sorted((m, d) for m, deps in graph.items() for d in deps if reaches(d, m))
    assert cycles == []

"""Replay semantics: hand-computed tiny traces, invariants (hypothesis), reference == compiled.

Every comparison runs the C loop itself (`run_kernel` with `_ckernel.replay`) and the plain reference,
never `replay` against itself: where the extension is missing `replay` is the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.errors import UsageError
from gpuplan.sim.replay import (
    Jobs,
    ReplayResult,
    kernel_name,
    parse_reserved,
    replay,
    replay_reference,
    run_kernel,
    simulate,
    summarize,
    summary_reference,
)
from gpuplan.sim.traces import Trace, read_trace

INF = math.inf


def jobs_of(rows: list[tuple[float, float, float]]) -> Jobs:
    s, d, g = (np.array(x, dtype=float) for x in zip(*rows, strict=True))
    return Jobs.from_trace(Trace(submit=s, duration=d, gpus=g))


def compiled(jobs: Jobs, r: int, wait: float, queueing: str, packing: str, gpn: int) -> ReplayResult:
    """The C loop, run for real (skips where `pip install` could not build it)."""
    ck = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    return run_kernel(ck.replay, jobs, r, wait, queueing, packing, gpn)


def both(jobs: Jobs, r: int, wait: float, queueing: str = "strict-fifo", packing: str = "gpu", gpn: int = 8):
    a = compiled(jobs, r, wait, queueing, packing, gpn)
    b = replay_reference(jobs, r, wait, queueing, packing, gpn)
    assert np.array_equal(a.start, b.start), (a.start, b.start)
    assert np.array_equal(a.burst, b.burst), (a.burst, b.burst)
    return a.start.tolist(), a.burst.tolist()


# ------------------------------------------------------------------ hand-computed rules


def test_ties_follow_file_order() -> None:
    # both at t=0: the first row takes the whole pool, the second waits for it
    assert both(jobs_of([(0, 10, 4), (0, 5, 2)]), 4, INF) == ([0, 10], [False, False])
    # same jobs, other file order: the 2-GPU job starts, the 4-GPU one waits 5 s
    assert both(jobs_of([(0, 5, 2), (0, 10, 4)]), 4, INF) == ([0, 5], [False, False])


def test_deadline_at_the_instant_of_a_completion_starts_the_job() -> None:
    # B's deadline is t=10, when A completes: completions come first, then the start pass
    assert both(jobs_of([(0, 10, 4), (0, 5, 2)]), 4, 10.0) == ([0, 10], [False, False])
    # one second less patience: B bursts at its deadline t=9
    assert both(jobs_of([(0, 10, 4), (0, 5, 2)]), 4, 9.0) == ([0, 9], [False, True])


def test_arrival_at_the_instant_of_a_completion_starts_with_zero_wait() -> None:
    assert both(jobs_of([(0, 10, 4), (10, 1, 4)]), 4, 0.0) == ([0, 10], [False, False])


def test_wait_zero_bursts_what_does_not_fit_at_once() -> None:
    assert both(jobs_of([(0, 10, 3), (1, 5, 2), (2, 5, 1)]), 4, 0.0) == ([0, 1, 2], [False, True, False])


def test_head_blocks_under_strict_fifo() -> None:
    rows = [(0, 10, 3), (1, 5, 2), (2, 5, 1)]
    # C (1 GPU) would fit at t=2 but waits behind B; at t=10 both start
    assert both(jobs_of(rows), 4, INF, "strict-fifo") == ([0, 10, 10], [False, False, False])


def test_best_effort_overtakes_the_blocked_head() -> None:
    rows = [(0, 10, 3), (1, 5, 2), (2, 5, 1)]
    assert both(jobs_of(rows), 4, INF, "best-effort-fifo") == ([0, 10, 2], [False, False, False])


def test_deadline_burst_unblocks_the_queue_in_the_same_instant() -> None:
    # A holds 3 of 4 GPUs until 100; B (2) blocks C (1) under strict FIFO; B bursts at t=5,
    # and the second start pass of that instant starts C at t=5
    rows = [(0, 100, 3), (0, 5, 2), (1, 5, 1)]
    assert both(jobs_of(rows), 4, 5.0, "strict-fifo") == ([0, 5, 5], [False, True, False])


def test_deadline_same_instant_as_a_new_arrival() -> None:
    # B bursts at t=10 (deadline); C arrives at 10, cannot fit and bursts at its own deadline t=20
    rows = [(0, 100, 4), (0, 5, 1), (10, 5, 1)]
    assert both(jobs_of(rows), 4, 10.0) == ([0, 10, 20], [False, True, True])


def test_job_larger_than_the_pool_bursts_on_arrival_even_with_infinite_wait() -> None:
    assert both(jobs_of([(0, 10, 5), (3, 10, 4)]), 4, INF) == ([0, 3], [True, False])


def test_fractional_jobs_share_the_pool() -> None:
    start, burst = both(jobs_of([(0, 10, 0.5)] * 8 + [(0, 10, 0.46)]), 4, 0.0)
    assert start == [0.0] * 9 and burst == [False] * 8 + [True]


def test_node_packing_multi_node_jobs_need_whole_free_nodes() -> None:
    rows = [(0, 10, 1), (1, 5, 12)]
    # pooled: 15 GPUs free, the 12-GPU job starts at once
    assert both(jobs_of(rows), 16, INF, packing="gpu") == ([0, 1], [False, False])
    # nodes of 8: it needs 2 entirely free nodes, node 0 is busy until t=10
    assert both(jobs_of(rows), 16, INF, packing="node", gpn=8) == ([0, 10], [False, False])
    # more nodes than the pool has: bursts on arrival
    assert both(jobs_of([(0, 5, 17)]), 16, INF, packing="node") == ([0], [True])


def test_node_packing_first_fit_and_best_effort() -> None:
    # A and B (6 GPUs) land on nodes 0 and 1, 2 free on each; C needs a whole node; D (2) fits on node 0
    rows = [(0, 10, 6), (0, 10, 6), (1, 5, 8), (2, 5, 2)]
    assert both(jobs_of(rows), 16, INF, "strict-fifo", "node") == ([0, 0, 10, 10], [False] * 4)
    assert both(jobs_of(rows), 16, INF, "best-effort-fifo", "node") == ([0, 0, 10, 2], [False] * 4)
    # fragmentation: 3 jobs of 5 on 2 nodes of 8 - the third waits although 6 GPUs are free in all
    assert both(jobs_of([(0, 10, 5), (0, 10, 5), (0, 10, 5)]), 16, INF, packing="node")[0] == [0, 0, 10]
    assert both(jobs_of([(0, 10, 5), (0, 10, 5), (0, 10, 5)]), 16, INF, packing="gpu")[0] == [0, 0, 0]


def test_node_packing_needs_whole_nodes() -> None:
    with pytest.raises(UsageError, match="multiple of 8"):
        replay(jobs_of([(0, 1, 1)]), 12, 0.0, packing="node", gpus_per_node=8)


def test_summary_numbers_by_hand() -> None:
    jobs = jobs_of([(0, 3600, 4), (0, 1800, 2)])  # B would wait 1 h for A; with a 30 min wait it bursts
    res = replay(jobs, 4, 1800.0)
    out = summarize(jobs, res, 4)
    assert out["burst_jobs"] == 1
    assert out["gpu_hours"] == {"total": 5.0, "reserved": 4.0, "burst": 1.0}
    assert out["wait_hours"]["max"] == 0.5 and out["wait_hours"]["mean"] == 0.25
    # span: first submit 0 to last end 1 h (A) -> 4 GPU-h over 4 x 1 h
    assert out["reserved_utilization"] == 1.0
    stretched = summarize(jobs, res, 4, slowdown=1.5)
    assert stretched["gpu_hours"]["burst"] == 1.5 and stretched["gpu_hours"]["total"] == 5.5


def test_parse_reserved() -> None:
    assert parse_reserved("16") == [16]
    assert parse_reserved("0,8,16") == [0, 8, 16]
    assert parse_reserved("0:32:8") == [0, 8, 16, 24, 32]
    assert parse_reserved("4, 0:16:8") == [4, 0, 8, 16]
    for bad in ("x", "8:0:2", "0:8", "0:8:0", "-4"):
        with pytest.raises(UsageError):
            parse_reserved(bad)


# ------------------------------------------------------------------ invariants

GPUS = st.sampled_from([0.25, 0.5, 1.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0])
ROWS = st.lists(st.tuples(st.integers(0, 30), st.integers(1, 12), GPUS), min_size=1, max_size=30)


def _capacity_ok(jobs: Jobs, start: np.ndarray, burst: np.ndarray, r: int) -> bool:
    run = ~burst
    duration, units = np.asarray(jobs.duration), np.asarray(jobs.units)
    for t in start[run]:
        live = run & (start <= t) & (start + duration > t)
        if units[live].sum() > r * 1000:
            return False
    return True


@settings(max_examples=120, deadline=None)
@given(
    rows=ROWS,
    nodes=st.integers(0, 3),
    wait=st.sampled_from([0.0, 1.0, 5.0, INF]),
    queueing=st.sampled_from(["strict-fifo", "best-effort-fifo"]),
    packing=st.sampled_from(["gpu", "node"]),
)
def test_invariants(rows, nodes, wait, queueing, packing) -> None:  # type: ignore[no-untyped-def]
    jobs = jobs_of([(float(a), float(b), g) for a, b, g in rows])
    r = nodes * 8
    a = compiled(jobs, r, wait, queueing, packing, 8)
    b = replay_reference(jobs, r, wait, queueing, packing, 8)
    assert np.array_equal(a.start, b.start) and np.array_equal(a.burst, b.burst)
    out = summarize(jobs, a, r)
    gh = out["gpu_hours"]
    assert math.isclose(gh["reserved"] + gh["burst"], gh["total"], rel_tol=1e-12, abs_tol=1e-12)
    gpus, units = np.asarray(jobs.gpus), np.asarray(jobs.units)
    start, burst = np.asarray(a.start), np.asarray(a.burst)
    assert math.isclose(gh["total"], float(np.sum(gpus * np.asarray(jobs.duration))) / 3600, rel_tol=1e-12)
    waits = start - np.asarray(jobs.submit)
    assert (waits >= 0).all()
    if wait != INF:
        assert (waits <= wait).all()  # a job starts or bursts by its deadline
    if r == 0:
        assert burst.all()
    if wait == INF and (units <= r * 1000).all() and (packing == "gpu" or (gpus <= r).all()):
        assert not burst.any()
    assert 0.0 <= out["reserved_utilization"] <= 1.0 + 1e-12
    assert _capacity_ok(jobs, start, burst, r)


# ------------------------------------------------------------------ the real trace


@pytest.fixture(scope="module")
def openb(shared_dir):  # type: ignore[no-untyped-def]
    return Jobs.from_trace(read_trace(shared_dir / "traces/alibaba-gpu-v2023/openb_pod_list_default.csv"))


@pytest.mark.parametrize(
    ("r", "wait", "queueing", "packing"),
    [
        (8, 0.0, "strict-fifo", "gpu"),
        (16, 7200.0, "strict-fifo", "gpu"),
        (8, INF, "strict-fifo", "gpu"),
        (16, 7200.0, "best-effort-fifo", "gpu"),
        (8, 21600.0, "best-effort-fifo", "gpu"),
        (32, INF, "best-effort-fifo", "gpu"),
        (16, 3600.0, "strict-fifo", "node"),
        (16, 3600.0, "best-effort-fifo", "node"),
        (64, INF, "best-effort-fifo", "node"),
    ],
)
def test_reference_and_compiled_agree_on_the_shared_trace(openb, r, wait, queueing, packing) -> None:  # type: ignore[no-untyped-def]
    a = compiled(openb, r, wait, queueing, packing, 8)
    b = replay_reference(openb, r, wait, queueing, packing, 8)
    assert np.array_equal(a.start, b.start)
    assert np.array_equal(a.burst, b.burst)
    assert 0 < sum(a.burst) < len(openb) or wait == INF


DEEP = st.lists(  # many jobs, long runs, multi-node sizes: deep queues that stay queued for long
    st.tuples(st.integers(0, 400), st.integers(1, 200), st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0, 16.0])),
    min_size=1,
    max_size=400,
)


@settings(max_examples=60, deadline=None)
@given(
    rows=DEEP,
    nodes=st.integers(1, 4),
    wait=st.sampled_from([0.0, 30.0, 500.0, INF]),
    queueing=st.sampled_from(["strict-fifo", "best-effort-fifo"]),
    packing=st.sampled_from(["gpu", "node"]),
)
def test_compiled_equals_reference_on_deep_queues(rows, nodes, wait, queueing, packing) -> None:  # type: ignore[no-untyped-def]
    jobs = jobs_of([(float(a), float(b), g) for a, b, g in rows])
    a = compiled(jobs, nodes * 8, wait, queueing, packing, 8)
    b = replay_reference(jobs, nodes * 8, wait, queueing, packing, 8)
    assert np.array_equal(a.start, b.start)
    assert np.array_equal(a.burst, b.burst)


def test_the_installed_package_runs_the_c_loop() -> None:
    """`pip install` builds the extension where a compiler and Python's headers exist (as in CI)."""
    import shutil
    import sysconfig
    from pathlib import Path

    if shutil.which("cc") is None or not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        pytest.skip("no C compiler or Python headers here: the package falls back to the reference")
    assert kernel_name() == "c"


def test_without_the_extension_simulate_runs_the_reference() -> None:
    """A machine without a compiler: the import fails, `replay` is the plain reference, same answers."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['gpuplan.sim._ckernel'] = None\n"
        "import numpy as np\n"
        "from gpuplan.sim.replay import Jobs, replay, kernel_name\n"
        "from gpuplan.sim.traces import Trace\n"
        "rng = np.random.default_rng(3)\n"
        "n = 400\n"
        "tr = Trace(submit=np.sort(rng.integers(0, 2000, n)).astype(float), duration=rng.integers(1, 300, n)"
        ".astype(float), gpus=rng.choice([0.5, 1.0, 2.0, 8.0, 12.0], n))\n"
        "a = replay(Jobs.from_trace(tr), 16, 60.0, 'best-effort-fifo', 'node', 8)\n"
        "print(kernel_name(), sum(a.burst), a.start.tobytes().hex())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    name, bursts, starts = out.stdout.split()
    assert name == "reference"
    assert 0 < int(bursts) < 400
    rng = np.random.default_rng(3)  # the same jobs here, through the C loop
    n = 400
    tr = Trace(submit=np.sort(rng.integers(0, 2000, n)).astype(float), duration=rng.integers(1, 300, n).astype(float),
               gpus=rng.choice([0.5, 1.0, 2.0, 8.0, 12.0], n))
    c = compiled(Jobs.from_trace(tr), 16, 60.0, "best-effort-fifo", "node", 8)
    assert c.start.tobytes().hex() == starts
    assert sum(c.burst) == int(bursts)


def test_sweep_on_the_shared_trace(openb) -> None:  # type: ignore[no-untyped-def]
    out = simulate(openb, [0, 16, 64, 512], INF)
    assert out[0]["burst_jobs"] == out[0]["jobs"] == len(openb)
    assert out[-1]["burst_jobs"] == 0  # 512 >= the largest job (8 GPUs): nothing bursts
    # more reserved GPUs: never more burst GPU-hours
    bursts = [o["gpu_hours"]["burst"] for o in out]
    assert bursts == sorted(bursts, reverse=True)
    assert math.isclose(out[1]["gpu_hours"]["total"], 51470.674, rel_tol=1e-6)


# ------------------------------------------------------------------ the summary: C == numpy, to the bit


def compiled_summary(jobs: Jobs, res: ReplayResult, slowdown: float) -> tuple:  # type: ignore[type-arg]
    ck = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    return ck.summary(jobs.submit, jobs.duration, jobs.gpus, res.start, res.burst, slowdown)


@pytest.mark.parametrize(
    ("r", "wait", "queueing", "slowdown"),
    [(0, 0.0, "strict-fifo", 1.0), (8, 0.0, "strict-fifo", 1.1), (16, 7200.0, "strict-fifo", 1.0),
     (16, 7200.0, "best-effort-fifo", 1.37), (32, INF, "strict-fifo", 1.0), (512, INF, "best-effort-fifo", 1.2)],
)
def test_compiled_summary_equals_numpy_on_the_shared_trace(openb, r, wait, queueing, slowdown) -> None:  # type: ignore[no-untyped-def]
    """GPU-hours (numpy's pairwise sums over 6,203 jobs), waits (mean, the linear percentiles, max), spans."""
    res = replay(openb, r, wait, queueing)
    got, want = compiled_summary(openb, res, slowdown), summary_reference(openb, res, slowdown)
    assert got == want
    assert isinstance(got[-1], int) and got[-1] == sum(res.burst)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 50), st.floats(0.001, 1e6), GPUS), min_size=1, max_size=300),
    nodes=st.integers(0, 3),
    wait=st.sampled_from([0.0, 7.0, 1e4, INF]),
    slowdown=st.sampled_from([1.0, 1.1, 1.37, 3.0]),
)
def test_compiled_summary_equals_numpy(rows, nodes, wait, slowdown) -> None:  # type: ignore[no-untyped-def]
    """Small and odd sizes (the pairwise sum's blocks of 8 and 128, percentiles between and on values,
    many equal waits)."""
    jobs = jobs_of([(float(a), b, g) for a, b, g in rows])
    res = replay(jobs, nodes * 8, wait, "best-effort-fifo")
    assert compiled_summary(jobs, res, slowdown) == summary_reference(jobs, res, slowdown)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 127, 128, 129, 1000, 8193, 262_147])
def test_compiled_sums_and_percentiles_equal_numpy_at_every_size(n: int) -> None:
    """Random magnitudes over 12 orders: any other order of summation than numpy's shows in the last bits."""
    rng = np.random.default_rng(n)
    submit = np.sort(rng.random(n) * 1e6)
    jobs = jobs_of(list(zip(submit, 10 ** rng.uniform(-3, 9, n), rng.choice([0.25, 1.0, 8.0], n), strict=True)))
    start = np.asarray(jobs.submit) + 10 ** rng.uniform(-2, 5, n) * (rng.random(n) < 0.7)
    burst = rng.random(n) < 0.4
    res = ReplayResult(start=memoryview(start).cast("B").cast("d"), burst=memoryview(burst).cast("B").cast("?"))
    assert compiled_summary(jobs, res, 1.3) == summary_reference(jobs, res, 1.3)

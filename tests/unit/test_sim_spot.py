"""The replay's spot tier (issue 26, `gpuplan.sim.spot`): hand-computed runs with stated reclaim
delays, the C loop == the plain reference (hypothesis), the seeded draws against the rate they stand
for, and S = 0 replaying exactly as without a spot tier."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.sim.replay import Jobs, ReplayResult, replay_reference, run_kernel, simulate, summarize
from gpuplan.sim.spot import MAX_SPOT_RUNS, SpotParams, SpotPool, reclaim_delays, spot_pool
from gpuplan.sim.traces import Trace

H = 3600.0
INF = math.inf


def jobs_of(rows: list[tuple[float, float, float]]) -> Jobs:
    s, d, g = (np.array(x, dtype=float) for x in zip(*rows, strict=True))
    return Jobs.from_trace(Trace(submit=s, duration=d, gpus=g))


def pool(s: int, delays: list[list[float]], *, tau_h: float = 1.0, r_h: float = 0.5, sigma: float = 1.0,
         od: float = 1.2, requeue: bool = False) -> SpotPool:
    d = np.array(delays, dtype=np.float64)
    return SpotPool(gpus=s, delay=np.ascontiguousarray(d), attempts=d.shape[1], checkpoint_s=tau_h * H,
                    restart_s=r_h * H, slowdown=sigma, on_demand_slowdown=od, requeue=requeue)


def both(jobs: Jobs, r: int, wait: float, sp: SpotPool, queueing: str = "strict-fifo", packing: str = "gpu",
         gpn: int = 8) -> ReplayResult:
    """The C loop and the reference on the same draws; they must agree to the bit."""
    ck = pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    a = run_kernel(ck.replay, jobs, r, wait, queueing, packing, gpn, sp)
    b = replay_reference(jobs, r, wait, queueing, packing, gpn, sp)
    assert np.array_equal(a.start, b.start) and np.array_equal(a.burst, b.burst)
    assert a.spot is not None and b.spot is not None
    for f in ("tier", "spot_s", "left_s", "reclaims"):
        assert np.array_equal(getattr(a.spot, f), getattr(b.spot, f)), (f, getattr(a.spot, f), getattr(b.spot, f))
    assert np.array_equal(a.spot.end, b.spot.end, equal_nan=True)
    return a


# ------------------------------------------------------------------ by hand


def test_a_reclaim_keeps_the_checkpoints_and_falls_back_to_on_demand() -> None:
    # 8 GPUs for 10 h on 8 spot cards, reclaimed after 3.7 h; checkpoints every hour, restart 0.5 h,
    # on demand runs 1.2 x slower
    jobs = jobs_of([(0, 10 * H, 8)])
    res = both(jobs, 0, 0.0, pool(8, [[3.7 * H]]))
    sr = res.spot
    assert sr is not None
    assert sr.tier.tolist() == [2] and sr.reclaims.tolist() == [1]
    assert sr.spot_s.tolist() == [3.7 * H]
    assert sr.left_s.tolist() == [7 * H]  # 3 checkpoints kept: 10 - 3 h left
    assert sr.end.tolist() == [3.7 * H + (0.5 * H + 7 * H * 1.2)]  # 13.6 h: 3.7 + 0.5 + 8.4
    out = summarize(jobs, res, 0, slowdown=1.2, spot=pool(8, [[3.7 * H]]))
    assert out["gpu_hours"]["spot"] == pytest.approx(8 * 3.7)  # 29.6, billed at the spot price
    assert out["gpu_hours"]["burst"] == pytest.approx(8 * (0.5 + 7 * 1.2))  # 71.2 on demand
    assert out["lost_gpu_hours"] == pytest.approx(8 * (0.7 + 0.5))  # 9.6: 0.7 h past a checkpoint + a restart
    assert out["preemptions"] == 1 and out["spot_jobs"] == 0 and out["on_demand_jobs"] == 1
    assert out["gpu_hours"]["total"] == pytest.approx(29.6 + 71.2)


def test_requeue_runs_spot_again_after_a_restart() -> None:
    # reclaimed at 3.7 h (keeps 3 h), then 0.2 h into the 0.5 h restart (keeps nothing), then finishes
    jobs = jobs_of([(0, 10 * H, 8)])
    sp = pool(8, [[3.7 * H, 0.2 * H, 1e12, 1e12]], requeue=True)
    sr = both(jobs, 0, 0.0, sp).spot
    assert sr is not None
    assert sr.tier.tolist() == [1] and sr.reclaims.tolist() == [2]
    assert sr.spot_s.tolist() == [3.7 * H + 0.2 * H + (0.5 * H + 7 * H)]  # 11.4 h on spot
    assert sr.end.tolist() == [3.7 * H + 0.2 * H + 0.5 * H + 7 * H]
    out = summarize(jobs, both(jobs, 0, 0.0, sp), 0, slowdown=1.2, spot=sp)
    assert out["lost_gpu_hours"] == pytest.approx(8 * (0.7 + 0.2 + 0.5))  # 11.2
    assert out["gpu_hours"]["burst"] == 0.0 and out["spot_jobs"] == 1


def test_no_checkpoints_lose_the_whole_run_and_runs_are_capped() -> None:
    jobs = jobs_of([(0, 10 * H, 8)])
    # every spot run reclaimed after 9 h: without checkpoints nothing is kept; after MAX runs: on demand
    sp = pool(8, [[9 * H] * MAX_SPOT_RUNS], tau_h=INF, requeue=True)
    sr = both(jobs, 0, 0.0, sp).spot
    assert sr is not None
    assert sr.reclaims.tolist() == [MAX_SPOT_RUNS] and sr.tier.tolist() == [2]
    assert sr.left_s.tolist() == [10 * H]
    out = summarize(jobs, both(jobs, 0, 0.0, sp), 0, slowdown=1.2, spot=sp)
    assert out["lost_gpu_hours"] == pytest.approx(8 * (9 * MAX_SPOT_RUNS + 0.5))


def test_a_full_spot_tier_sends_work_on_demand_and_frees_at_the_end() -> None:
    # two 8-GPU jobs at t=0 on 8 spot cards: the second goes on demand at once; a third at 11 h finds
    # the cards free again (the first ended at 10 h)
    jobs = jobs_of([(0, 10 * H, 8), (0, 5 * H, 8), (11 * H, 1 * H, 8)])
    sr = both(jobs, 0, 0.0, pool(8, [[1e12], [1e12], [1e12]])).spot
    assert sr is not None
    assert sr.tier.tolist() == [1, 2, 1] and sr.reclaims.tolist() == [0, 0, 0]
    assert sr.end.tolist() == [10 * H, 5 * H * 1.2, 12 * H]


def test_the_reserved_pool_comes_first_and_waits_are_unchanged() -> None:
    jobs = jobs_of([(0, 10 * H, 4), (0, 10 * H, 4), (0, 2 * H, 4)])
    res = both(jobs, 4, 1 * H, pool(4, [[1e12]] * 3), queueing="best-effort-fifo")
    plain = replay_reference(jobs, 4, 1 * H, "best-effort-fifo")
    assert np.array_equal(res.start, plain.start) and np.array_equal(res.burst, plain.burst)
    assert res.spot is not None and res.spot.tier.tolist() == [0, 1, 2]


# ------------------------------------------------------------------ C == reference


@st.composite
def cases(draw: st.DrawFn) -> tuple:
    n = draw(st.integers(1, 30))
    rows = sorted(
        (float(draw(st.integers(0, 40)) * 600), float(draw(st.integers(1, 30)) * 600),
         float(draw(st.sampled_from([0.5, 1, 2, 4, 8, 16]))))
        for _ in range(n)
    )
    return (rows, draw(st.sampled_from([0, 8, 16])), draw(st.sampled_from([1, 4, 8, 24])),
            draw(st.sampled_from(["on-demand", "requeue"])), draw(st.sampled_from([0.25, 1.0, INF])),
            draw(st.sampled_from([0.0, 0.3, 2.0, 20.0])), draw(st.sampled_from([0.0, H, INF])),
            draw(st.sampled_from(["strict-fifo", "best-effort-fifo"])), draw(st.sampled_from(["gpu", "node"])),
            draw(st.integers(0, 2**32)))


@settings(max_examples=150, deadline=None)
@given(cases())
def test_compiled_equals_reference_with_a_spot_tier(case: tuple) -> None:
    rows, r, s, fallback, tau, rate, wait, queueing, packing, seed = case
    jobs = jobs_of(rows)
    params = SpotParams(rate_per_node_hour=rate, gpus_per_node=8, checkpoint_hours=tau, restart_hours=0.1,
                        slowdown=1.1, on_demand_slowdown=1.25, fallback=fallback, seed=seed)
    res = both(jobs, r, wait, spot_pool(s, np.asarray(jobs.gpus), params), queueing, packing, 8)
    sr = res.spot
    assert sr is not None
    # every job ends somewhere, once; spot GPU-hours cover the work done there
    burst = np.asarray(res.burst)
    assert set(sr.tier[burst].tolist()) <= {1, 2} and not sr.tier[~burst].any()
    assert bool(np.all(sr.spot_s >= (np.asarray(jobs.duration) - sr.left_s) * 1.1 - 1e-6))
    assert bool(np.all(sr.reclaims <= (MAX_SPOT_RUNS if fallback == "requeue" else 1)))


# ------------------------------------------------------------------ the draws, S = 0


def test_reclaims_follow_the_rate_per_node_hour() -> None:
    # 4,000 one-node jobs of 10 h at 0.05 per node-hour: each is reclaimed with p = 1 - e^-0.5 = 0.3935
    # (binomial sd 31); two-node jobs at twice the rate, p = 1 - e^-1 = 0.6321 (sd 30)
    n = 4000
    for gpus, p in ((8.0, 1 - math.exp(-0.5)), (16.0, 1 - math.exp(-1.0))):
        jobs = jobs_of([(0.0, 10 * H, gpus)] * n)
        params = SpotParams(rate_per_node_hour=0.05, gpus_per_node=8, checkpoint_hours=INF, restart_hours=0.0,
                            slowdown=1.0, on_demand_slowdown=1.0, seed=11)
        sr = replay_reference(jobs, 0, 0.0, spot=spot_pool(int(gpus) * n, np.asarray(jobs.gpus), params)).spot
        assert sr is not None
        count = int(sr.reclaims.sum())
        assert abs(count - n * p) < 5 * math.sqrt(n * p * (1 - p)), (count, n * p)


def test_draws_depend_on_the_seed_only() -> None:
    g = np.array([1.0, 8.0, 16.0])
    params = SpotParams(rate_per_node_hour=0.1, gpus_per_node=8, checkpoint_hours=1.0, restart_hours=0.1,
                        slowdown=1.0, on_demand_slowdown=1.0, seed=5)
    a, b = reclaim_delays(g, params, 2), reclaim_delays(g, params, 2)
    assert np.array_equal(a, b)
    c = reclaim_delays(g, SpotParams(**{**params.__dict__, "seed": 6}), 2)
    assert not np.array_equal(a, c)
    zero = reclaim_delays(g, SpotParams(**{**params.__dict__, "rate_per_node_hour": 0.0}), 1)
    assert bool(np.all(np.isinf(zero)))


def test_spot_zero_replays_exactly_as_without_it() -> None:
    rng = np.random.default_rng(3)
    rows = sorted((float(rng.integers(0, 100)) * 60, float(rng.integers(1, 300)) * 60, float(rng.integers(1, 9)))
                  for _ in range(200))
    jobs = jobs_of(rows)
    params = SpotParams(rate_per_node_hour=1.0, gpus_per_node=8, checkpoint_hours=1.0, restart_hours=0.1,
                        slowdown=1.0, on_demand_slowdown=1.2, seed=1)
    assert simulate(jobs, [0, 8, 16], 0.5) == simulate(jobs, [0, 8, 16], 0.5, spot_gpus=0, spot=params)


def test_replayed_lost_work_agrees_with_the_lost_work_model() -> None:
    # 3,000 one-node jobs of 10 h with requeue (so a reclaimed job stays on spot, as the model assumes;
    # more than 4 reclaims of one job has probability ~2e-3 here) against models.preemption's E[T]:
    # lam = 0.05, tau = 0.5 h, r = 10 min: E[T] = 20 x (e^0.025 - 1)(20 + 1/6) = 10.2105 h per GPU
    from gpuplan.models.preemption import lost_work

    n, w = 3000, 10.0
    jobs = jobs_of([(0.0, w * H, 8.0)] * n)
    params = SpotParams(rate_per_node_hour=0.05, gpus_per_node=8, checkpoint_hours=0.5, restart_hours=1 / 6,
                        slowdown=1.0, on_demand_slowdown=1.0, fallback="requeue", seed=2)
    sp = spot_pool(8 * n, np.asarray(jobs.gpus), params)
    out = summarize(jobs, replay_reference(jobs, 0, 0.0, spot=sp), 0, spot=sp)
    model = lost_work(w, 8, rate_per_node_hour=0.05, gpus_per_node=8, checkpoint_hours=0.5, restart_hours=1 / 6)
    assert model.lost_hours == pytest.approx(20 * math.expm1(0.025) * (20 + 1 / 6) - 10, rel=1e-9)
    per_job_lost = out["lost_gpu_hours"] / (8 * n)
    # the replay's mean over 3,000 jobs: the model's 0.2105 h within 10% (sd of the mean about 3%)
    assert per_job_lost == pytest.approx(model.lost_hours, rel=0.10), (per_job_lost, model.lost_hours)
    assert out["preemptions"] / n == pytest.approx(model.preemptions, rel=0.10)

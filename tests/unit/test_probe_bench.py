"""Benchmark maths, orchestration with a recorded backend, and the torch backend on a fake torch."""

from __future__ import annotations

import pytest
from _probe_fakes import FakeBackend, FakeTorch
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.inputs.catalog import load_catalog
from gpuplan.probe.bench import (
    TorchBackend,
    allreduce_busbw_gbs,
    bandwidth_gbs,
    copy_bandwidth_tbs,
    matmul_tflops,
    pcie_gbs,
    ratio,
    run_bench,
)

MATCH = load_catalog().match_gpu


def test_formulas_by_hand() -> None:
    # 1 GB all-reduce in 10 ms on 8 ranks: algbw 100 GB/s, busbw 100 * 2 * 7 / 8 = 175 GB/s
    assert allreduce_busbw_gbs(10**9, 0.01, 8) == pytest.approx(175.0)
    assert allreduce_busbw_gbs(10**9, 0.01, 1) == 0.0  # one rank moves nothing over the bus
    assert copy_bandwidth_tbs(2 * 10**12, 1.0) == pytest.approx(4.0)  # read + write
    assert matmul_tflops(8192, 2 * 8192**3 / 700e12) == pytest.approx(700.0)
    assert bandwidth_gbs(5 * 10**9, 0.1) == pytest.approx(50.0)
    assert pcie_gbs(5, 16) == pytest.approx(63.008)
    assert pcie_gbs(4, 16) == pytest.approx(31.504)
    assert pcie_gbs(None, 16) is None and pcie_gbs(9, 16) is None
    assert ratio(4.08, 4.8) == 0.85 and ratio(1.0, None) is None and ratio(None, 2.0) is None
    with pytest.raises(ValueError):
        allreduce_busbw_gbs(1, 1.0, 0)


@given(st.integers(2, 1024), st.floats(1e-6, 10.0), st.integers(1, 2**34))
def test_busbw_between_algbw_and_twice_algbw(n: int, seconds: float, nbytes: int) -> None:
    alg = bandwidth_gbs(nbytes, seconds)
    bus = allreduce_busbw_gbs(nbytes, seconds, n)
    assert alg <= bus * (1 + 1e-12) and bus < 2 * alg


@given(st.floats(1e-6, 1.0), st.floats(1.0, 10.0))
def test_slower_is_never_faster(seconds: float, factor: float) -> None:
    assert matmul_tflops(4096, seconds * factor) <= matmul_tflops(4096, seconds)
    assert copy_bandwidth_tbs(2**30, seconds * factor) <= copy_bandwidth_tbs(2**30, seconds)


def test_run_bench_h200_node_with_ratios() -> None:
    backend = FakeBackend()
    res = run_bench(backend, MATCH, {"gen": 5, "width": 16}, iters=10)
    assert res["ran"] is True and res["catalog_id"] == "h200-sxm" and res["gpus"] == 8
    r = res["results"]
    assert r["hbm_copy"]["value"] == pytest.approx(4.2) and r["hbm_copy"]["ratio"] == pytest.approx(0.875)
    assert r["matmul_bf16"]["ratio"] == pytest.approx(750 / 989, abs=1e-3)
    assert r["h2d_pinned"]["spec"] == pytest.approx(63.008) and r["h2d_pinned"]["ratio"] == pytest.approx(
        55 / 63.008, abs=1e-3)
    assert r["p2p"]["spec"] == 450 and r["allreduce_busbw"]["value"] == pytest.approx(470.0)
    assert r["allreduce_busbw"]["ranks"] == 8 and len(r["matmul_bf16"]["samples_s"]) == 10
    assert ("allreduce", (1024**3, 8, 10)) in backend.calls


def test_run_bench_single_gpu_unknown_model_and_no_gpu() -> None:
    res = run_bench(FakeBackend(count=1, name="Mystery Accelerator"), MATCH, None, iters=5)
    assert res["results"]["p2p"] is None and res["results"]["allreduce_busbw"] is None
    assert res["catalog_id"] is None and res["results"]["hbm_copy"]["ratio"] is None
    assert res["results"]["h2d_pinned"]["spec"] is None
    none = run_bench(FakeBackend(count=0), MATCH)
    assert none["ran"] is False and "no GPU" in none["reason"]


def test_median_is_the_figure_and_best_is_kept() -> None:
    res = run_bench(FakeBackend(count=1, spread=1.0), MATCH, iters=5)
    mm = res["results"]["matmul_bf16"]
    assert mm["best"] == pytest.approx(750.0)
    assert mm["value"] == pytest.approx(500.0)  # median time is 1.5x the best


def test_torch_backend_on_fake_torch() -> None:
    torch = FakeTorch(["NVIDIA H200", "NVIDIA H200"], elapsed_ms=2.0)
    spawned: list[tuple[int, int, int]] = []

    def spawn(nbytes: int, world: int, iters: int) -> list[float]:
        spawned.append((nbytes, world, iters))
        return [0.004] * iters

    be = TorchBackend(torch, spawn=spawn)
    assert be.device_count() == 2 and be.device_name(1) == "NVIDIA H200"
    assert be.d2d_copy(1024, 4) == [0.002] * 4
    assert be.matmul(64, 3) == [0.002] * 3
    assert be.h2d(1024, 2) == [0.002] * 2
    assert len(be.p2p(0, 1, 1024, 3)) == 3
    assert be.allreduce(2**20, 2, 5) == [0.004] * 5 and spawned == [(2**20, 2, 5)]
    kinds = [e[0] for e in torch.log]
    assert kinds.count("mm") == 3 + 3  # 3 warm-up + 3 timed
    assert any(e[0] == "empty" and e[2].get("pin_memory") for e in torch.log)
    res = run_bench(be, MATCH, None, copy_bytes=2 * 10**9, iters=4)
    assert res["results"]["hbm_copy"]["value"] == pytest.approx(2 * 2e9 / 0.002 / 1e12)


def test_torch_backend_without_cuda() -> None:
    assert TorchBackend(FakeTorch([])).device_count() == 0

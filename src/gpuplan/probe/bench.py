"""Micro-benchmarks (`probe --bench`): HBM copy, dense BF16 matmul, pinned host-to-device copy, and with
more than one GPU, P2P copy and NCCL all-reduce bus bandwidth; each against the catalog's spec.

The maths is pure and separate from the timing: a backend (`TorchBackend` on a real GPU, a fake in
tests) returns per-iteration times in seconds; `run_bench` turns them into figures and ratios.

Definitions (the figure is the median over iterations; `samples_s` keeps every iteration):
- HBM copy: a device-to-device copy of S bytes reads S and writes S, so bandwidth = 2 S / t
  (STREAM/BabelStream convention); spec = catalog `hbm_tbs`.
- BF16 matmul: C = A B with n x n BF16 matrices, 2 n^3 / t FLOP/s; spec = catalog `bf16_tflops` (dense).
- Host-to-device (pinned): S / t; spec = the PCIe link's theoretical rate from NVML's generation and
  width (per lane 0.25, 0.5, 0.985, 1.969, 3.938, 7.563 GB/s for gen 1-6), when known.
- P2P (GPU 0 -> GPU 1): S / t; spec = half the catalog's bidirectional `gpu_gpu_gbs`.
- All-reduce: algbw = S / t, busbw = algbw * 2 (n - 1) / n (nccl-tests doc/PERFORMANCE.md); spec =
  half of `gpu_gpu_gbs` (per-direction NVLink bandwidth, what a ring can use). NVLink SHARP (NVLS)
  can push busbw slightly above it, so ratios a little over 1 are possible.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any, Protocol

PCIE_LANE_GBS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


class BenchBackend(Protocol):
    def device_count(self) -> int: ...
    def device_name(self, index: int) -> str: ...
    def d2d_copy(self, nbytes: int, iters: int) -> list[float]: ...
    def matmul(self, n: int, iters: int) -> list[float]: ...
    def h2d(self, nbytes: int, iters: int) -> list[float]: ...
    def p2p(self, src: int, dst: int, nbytes: int, iters: int) -> list[float]: ...
    def allreduce(self, nbytes: int, world: int, iters: int) -> list[float]: ...


# --- pure maths ---------------------------------------------------------------------------------

def copy_bandwidth_tbs(nbytes: int, seconds: float) -> float:
    """Device-to-device copy: S read + S written."""
    return 2 * nbytes / seconds / 1e12


def matmul_tflops(n: int, seconds: float) -> float:
    return 2 * n**3 / seconds / 1e12


def bandwidth_gbs(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9


def allreduce_busbw_gbs(nbytes: int, seconds: float, n: int) -> float:
    """nccl-tests: busbw = algbw * 2(n-1)/n, algbw = S / t."""
    if n < 1:
        raise ValueError("an all-reduce needs at least one rank")
    return bandwidth_gbs(nbytes, seconds) * 2 * (n - 1) / n


def pcie_gbs(gen: int | None, width: int | None) -> float | None:
    if not gen or not width or gen not in PCIE_LANE_GBS:
        return None
    return PCIE_LANE_GBS[gen] * width


def ratio(measured: float | None, spec: float | None) -> float | None:
    if measured is None or not spec:
        return None
    return round(measured / spec, 3)


def _figure(samples: list[float], to_value: Callable[[float], float], unit: str,
            spec: float | None, **extra: Any) -> dict[str, Any]:
    median = statistics.median(samples)
    value = to_value(median)
    return {"value": round(value, 3), "unit": unit, "spec": spec, "ratio": ratio(value, spec),
            "best": round(to_value(min(samples)), 3), "samples_s": [round(s, 9) for s in samples], **extra}


# --- orchestration --------------------------------------------------------------------------------

def run_bench(
    backend: BenchBackend,
    match_gpu: Callable[[str], Any] | None = None,
    pcie: dict[str, Any] | None = None,
    *,
    copy_bytes: int = 2 * 1024**3,
    matmul_n: int = 8192,
    h2d_bytes: int = 1024**3,
    p2p_bytes: int = 1024**3,
    allreduce_bytes: int = 1024**3,
    iters: int = 20,
) -> dict[str, Any]:
    """The bench section of the probe report; `pcie` is GPU 0's NVML pcie dict (gen/width) when known."""
    count = backend.device_count()
    if count < 1:
        return {"ran": False, "reason": "no GPU visible to torch", "device": None, "results": {}}
    name = backend.device_name(0)
    spec = match_gpu(name) if match_gpu else None
    hbm = spec.hbm_tbs if spec else None
    tflops = spec.bf16_tflops if spec else None
    link = (spec.gpu_gpu_gbs / 2) if spec and spec.gpu_gpu_gbs else None
    pcie = pcie or {}
    results: dict[str, Any] = {
        "hbm_copy": _figure(backend.d2d_copy(copy_bytes, iters),
                            lambda s: copy_bandwidth_tbs(copy_bytes, s), "TB/s", hbm, bytes=copy_bytes),
        "matmul_bf16": _figure(backend.matmul(matmul_n, iters),
                               lambda s: matmul_tflops(matmul_n, s), "TFLOPS", tflops, n=matmul_n),
        "h2d_pinned": _figure(backend.h2d(h2d_bytes, iters), lambda s: bandwidth_gbs(h2d_bytes, s), "GB/s",
                              pcie_gbs(pcie.get("gen"), pcie.get("width")), bytes=h2d_bytes),
        "p2p": None,
        "allreduce_busbw": None,
    }
    if count > 1:
        results["p2p"] = _figure(backend.p2p(0, 1, p2p_bytes, iters),
                                 lambda s: bandwidth_gbs(p2p_bytes, s), "GB/s", link, bytes=p2p_bytes)
        results["allreduce_busbw"] = _figure(
            backend.allreduce(allreduce_bytes, count, iters),
            lambda s: allreduce_busbw_gbs(allreduce_bytes, s, count), "GB/s", link,
            bytes=allreduce_bytes, ranks=count)
    return {"ran": True, "reason": None, "device": name, "catalog_id": spec.id if spec else None,
            "gpus": count, "results": results}


# --- the real backend -----------------------------------------------------------------------------

class TorchBackend:
    """Times operations with torch on CUDA (events for one device, wall clock around synchronisation
    for two). `spawn(nbytes, world, iters) -> [seconds]` runs the NCCL all-reduce in worker processes."""

    def __init__(self, torch: Any, spawn: Callable[[int, int, int], list[float]] | None = None) -> None:
        self.torch = torch
        self._spawn = spawn or spawn_allreduce

    def device_count(self) -> int:
        cuda = self.torch.cuda
        return int(cuda.device_count()) if cuda.is_available() else 0

    def device_name(self, index: int) -> str:
        return str(self.torch.cuda.get_device_name(index))

    def _timed(self, op: Callable[[], Any], iters: int, warmup: int = 3) -> list[float]:
        cuda = self.torch.cuda
        for _ in range(warmup):
            op()
        cuda.synchronize()
        out: list[float] = []
        for _ in range(iters):
            start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
            start.record()
            op()
            end.record()
            end.synchronize()
            out.append(start.elapsed_time(end) / 1000.0)
        return out

    def d2d_copy(self, nbytes: int, iters: int) -> list[float]:
        t = self.torch
        a = t.empty(nbytes, dtype=t.uint8, device="cuda:0")
        b = t.empty(nbytes, dtype=t.uint8, device="cuda:0")
        return self._timed(lambda: b.copy_(a), iters)

    def matmul(self, n: int, iters: int) -> list[float]:
        t = self.torch
        a = t.randn(n, n, dtype=t.bfloat16, device="cuda:0")
        b = t.randn(n, n, dtype=t.bfloat16, device="cuda:0")
        c = t.empty(n, n, dtype=t.bfloat16, device="cuda:0")
        return self._timed(lambda: t.mm(a, b, out=c), iters)

    def h2d(self, nbytes: int, iters: int) -> list[float]:
        t = self.torch
        host = t.empty(nbytes, dtype=t.uint8, pin_memory=True)
        dev = t.empty(nbytes, dtype=t.uint8, device="cuda:0")
        return self._timed(lambda: dev.copy_(host, non_blocking=True), iters)

    def p2p(self, src: int, dst: int, nbytes: int, iters: int) -> list[float]:
        import time

        t = self.torch
        a = t.empty(nbytes, dtype=t.uint8, device=f"cuda:{src}")
        b = t.empty(nbytes, dtype=t.uint8, device=f"cuda:{dst}")
        out: list[float] = []
        for i in range(iters + 3):
            t.cuda.synchronize(src)
            t.cuda.synchronize(dst)
            t0 = time.perf_counter()
            b.copy_(a)
            t.cuda.synchronize(src)
            t.cuda.synchronize(dst)
            if i >= 3:
                out.append(time.perf_counter() - t0)
        return out

    def allreduce(self, nbytes: int, world: int, iters: int) -> list[float]:
        return self._spawn(nbytes, world, iters)


def _allreduce_worker(rank: int, world: int, nbytes: int, iters: int, port: int, queue: Any) -> None:
    import os
    import time

    import torch
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    try:
        x = torch.ones(nbytes // 4, dtype=torch.float32, device=f"cuda:{rank}")
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        samples: list[float] = []
        for _ in range(iters):
            dist.barrier()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            dist.all_reduce(x)
            torch.cuda.synchronize()
            samples.append(time.perf_counter() - t0)
        if rank == 0:
            queue.put(samples)
    finally:
        dist.destroy_process_group()


def spawn_allreduce(nbytes: int, world: int, iters: int) -> list[float]:
    """One process per GPU (NCCL's model), all-reduce of `nbytes` float32, times seen by rank 0."""
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.start_processes(_allreduce_worker, args=(world, nbytes, iters, port, queue), nprocs=world,
                       join=True, start_method="spawn")
    return list(queue.get())


def load_torch() -> Any | None:
    try:
        import torch
    except ImportError:
        return None
    return torch
